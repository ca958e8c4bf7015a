#!/usr/bin/env bash
# The whole test suite on a fresh or warm machine: sets the machine up, then runs every test
# (unit, real broker, real containers, bundled action against the local GitHub server).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-machine.sh
npm run -s typecheck
npm test
