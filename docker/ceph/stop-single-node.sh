#!/usr/bin/env bash
# Stops the cluster that start-single-node.sh started (by the daemons' pid files). With --wipe,
# deletes $CEPH_DIR too: the next start makes a new cluster.
set -euo pipefail
CEPH_DIR=${CEPH_DIR:-/var/tmp/holdfast-ceph}
for name in client.rgw.a osd.0 mgr.x mon.a; do
  pidfile=$CEPH_DIR/run/$name.pid
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$pidfile"
done
if [ "${1:-}" = --wipe ]; then
  rm -rf "$CEPH_DIR"
fi
