#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine: dependencies; clang-tidy;
# the normal tree (the -O2 binary against the reference tools, end to end); the
# AddressSanitizer tree (every unit test, and the fuzz targets replaying their
# seeds and a few seconds of mutations, under ASan and UBSan); the
# ThreadSanitizer tree (the unit tests that run threads).
set -euo pipefail
cd "$(dirname "$0")/.."
# The unit tests run in the sanitizer trees, where they catch more; the normal
# tree builds the binary, the e2e tests' helpers and the benchmarks (its unit
# test binaries cost a tenth of CI's time and found nothing the ASan tree
# did not). All trees are unity builds: a file that forgets an #include its
# batch happens to provide fails only file by file (-DIOWATCH_UNITY_BUILD=OFF).
# The sanitizer trees are built with clang-19, the product with GCC 12: at -O0
# with the sanitizers clang takes half to a third of GCC's CPU time
# (daemon/http's Beast batch 41 s against 71 s, daemon_scheduling_test's 16 s
# against 50 s), and its warnings are a second compiler's opinion. They link
# with clang's lld: the ASan tree's 54 test binaries relink in 22 s against
# GNU ld's 52 (the product keeps the system linker).
sanitizer_compiler=(-DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
# Without ccache, as scripts/run.sh: CI starts from a fresh clone with an empty cache, where
# ccache only adds a preprocessor run and a store to every unit, 21 % of the ASan tree's
# compile with the precompiled headers (two test binaries: 79 s against 66); a rebuild in the
# same tree is Ninja's.
export CCACHE_DISABLE=1
build_sanitizer_trees() {
  scripts/build.sh build-asan -- "${sanitizer_compiler[@]}" -DIOWATCH_SANITIZE=ON \
    -DIOWATCH_FUZZ_REPLAY=ON -DIOWATCH_BENCHMARKS=OFF -DIOWATCH_E2E=OFF
  scripts/build.sh build-tsan --target threaded_tests -- "${sanitizer_compiler[@]}" \
    -DIOWATCH_TSAN=ON -DIOWATCH_BENCHMARKS=OFF -DIOWATCH_E2E=OFF
}
# What the script runs in the background beside the normal tree's tests (below).
if [ "${1:-}" = --sanitizer-trees ]; then
  build_sanitizer_trees
  exit
fi
scripts/install-deps.sh
# clang-tidy on every production file whose inputs changed since the last clean
# run over the whole tree (scripts/tidy.sh; the record is checked in): the
# same verdict as a whole-tree run, in a minute instead of twenty.
scripts/tidy.sh --changed
# -g1 (line tables and functions, no variables) instead of -g: the same code,
# 20-40 % less compile time (daemon/http's batch: 55 s against 69 s, and 44
# against 74 on a busier day); scripts/run.sh builds the same tree with the
# same flags. A binary for gdb comes from scripts/build.sh alone.
scripts/build.sh build -- -DIOWATCH_UNIT_TESTS=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"

# The sanitizer trees (2.9 GB, most of it the ASan tree's test binaries) go to tmpfs when it
# has room: a new tree becomes a link into /dev/shm (a link whose target a reboot removed is
# made again; an existing directory stays where it is).
sanitizer_trees=$(realpath -m "/dev/shm/iowatch-$(id -u)-$(pwd | md5sum | cut -c1-12)")
place_tree() {
  local tree=$1
  if [ -L "$tree" ]; then
    mkdir -p "$(readlink "$tree")"
  elif [ ! -e "$tree" ] &&
    [ "$(df --output=avail -k /dev/shm 2>/dev/null | tail -1)" -ge $((8 * 1024 * 1024)) ]; then
    mkdir -p "$sanitizer_trees/$tree"
    ln -s "$sanitizer_trees/$tree" "$tree"
  fi
}
on_tmpfs() { [ "$(stat -f -L -c %T "$1" 2>/dev/null)" = tmpfs ]; }
place_tree build-asan
place_tree build-tsan
# The normal tree's tests mostly wait (for samples, probes, Prometheus' and Alertmanager's
# intervals): at -j2 the two cores were 35 % busy. With IOWATCH_BUILD_BESIDE_TESTS=1 the
# sanitizer trees compile meanwhile: at the idle scheduling class (a test's process takes the
# core back as it wakes), one job fewer than the CPUs, on tmpfs; what is left when the tests end
# is stopped and finished with every CPU (Ninja resumes it). Not the default: on this 2-vCPU VM
# the hypervisor takes both vCPUs back in stalls of tens of ms while both are busy, and one run
# in three failed a timing check (docs/benchmarks.md, "What CI costs"). Else they build first.
# Twice as many tests at a time took 611-647 s against 735; the tests that time against a
# reference tool or need the machine alone still run alone (RUN_SERIAL), and the tests that
# mount do it in a mount namespace of their own (docs/benchmarks.md, "What CI costs").
status=0
background=
if [ "${IOWATCH_BUILD_BESIDE_TESTS:-0}" = 1 ] && on_tmpfs build-asan && on_tmpfs build-tsan; then
  build_log=$(mktemp)
  # A session of its own (setsid), so that the build's process group can be stopped: when the
  # tests end, and when this script ends any other way (an interrupt, a failed step).
  IOWATCH_BUILD_JOBS=$(($(nproc) > 1 ? $(nproc) - 1 : 1)) \
    setsid chrt --idle 0 scripts/test.sh --sanitizer-trees > "$build_log" 2>&1 &
  background=$!
  trap 'kill -TERM -- "-$background" 2> /dev/null; rm -f "$build_log"' EXIT
else
  build_sanitizer_trees
fi
(cd build && ctest --output-on-failure -j"$((2 * $(nproc)))") || status=$?
if [ -n "$background" ]; then
  kill -TERM -- "-$background" 2> /dev/null || true
  wait "$background" || true
  background=
  cat "$build_log"
  build_sanitizer_trees  # the rest, if any; a failed build fails here
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
(cd build-asan && ctest --output-on-failure -j"$(nproc)") || status=$?
(cd build-tsan && ctest --output-on-failure -j"$(nproc)") || status=$?
exit "$status"
