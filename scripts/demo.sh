#!/usr/bin/env bash
# The main job on brokers it starts itself: sets the machine up, then runs the `smoke` preset as
# a same-run A/B — RabbitMQ 4.0.5 (candidate) against 3.10.8 (reference), both started from the
# offline images, trials interleaved pair by pair — and prints the verdict table with each
# delta's CI, then where the HTML report is. Extra arguments go to `rabbitmq-perf-gate run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-machine.sh
out=rabbitmq-perf-gate-report
status=0
node_modules/.bin/node dist/cli.js run \
  --image rabbitmq-perf-gate/rabbitmq:4.0.5 --broker-label "RabbitMQ 4.0.5" \
  --baseline-image rabbitmq-perf-gate/rabbitmq:3.10.8 \
  --scenarios smoke --out "$out" --html "$out/report.html" "$@" || status=$?
echo
echo "HTML report: $PWD/$out/report.html (report.json and summary.md beside it)"
# 1 = a regression beyond tolerance: a verdict the demo shows, not a failure of the demo.
[ "$status" -le 1 ] || exit "$status"
