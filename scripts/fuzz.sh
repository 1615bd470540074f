#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang-19 with ASan and UBSan) and
# runs each for SECONDS (default 10), JOBS targets at a time (default 1).
# Usage: scripts/fuzz.sh [SECONDS] [BUILD_DIR] [JOBS]
#   IOWATCH_FUZZ_TARGETS="fuzz_config fuzz_baseline_json" scripts/fuzz.sh 600: only these
# The corpus of each target grows in BUILD_DIR/fuzz-corpus/<target>, seeded
# from tests/fuzz/seeds and from the fixtures and reference outputs; a crash
# leaves its input in BUILD_DIR/fuzz-artifacts/ and makes the script fail
# (turn it into a regression test in tests/unit). Prints one line per target:
# executions per second, corpus size, coverage (edges) and features.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
dir=${2:-build-fuzz}
jobs=${3:-1}
scripts/install-deps.sh clang-19 libclang-rt-19-dev
export CC=clang-19 CXX=clang++-19
all_targets=(fuzz_diskstats fuzz_vmstat fuzz_uptime fuzz_sysfs fuzz_config fuzz_job_options
  fuzz_job_file fuzz_probe_wire
  fuzz_baseline_json fuzz_store_codec fuzz_http_headers fuzz_http_request)
read -r -a targets <<< "${IOWATCH_FUZZ_TARGETS:-${all_targets[*]}}"
build_targets=()
for t in "${targets[@]}"; do build_targets+=(--target "$t"); done
scripts/build.sh "$dir" "${build_targets[@]}" -- -DIOWATCH_SANITIZE=ON -DIOWATCH_FUZZ=ON \
  -DIOWATCH_BENCHMARKS=OFF -DIOWATCH_E2E=OFF > /dev/null

# Seeds: hand-made ones, the fixtures and reference files.
seed() {  # seed TARGET FILE...
  local corpus="$dir/fuzz-corpus/$1"
  shift
  mkdir -p "$corpus"
  for f in "$@"; do
    if [ -f "$f" ]; then cp -f "$f" "$corpus/seed-$(sha1sum < "$f" | cut -c1-16)"; fi
  done
}
for t in "${targets[@]}"; do
  mapfile -t seeds < "$dir/tests/fuzz/$t.seeds"  # tests/fuzz/CMakeLists.txt lists them
  seed "$t" "${seeds[@]}"
done

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$dir/fuzz-artifacts"
rm -f "$dir"/fuzz-artifacts/*.status  # a target killed before it wrote one must not pass
failed=0
run_one() {  # run_one TARGET: fuzzes it, leaves its log; fails on a finding
  local t=$1 dict=() status=0
  case $t in
    fuzz_config) dict=(-dict=tests/fuzz/config.dict) ;;
    fuzz_baseline_json) dict=(-dict=tests/fuzz/json.dict) ;;
  esac
  "$dir/tests/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 -max_len=65536 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$dir/fuzz-artifacts/$t-" "${dict[@]}" \
    "$dir/fuzz-corpus/$t" > "$dir/fuzz-artifacts/$t.log" 2>&1 || status=$?
  echo "$status" > "$dir/fuzz-artifacts/$t.status"
}
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_one "$t" &
done
wait
printf '%-20s %10s %8s %8s %8s\n' target execs/s corpus edges features
for t in "${targets[@]}"; do
  log="$dir/fuzz-artifacts/$t.log"
  if [ "$(cat "$dir/fuzz-artifacts/$t.status")" != 0 ]; then
    echo "$t: FAILED, see $log and $dir/fuzz-artifacts/" >&2
    tail -30 "$log" >&2
    failed=1
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  edges=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
  features=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
  corpus=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<< "$last")
  printf '%-20s %10d %8s %8s %8s\n' "$t" "$((runs / seconds))" "$corpus" "$edges" "$features"
done
exit "$failed"
