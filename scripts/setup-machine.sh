#!/usr/bin/env bash
# Prepares a fresh machine for rabbitmq-perf-gate's demo and test suite, idempotently: npm
# dependencies, the local RabbitMQ service with its management and Prometheus plugins, the Docker
# engine (host networking only), Debian's Chromium (for the HTML report test) and the offline
# RabbitMQ images. Everything already in place is reused, so a warm machine takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_loglevel=error npm_config_fund=false npm_config_audit=false

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ! -x node_modules/.bin/vitest ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm dependencies"
  npm ci --no-audit --no-fund
fi

apt_install() {
  log "installing $*"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# The local broker (the RabbitMQ service tests use as the "existing broker").
if ! command -v rabbitmq-server >/dev/null; then apt_install rabbitmq-server; fi
if ! as_root rabbitmqctl -q status >/dev/null 2>&1; then
  log "starting the local RabbitMQ service"
  as_root rabbitmq-server -detached
  as_root rabbitmqctl -q await_startup --timeout 120 >/dev/null
fi
as_root rabbitmq-plugins -q enable rabbitmq_management rabbitmq_prometheus >/dev/null
for _ in $(seq 1 60); do
  curl -fsS -u guest:guest http://127.0.0.1:15672/api/overview >/dev/null 2>&1 && break
  sleep 1
done

# Debian's Chromium, for the HTML report's browser test (playwright-core drives /usr/bin/chromium).
if [ ! -x /usr/bin/chromium ]; then apt_install chromium; fi

# Docker engine, host networking only (no bridge, no iptables).
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then apt_install docker.io debootstrap; fi
if ! docker info >/dev/null 2>&1; then
  log "starting dockerd"
  (as_root nohup dockerd --bridge=none --iptables=false >/tmp/rabbitmq-perf-gate-dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /tmp/rabbitmq-perf-gate-dockerd.log" >&2; exit 1; }
fi

# Offline images (skipped when present).
as_root scripts/build-images.sh
log "machine ready"
