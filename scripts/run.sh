#!/usr/bin/env bash
# Installs dependencies, builds, and runs the daemon in the foreground on the
# bundled default config: state under the checkout (./state), listening on
# 127.0.0.1:9860 (http://127.0.0.1:9860/metrics). Extra arguments go to
# `iowatch serve` (e.g. --web.listen-address=127.0.0.1:9999).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build --target iowatch
exec build/iowatch serve --config.file=config/iowatch.yaml --state.dir=state "$@"
