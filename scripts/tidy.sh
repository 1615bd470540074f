#!/usr/bin/env bash
# clang-tidy-19 with the checked-in .clang-tidy over the production sources
# (not tests, fuzz targets or benchmarks), file by file (not the unity
# batches), in parallel. Fails on any finding.
#   scripts/tidy.sh            every file (about 20 minutes on 2 cores); when
#                              clean, records each file's inputs in
#                              scripts/tidy-verified.txt (commit it)
#   scripts/tidy.sh --changed  only the files whose inputs differ from that
#                              record (CI); a clean run updates their entries
#   scripts/tidy.sh FILE...    these files
# A file's inputs are its preprocessed text with every header, .clang-tidy and
# clang-tidy's version (scripts/tidy_inputs.py): a file whose inputs match a
# clean run's record gets the same, empty, verdict without running again.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh clang-19 clang-tidy-19
dir=build-tidy
record=scripts/tidy-verified.txt
# A configured tree (no build) gives compile_commands.json and the generated
# headers; clang-19 because clang-tidy parses with clang's flags.
CC=clang-19 CXX=clang++-19 cmake -S . -B "$dir" -G Ninja -DIOWATCH_UNITY_BUILD=OFF \
  -DIOWATCH_BENCHMARKS=OFF -DIOWATCH_E2E=OFF -DIOWATCH_UNIT_TESTS=OFF > /dev/null
# The one generated header a production file includes: the BPF skeleton.
ninja -C "$dir" iowatch_bpf_skeleton > /dev/null
mapfile -t all < <(git ls-files 'common/*.cc' 'collectors/*.cc' 'advice/*.cc' 'trace/*.cc' 'config/*.cc' \
  'probes/*.cc' 'daemon/*.cc' 'cli/*.cc')
mode=files
if (($# == 0)); then
  mode=all
  files=("${all[@]}")
elif [ "$1" = "--changed" ]; then
  mode=changed
fi

inputs=$(mktemp)
trap 'rm -f "$inputs"' EXIT
if [ "$mode" = files ]; then
  files=("$@")
else
  scripts/tidy_inputs.py "$dir" "${all[@]}" > "$inputs"
  if [ "$mode" = changed ]; then
    touch "$record"
    mapfile -t files < <(sort "$record" | comm -13 - <(sort "$inputs") | cut -d' ' -f2)
    echo "tidy: ${#files[@]} of ${#all[@]} files changed since the clean run in $record"
  fi
fi
if ((${#files[@]})); then
  run-clang-tidy-19 -quiet -p "$dir" -j "$(nproc)" "${files[@]}"
fi
# Clean: record what was verified (the whole tree, or the changed files' new entries).
if [ "$mode" = all ]; then
  cp "$inputs" "$record"
elif [ "$mode" = changed ] && ((${#files[@]})); then
  # Every file of the tree: the lines already recorded, and the checked files' new ones.
  awk -v checked="$(printf '%s\n' "${files[@]}")" '
    BEGIN { n = split(checked, list, "\n"); for (i = 1; i <= n; i++) now[list[i]] = 1 }
    FILENAME == ARGV[1] { old[$0] = 1; next }
    ($0 in old) || ($2 in now)' "$record" "$inputs" > "$record.new"
  mv "$record.new" "$record"
fi
