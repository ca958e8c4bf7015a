#!/usr/bin/env bash
# The main job on a default broker it starts itself: sets the machine up, then runs the `smoke`
# preset against a RabbitMQ container started from the offline image, and prints the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-machine.sh
node_modules/.bin/node dist/cli.js run --image rabbitmq-perf-gate/rabbitmq:3.10.8 --scenarios smoke --repetitions 3 "$@"
