#!/usr/bin/env bash
# Configures and builds one build tree with Ninja (ccache is used when
# installed: CMakeLists.txt), as many jobs as CPUs (IOWATCH_BUILD_JOBS=N: N).
# Usage: scripts/build.sh [DIR] [--target T]... [-- cmake args...]
#   scripts/build.sh                       # build/, everything
#   scripts/build.sh build --target iowatch
#   scripts/build.sh build-asan -- -DIOWATCH_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
targets=()
while (($#)) && [ "$1" != "--" ]; do
  targets+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
generator=()
# An existing tree keeps its generator; a new one gets Ninja.
[ -f "$dir/CMakeCache.txt" ] || generator=(-G Ninja)
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > /dev/null
cmake --build "$dir" -j"${IOWATCH_BUILD_JOBS:-$(nproc)}" "${targets[@]}"
