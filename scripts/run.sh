#!/usr/bin/env bash
# Installs dependencies, builds, and runs the daemon in the foreground on the
# bundled default config: state under the checkout (./state), listening on
# 127.0.0.1:9860 (http://127.0.0.1:9860/metrics). Extra arguments go to
# `iowatch serve` (e.g. --web.listen-address=127.0.0.1:9999).
set -euo pipefail
cd "$(dirname "$0")/.."
# What building and running need, not the test suite's reference tools.
scripts/install-deps.sh --run
# The flags scripts/test.sh builds this tree with (-g1: line tables and
# function names for a backtrace, no variables): a third less compile time
# than -g, and no rebuild when the two scripts take turns on the tree.
# Without ccache: on a new machine its cache is empty, and filling it costs a
# preprocessor run per unit (about 8 % of a unit's compile) for hits only
# another checkout would get; this tree's own rebuilds are Ninja's.
CCACHE_DISABLE=1 scripts/build.sh build --target iowatch -- \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
exec build/iowatch serve --config.file=config/iowatch.yaml --state.dir=state "$@"
