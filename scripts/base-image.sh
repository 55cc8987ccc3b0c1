#!/usr/bin/env bash
# A local base image, built without any image registry, for tasks whose Dockerfile says
# `FROM ubuntu:24.04` on a machine that reaches no registry:
#   scripts/base-image.sh [NAME]        (default: docker.io/library/ubuntu:24.04)
# Debian's own packages (the distribution's mirror, as apt reaches it) become a root
# filesystem tar by mmdebstrap, byte-identical between runs (SOURCE_DATE_EPOCH), then an
# image `FROM scratch` + `ADD rootfs.tar /`, built and tagged NAME by podman with pulling
# disabled. The name is the one a task's `FROM` uses, so its build finds it locally.
# A machine with a registry needs none of this: the engine pulls what a task names.
#
# Root only (rootful podman; needs mmdebstrap, podman, runc: on Debian
# `apt-get install mmdebstrap podman runc uidmap`). podman gets a containers.conf of the
# script's own (CONTAINERS_CONF), never the machine's: runtime runc, and default_ulimits
# at the machine's hard limits, without which podman's defaults fail on this kind of
# machine (crun's setrlimit RLIMIT_NOFILE). Export the same CONTAINERS_CONF (printed at
# the end) to build or run tasks with that podman.
#
# Settings (environment): SUITE (bookworm), INCLUDE (python3,git), MIRROR (the suite's
# default), SOURCE_DATE_EPOCH (1700000000), CACHE (~/.cache/loopbench/base-image).
# The tar of a SUITE and INCLUDE is kept in CACHE and reused (REBUILD=1 makes it anew); an
# image NAME already built from the same tar is kept. Prints how long each step took.
set -euo pipefail

name="${1:-docker.io/library/ubuntu:24.04}"
suite="${SUITE:-bookworm}"
include="${INCLUDE:-python3,git}"
cache="${CACHE:-$HOME/.cache/loopbench/base-image}"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1700000000}"

fail() { echo "base-image: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || fail "run it as root (rootful podman, mmdebstrap's root mode)"
for tool in mmdebstrap podman runc sha256sum; do
  command -v "$tool" >/dev/null ||
    fail "$tool is not installed (on Debian: apt-get install mmdebstrap podman runc uidmap)"
done
mkdir -p "$cache"

# podman's configuration for this machine: runc, and the hard limits as the defaults.
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
pid_max=$(cat /proc/sys/kernel/pid_max)
if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then nproc=$pid_max; fi
if [ "$nofile" = unlimited ]; then nofile=$(cat /proc/sys/fs/nr_open); fi
export CONTAINERS_CONF="$cache/containers.conf"
cat >"$CONTAINERS_CONF" <<CONF
[engine]
runtime = "runc"

[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
CONF

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# The root filesystem.
tar="$cache/rootfs-$suite-${include//,/-}.tar"
t0=$(now)
if [ ! -s "$tar" ] || [ "${REBUILD:-0}" = 1 ]; then
  partial="$tar.partial.tar"
  rm -f "$partial"
  # shellcheck disable=SC2086 # MIRROR is one word or none
  mmdebstrap --quiet --variant=apt --include="$include" "$suite" "$partial" ${MIRROR:-}
  mv "$partial" "$tar"
  echo "rootfs: $tar made in $(took "$t0")"
else
  echo "rootfs: $tar kept (REBUILD=1 makes it anew)"
fi
digest=$(sha256sum "$tar" | cut -d' ' -f1)
echo "rootfs: sha256 $digest, $(du -h "$tar" | cut -f1)"

# The image, unless NAME is already the image of this tar.
t1=$(now)
have=$(podman image inspect --format '{{index .Labels "loopbench.rootfs"}}' "$name" 2>/dev/null || true)
if [ "$have" = "$digest" ]; then
  echo "image: $name kept (built from this rootfs)"
else
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  ln "$tar" "$context/rootfs.tar" 2>/dev/null || cp "$tar" "$context/rootfs.tar"
  cat >"$context/Containerfile" <<FILE
FROM scratch
ADD rootfs.tar /
LABEL loopbench.rootfs="$digest"
CMD ["/bin/bash"]
FILE
  podman build --quiet --pull=never --timestamp "$SOURCE_DATE_EPOCH" -t "$name" "$context" >/dev/null
  echo "image: $name built in $(took "$t1")"
fi
echo "image: $(podman image inspect --format '{{.Id}}' "$name")"

# What a task's check needs runs in it, with no network.
t2=$(now)
podman run --rm --network=none --pull=never "$name" sh -c 'python3 --version && git --version'
echo "check: one container of $name in $(took "$t2")"
echo "export CONTAINERS_CONF=$CONTAINERS_CONF   # for podman to build and run tasks here"
