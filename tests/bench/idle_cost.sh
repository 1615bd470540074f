#!/usr/bin/env bash
# Idle cost of `iowatch serve`: CPU share of one core over DURATION seconds
# (default 300) of sampling every second on this machine, with no scrapes.
# Usage: tests/bench/idle_cost.sh build/iowatch [DURATION]
set -euo pipefail
bin=$1
duration=${2:-300}
state=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$state"' EXIT
"$bin" serve --web.listen-address=127.0.0.1:0 --state.dir="$state" --log.level=warn &
pid=$!
sleep 2
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks)
sleep "$duration"
t1=$(ticks)
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v d="$duration" \
  'BEGIN { printf "iowatch serve idle: %.3f CPU seconds in %d s = %.4f %% of one core\n", (b-a)/hz, d, 100*(b-a)/hz/d }'
