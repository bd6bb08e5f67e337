#!/usr/bin/env bash
# A throwaway single-node Ceph cluster for the object-store test profile (mvn -Pceph): one monitor,
# one manager, one BlueStore OSD on a sparse file, radosgw on 127.0.0.1 with an S3 user. cephx stays
# on. Everything lives under $CEPH_DIR; nothing is written to /etc/ceph and no systemd unit is used.
#
#   docker/ceph/start-single-node.sh          # installs the packages if missing (root, apt), starts
#   docker/ceph/stop-single-node.sh           # stops the daemons; add --wipe to delete $CEPH_DIR
#
# Settings (environment): CEPH_DIR (default /var/tmp/holdfast-ceph), RGW_PORT (7480),
# OSD_SIZE (bytes of the sparse block file, 20G), S3_ACCESS_KEY / S3_SECRET_KEY (the test user's
# keys; defaults match the Maven profile), S3_BUCKET (made at the first start, holdfast-test). The
# cluster listens on loopback only.
set -euo pipefail

CEPH_DIR=${CEPH_DIR:-/var/tmp/holdfast-ceph}
RGW_PORT=${RGW_PORT:-7480}
MON_PORT_V2=${MON_PORT_V2:-3300}
MON_PORT_V1=${MON_PORT_V1:-6789}
OSD_SIZE=${OSD_SIZE:-20G}
S3_ACCESS_KEY=${S3_ACCESS_KEY:-holdfast-ceph-access}
S3_SECRET_KEY=${S3_SECRET_KEY:-holdfast-ceph-secret}
S3_BUCKET=${S3_BUCKET:-holdfast-test}
S3_UID=holdfast
started=$(date +%s)

die() { echo "start-single-node: $*" >&2; exit 1; }

need=()
for pkg in ceph-mon ceph-osd ceph-mgr radosgw curl uuid-runtime; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing ${need[*]}: run as root, or apt-get install ${need[*]} first"
  echo "installing ${need[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

CONF=$CEPH_DIR/ceph.conf
export CEPH_CONF=$CONF
if [ -f "$CEPH_DIR/run/mon.a.pid" ] && kill -0 "$(cat "$CEPH_DIR/run/mon.a.pid")" 2>/dev/null; then
  die "a cluster is already running in $CEPH_DIR (stop it with docker/ceph/stop-single-node.sh)"
fi

if [ ! -f "$CEPH_DIR/ready" ]; then
  # A new cluster: the keys, the monitor map, the monitor's and the OSD's stores. A half-made one
  # (a start that failed) is replaced; a directory that is not ours is left alone.
  if [ -n "$(ls -A "$CEPH_DIR" 2>/dev/null)" ] && [ ! -f "$CONF" ]; then
    die "$CEPH_DIR is not empty and holds no cluster of this script: set CEPH_DIR to a new directory"
  fi
  rm -rf "$CEPH_DIR"
  mkdir -p "$CEPH_DIR"/{run,log,mon,mgr/ceph-x,osd/ceph-0,rgw}
  fsid=$(uuidgen)
  cat >"$CONF" <<EOF
[global]
fsid = $fsid
mon initial members = a
mon host = [v2:127.0.0.1:$MON_PORT_V2,v1:127.0.0.1:$MON_PORT_V1]
public network = 127.0.0.0/8
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $CEPH_DIR/client.admin.keyring
run dir = $CEPH_DIR/run
pid file = $CEPH_DIR/run/\$name.pid
admin socket = $CEPH_DIR/run/\$name.asok
log file = $CEPH_DIR/log/\$name.log
crash dir = $CEPH_DIR/crash
# one OSD: one copy of everything, few placement groups, no warnings about either
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
# a shared build disk is often more than 70 % full: warn only when it is nearly full
mon data avail warn = 5

[mon]
mon data = $CEPH_DIR/mon/ceph-\$id
keyring = $CEPH_DIR/mon/ceph-\$id/keyring
mon allow pool delete = true

[mgr]
mgr data = $CEPH_DIR/mgr/ceph-\$id
keyring = $CEPH_DIR/mgr/ceph-\$id/keyring

[osd]
osd data = $CEPH_DIR/osd/ceph-\$id
keyring = $CEPH_DIR/osd/ceph-\$id/keyring
osd objectstore = bluestore
bluestore block create = true
bluestore block size = $(numfmt --from=iec "$OSD_SIZE")
bluestore block db create = false
bluestore block wal create = false
osd memory target = 2147483648
bluestore fsck on mount = false

[client.rgw.a]
keyring = $CEPH_DIR/rgw/keyring
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $CEPH_DIR/rgw
rgw enable usage log = true
EOF

  ceph-authtool --create-keyring "$CEPH_DIR/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$CEPH_DIR/client.admin.keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$CEPH_DIR/mon.keyring" --import-keyring "$CEPH_DIR/client.admin.keyring" >/dev/null
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$MON_PORT_V2,v1:127.0.0.1:$MON_PORT_V1]" \
    "$CEPH_DIR/monmap" >/dev/null
  ceph-mon --mkfs -i a --monmap "$CEPH_DIR/monmap" --keyring "$CEPH_DIR/mon.keyring"
  fresh=1
else
  fresh=0
fi

ceph-mon -i a
for _ in $(seq 1 60); do timeout 5 ceph -s >/dev/null 2>&1 && break; sleep 0.5; done
timeout 10 ceph -s >/dev/null || die "the monitor did not answer (see $CEPH_DIR/log/mon.a.log)"

if [ "$fresh" = 1 ]; then
  ceph config set mon auth_allow_insecure_global_id_reclaim false >/dev/null
  ceph auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
    -o "$CEPH_DIR/mgr/ceph-x/keyring"
  osd_uuid=$(uuidgen)
  osd_id=$(ceph osd new "$osd_uuid")
  [ "$osd_id" = 0 ] || die "expected OSD id 0, the monitor gave $osd_id"
  ceph-osd -i 0 --mkfs --mkkey --no-mon-config --osd-uuid "$osd_uuid" >/dev/null 2>&1 \
    || die "the OSD's mkfs failed (see $CEPH_DIR/log/osd.0.log)"
  ceph auth add osd.0 osd 'allow *' mon 'allow profile osd' mgr 'allow profile osd' \
    -i "$CEPH_DIR/osd/ceph-0/keyring" >/dev/null 2>&1
  ceph auth get-or-create client.rgw.a mon 'allow rw' osd 'allow rwx' mgr 'allow rw' -o "$CEPH_DIR/rgw/keyring"
fi

ceph-mgr -i x 2>>"$CEPH_DIR/log/stderr.log"
ceph-osd -i 0 2>>"$CEPH_DIR/log/stderr.log"
for _ in $(seq 1 120); do
  ceph osd stat -f json 2>/dev/null | grep -q '"num_up_osds":1' && break
  sleep 0.5
done
ceph osd stat -f json | grep -q '"num_up_osds":1' || die "the OSD did not come up (see $CEPH_DIR/log/osd.0.log)"

radosgw -n client.rgw.a 2>>"$CEPH_DIR/log/stderr.log"
for _ in $(seq 1 120); do
  curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/" && break
  sleep 0.5
done
curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/" || die "radosgw did not answer on port $RGW_PORT (see $CEPH_DIR/log/client.rgw.a.log)"

if [ "$fresh" = 1 ]; then
  radosgw-admin user create --uid="$S3_UID" --display-name="holdfast tests" \
    --access-key="$S3_ACCESS_KEY" --secret-key="$S3_SECRET_KEY" >/dev/null
  # the bucket, with curl's SigV4 (RGW wants the payload hash header; this one is the empty body's)
  code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
    -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' \
    "http://127.0.0.1:$RGW_PORT/$S3_BUCKET")
  [ "$code" = 200 ] || die "making the bucket $S3_BUCKET failed with HTTP $code"
  touch "$CEPH_DIR/ready"
fi

echo "ceph $(ceph --version | awk '{print $3}') up in $(( $(date +%s) - started )) s: S3 at http://127.0.0.1:$RGW_PORT (user $S3_UID, bucket $S3_BUCKET)"
echo "run the object-store suites against it: mvn -B -pl server -am test -Pceph"
