#!/usr/bin/env bash
# clang-tidy-19 with the checked-in .clang-tidy over every production source
# file (not tests, fuzz targets or benchmarks), file by file (not the unity
# batches), in parallel. Fails on any finding. Usage: scripts/tidy.sh [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh clang-19 clang-tidy-19
dir=build-tidy
# A configured tree (no build) gives compile_commands.json and the generated
# headers; clang-19 because clang-tidy parses with clang's flags.
CC=clang-19 CXX=clang++-19 cmake -S . -B "$dir" -G Ninja -DIOWATCH_UNITY_BUILD=OFF \
  -DIOWATCH_BENCHMARKS=OFF -DIOWATCH_E2E=OFF -DIOWATCH_UNIT_TESTS=OFF > /dev/null
if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'common/*.cc' 'collectors/*.cc' 'config/*.cc' 'probes/*.cc' \
    'daemon/*.cc')
fi
run-clang-tidy-19 -quiet -p "$dir" -j "$(nproc)" "${files[@]}"
