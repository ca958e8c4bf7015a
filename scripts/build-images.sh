#!/usr/bin/env bash
# Owns the offline RabbitMQ images: builds rabbitmq-perf-gate/rabbitmq:<version> from Debian's
# rabbitmq-server package with debootstrap + docker import, no registry needed. The images share
# the official `rabbitmq:*-management` image's interface (see docs/images.md).
#
# Usage: scripts/build-images.sh [--force] [VERSION...]   (VERSION: 3.10.8, 4.0.5; default both)
# Needs root, debootstrap and a running docker daemon. An image that already exists is skipped
# unless --force. Safe to re-run; every temporary root is unmounted and removed on any exit.
set -euo pipefail

REPO=rabbitmq-perf-gate/rabbitmq
declare -A SUITE=([3.10.8]=bookworm [4.0.5]=trixie)
FORCE=0
VERSIONS=()

die() { echo "build-images: $*" >&2; exit 1; }

for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) [[ -n "${SUITE[$arg]:-}" ]] || die "unknown version '$arg' (known: ${!SUITE[*]})"; VERSIONS+=("$arg") ;;
  esac
done
[[ ${#VERSIONS[@]} -gt 0 ]] || VERSIONS=(3.10.8 4.0.5)

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap and chroot need it)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
command -v docker >/dev/null || die "docker CLI is not installed"
docker info >/dev/null 2>&1 || die "docker daemon is not reachable (is dockerd running?)"

ROOTFS=""
# Unmount anything debootstrap left mounted under the root before deleting it, so that rm can
# never walk into a bind-mounted host directory such as /dev or /proc.
cleanup_rootfs() {
  [[ -n "$ROOTFS" && -d "$ROOTFS" ]] || return 0
  local m
  for m in $(awk -v r="$ROOTFS/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  if awk -v r="$ROOTFS/" 'index($2, r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    echo "build-images: $ROOTFS still has mounts; not removing it" >&2
  else
    rm -rf --one-file-system "$ROOTFS"
  fi
  ROOTFS=""
}
trap cleanup_rootfs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

write_image_files() {
  local r=$1
  mkdir -p "$r/etc/rabbitmq/conf.d"
  cat > "$r/etc/rabbitmq/conf.d/10-defaults.conf" <<'EOF'
## Defaults of rabbitmq-perf-gate's offline image, mirroring the official image.
## guest may log in from any address (the official image does the same).
loopback_users = none
## Log to the console so that `docker logs` shows the broker's log.
log.console = true
log.file = false
EOF
  echo '[rabbitmq_management,rabbitmq_prometheus].' > "$r/etc/rabbitmq/enabled_plugins"
  cat > "$r/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# rabbitmq-perf-gate image entrypoint: applies RABBITMQ_DEFAULT_USER/PASS (default guest/guest),
# then runs the command as the rabbitmq user, like the official image. rabbitmq-server runs in
# the foreground logging to stdout (Debian's wrapper would send its output to startup_log).
set -e
if [ "$1" = rabbitmq-server ]; then
  shift
  set -- /usr/lib/rabbitmq/bin/rabbitmq-server "$@"
  if [ "$(id -u)" = 0 ]; then
    if [ -n "${RABBITMQ_DEFAULT_USER:-}${RABBITMQ_DEFAULT_PASS:-}" ]; then
      printf 'default_user = %s\ndefault_pass = %s\n' "${RABBITMQ_DEFAULT_USER:-guest}" "${RABBITMQ_DEFAULT_PASS:-guest}" \
        > /etc/rabbitmq/conf.d/05-default-user.conf
    fi
    chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
    cd /var/lib/rabbitmq
    exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups "$@"
  fi
fi
exec "$@"
EOF
  chmod 0755 "$r/usr/local/bin/docker-entrypoint.sh"
}

build() {
  local version=$1 suite=${SUITE[$1]} tag="$REPO:$1"
  if [[ $FORCE -eq 0 ]] && docker image inspect "$tag" >/dev/null 2>&1; then
    echo "$tag already exists; skipping (use --force to rebuild)"
    return 0
  fi
  local t0=$SECONDS
  ROOTFS=$(mktemp -d /var/tmp/rabbitmq-perf-gate-rootfs.XXXXXX)
  echo "building $tag from Debian $suite in $ROOTFS"
  # Two stages so that policy-rc.d is in place before any package's postinst runs: no service
  # (rabbitmq-server, epmd) may start inside the chroot while it is being built.
  debootstrap --foreign --variant=minbase --include=rabbitmq-server "$suite" "$ROOTFS"
  mkdir -p "$ROOTFS/usr/sbin"
  printf '#!/bin/sh\nexit 101\n' > "$ROOTFS/usr/sbin/policy-rc.d"
  chmod 0755 "$ROOTFS/usr/sbin/policy-rc.d"
  chroot "$ROOTFS" /debootstrap/debootstrap --second-stage
  local got
  got=$(chroot "$ROOTFS" dpkg-query -W -f='${Version}' rabbitmq-server)
  [[ "$got" == "$version"* ]] || die "Debian $suite has rabbitmq-server $got, expected $version"
  write_image_files "$ROOTFS"
  chroot "$ROOTFS" apt-get clean
  rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/log/*.log \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*
  local old
  old=$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
  tar -C "$ROOTFS" --one-file-system --numeric-owner -c . | docker import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'ENV HOME=/var/lib/rabbitmq' \
    -c 'ENV LANG=C.UTF-8' \
    -c 'EXPOSE 4369 5671 5672 15672 15692 25672' \
    -c 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
    -c 'CMD ["rabbitmq-server"]' \
    -m "rabbitmq-server $got from Debian $suite (scripts/build-images.sh)" \
    - "$tag" >/dev/null
  cleanup_rootfs
  # A rebuild (--force) leaves the previous image untagged: drop it unless a container uses it.
  [[ -n "$old" ]] && docker image rm "$old" >/dev/null 2>&1 || true
  echo "built $tag (rabbitmq-server $got) in $((SECONDS - t0)) s"
}

for v in "${VERSIONS[@]}"; do build "$v"; done
