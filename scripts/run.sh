#!/usr/bin/env bash
# Installs dependencies, builds, and runs iowatch in the foreground.
# Until the daemon exists this is the live extended iostat report every second.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
exec build/iowatch iostat -x 1 "$@"
