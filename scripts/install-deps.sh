#!/usr/bin/env bash
# Installs everything iowatch needs to build, test and run, from Debian's
# packages only. Idempotent: packages already present are not reinstalled, and
# apt-get update runs only when something is missing.
#   scripts/install-deps.sh [PACKAGE...]        build, run and test (scripts/test.sh)
#   scripts/install-deps.sh --run [PACKAGE...]  build and run only (scripts/run.sh): no
#                                               reference tools, sanitizer runtimes or browser
set -euo pipefail

run_only=false
if [ "${1:-}" = "--run" ]; then
  run_only=true
  shift
fi

# What building the tree and running the daemon need.
packages=(
  build-essential cmake pkg-config git
  # ninja schedules the build; ccache serves scripts/build.sh a rebuild of unchanged files (in a
  # checkout at the same path) from its cache (run.sh and test.sh build without it)
  ninja-build ccache
  libfmt-dev libcli11-dev libspdlog-dev libyaml-cpp-dev libboost-dev libsqlite3-dev
  nlohmann-json3-dev
  # every user-supplied regular expression is RE2: linear-time matching, no recursion
  libre2-dev
  prometheus-cpp-dev liburing-dev zlib1g-dev
  # --push-gateway's PUT (daemon/metrics/push)
  libcurl4-openssl-dev
  # the libaio probe engine (fio's most used one)
  libaio-dev
  # the block-layer BPF collector: clang's BPF target, libbpf, bpftool for the skeleton
  clang-19 libbpf-dev bpftool
  # the linker: it lays out the daemon's code in one piece (cmake/text_order.cmake)
  lld-19
  libssl-dev libcrypt-dev
  # the tree configures its tests and benchmarks (GoogleTest, Google Benchmark, python3) whoever builds it
  libgtest-dev libgmock-dev libbenchmark-dev python3
  # device health: smartctl's JSON (collectors/smart), tested live on this host's disks
  smartmontools
)

# What the test suite needs besides.
test_packages=(
  # libbpf-tools' biolatency is the yardstick of the BPF collector's cost (tests/bench/bpf_overhead.py)
  libbpf-tools
  # clang's sanitizer runtimes: scripts/test.sh builds the sanitizer trees with clang-19
  libclang-rt-19-dev
  # reference tools the tests compare against, and what the test harness uses
  sysstat procps fio util-linux faketime openssl prometheus prometheus-node-exporter
  # one-shot results pushed by `iowatch probe`/`sweep --push-gateway` land in the real gateway
  prometheus-pushgateway
  # the alert path is tested through the real Alertmanager (tests/e2e/alert_path.py)
  prometheus-alertmanager
  # the fleet rules on a distributed store: victoria-metrics, vmagent and vmalert
  # (tests/e2e/fleet_vm.py) and the simulated fleet (tests/bench/fleet)
  victoria-metrics
  # deploy/ is tested with the tools that consume it: systemd-analyze, strace (the unit's
  # system call filter against the daemon's calls), cpack + dpkg-shlibdeps (the .deb)
  systemd strace dpkg-dev
  # the filesystem collector is tested on XFS and btrfs as on ext4 (tests/e2e/serve_filesystems.py)
  xfsprogs btrfs-progs
  # the status page is tested in a real browser
  chromium
)

$run_only || packages+=("${test_packages[@]}")
# Extra packages a script needs beyond these (scripts/fuzz.sh: clang-19).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
