#!/usr/bin/env bash
# Builds the local base image holdfast/debian-jre17:bookworm with debootstrap (no image registry is
# needed): a minimal Debian bookworm with the Java 17 runtime and curl, imported into Docker.
# Usage: docker/build-base-image.sh [MIRROR]   (needs root, debootstrap and a running Docker daemon)
set -euo pipefail
image=holdfast/debian-jre17:bookworm
if docker image inspect "$image" >/dev/null 2>&1 && [ "${REBUILD:-}" != 1 ]; then
  echo "$image exists (REBUILD=1 builds it again)"
  exit 0
fi
mirror=${1:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)}
mirror=${mirror:-http://deb.debian.org/debian}
rootfs=$(mktemp -d /tmp/holdfast-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
echo "debootstrap bookworm from $mirror into $rootfs"
debootstrap --variant=minbase --include=openjdk-17-jre-headless,curl,ca-certificates bookworm "$rootfs" "$mirror" >/dev/null
# a smaller image: no apt lists, docs or man pages
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
tar -C "$rootfs" -c . | docker import -c 'ENV LANG=C.UTF-8' - "$image" >/dev/null
echo "built $image ($(docker image inspect -f '{{.Size}}' "$image") bytes)"
