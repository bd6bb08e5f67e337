#!/usr/bin/env bash
# Backup and restore of one image through the real server on holdfast.store.backend=s3, against the
# cluster of start-single-node.sh: the backup, the uploads of its sealed logs, a restore with the
# sealed logs on the local disk (warm) and one with them deleted (cold: each log fetched whole from
# radosgw on first read), each with its wall time, MB/s and the object-store requests it made.
#
#   docker/ceph/start-single-node.sh
#   mvn -B -pl server,client -am package -DskipTests
#   docker/ceph/bench-backup-restore.sh IMAGE [WORK_DIR]
#
# Settings (environment): ROLL (holdfast.store.log-roll-size, 64MB), HTTP_PORT (18690),
# INGEST_PORT (18691), RGW_PORT, S3_BUCKET, S3_ACCESS_KEY, S3_SECRET_KEY (as start-single-node.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${1:?usage: docker/ceph/bench-backup-restore.sh IMAGE [WORK_DIR]}
WORK=${2:-/var/tmp/holdfast-ceph-bench}
ROLL=${ROLL:-64MB}
HTTP_PORT=${HTTP_PORT:-18690}
INGEST_PORT=${INGEST_PORT:-18691}
RGW_PORT=${RGW_PORT:-7480}
S3_BUCKET=${S3_BUCKET:-holdfast-test}
S3_ACCESS_KEY=${S3_ACCESS_KEY:-holdfast-ceph-access}
S3_SECRET_KEY=${S3_SECRET_KEY:-holdfast-ceph-secret}
SERVER_JAR=$(ls server/target/holdfast-server-*.jar | grep -v -e sources -e original | head -1)
AGENT_JAR=$(ls client/target/holdfast-client-*-exec.jar | head -1)
[ -f "$SERVER_JAR" ] && [ -f "$AGENT_JAR" ] || { echo "build first: mvn -B -pl server,client -am package -DskipTests" >&2; exit 2; }

if [ -n "$(ls -A "$WORK" 2>/dev/null)" ] && [ ! -d "$WORK/data" ]; then
  echo "$WORK is not empty and is no earlier run's: name a new WORK_DIR" >&2
  exit 2
fi
rm -rf "$WORK"
mkdir -p "$WORK/data" "$WORK/state"
DATA=$WORK/data
printf 'access-key=%s\nsecret-key=%s\n' "$S3_ACCESS_KEY" "$S3_SECRET_KEY" >"$WORK/s3.properties"
chmod 600 "$WORK/s3.properties"
token() {
  java -cp "$SERVER_JAR" -Dloader.main=org.holdfast.server.app.CredentialTool \
    org.springframework.boot.loader.launch.PropertiesLauncher create-token --data-dir "$DATA" --name "$1" --role "$2" 2>/dev/null
}
AGENT_TOKEN=$(token bench agent)
VIEWER_TOKEN=$(token metrics viewer)
PREFIX=bench-$(date +%s)/

server_pid=
start_server() {
  java -Xmx2g -jar "$SERVER_JAR" --holdfast.data-dir="$DATA" --server.port="$HTTP_PORT" \
    --holdfast.ingest.host=127.0.0.1 --holdfast.ingest.port="$INGEST_PORT" --holdfast.tls.enabled=false \
    --holdfast.store.log-roll-size="$ROLL" --holdfast.verify.schedule=0 --holdfast.verify.window=0 \
    --holdfast.store.backend=s3 --holdfast.store.s3.endpoint="http://127.0.0.1:$RGW_PORT" \
    --holdfast.store.s3.bucket="$S3_BUCKET" --holdfast.store.s3.prefix="$PREFIX" \
    --holdfast.store.s3.credentials-file="$WORK/s3.properties" --holdfast.store.s3.node=bench \
    >>"$WORK/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 240); do
    curl -sf -o /dev/null "http://127.0.0.1:$HTTP_PORT/actuator/health" && return 0
    kill -0 "$server_pid" 2>/dev/null || { echo "the server exited; see $WORK/server.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "the server did not answer; see $WORK/server.log" >&2
  exit 1
}
stop_server() {
  kill "$server_pid"
  wait "$server_pid" || true
}
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true' EXIT

# metric NAME [LABEL]: the counter's value (the first line matching both)
metric() {
  curl -s -H "Authorization: Bearer $VIEWER_TOKEN" "http://127.0.0.1:$HTTP_PORT/actuator/prometheus" \
    | grep "^$1" | grep -- "${2:-}" | head -1 | awk '{printf "%d", $2}'
}
requests() {
  echo "put=$(metric holdfast_objects_requests_total 'kind="put"') get=$(metric holdfast_objects_requests_total 'kind="get"')" \
    "head=$(metric holdfast_objects_requests_total 'kind="head"') list=$(metric holdfast_objects_requests_total 'kind="list"')" \
    "delete=$(metric holdfast_objects_requests_total 'kind="delete"')" \
    "putMB=$(( $(metric holdfast_objects_bytes_total 'direction="put"') / 1000000 ))" \
    "getMB=$(( $(metric holdfast_objects_bytes_total 'direction="get"') / 1000000 ))"
}
now() { date +%s.%N; }
# rate BYTES T0 T1: seconds and MB/s
rate() { python3 -c "import sys; b,s=float(sys.argv[1]),float(sys.argv[3])-float(sys.argv[2]); print(f'{s:.1f} s, {b/s/1e6:.1f} MB/s')" "$@"; }
agent() { HOLDFAST_TOKEN=$AGENT_TOKEN java -jar "$AGENT_JAR" "$@" --server "127.0.0.1:$INGEST_PORT" --no-tls --json; }
sealed_logs() { ls "$DATA"/data/log-*.hfl | sort | head -n -1; }

size=$(stat -c %s "$IMAGE")
start_server
echo "image $IMAGE: $size bytes; log roll $ROLL; ceph $(ceph --version | awk '{print $3}')"

t0=$(now)
agent backup --volume bench --source "$IMAGE" --state-dir "$WORK/state" >"$WORK/backup.json"
t1=$(now)
n=$(sealed_logs | wc -l)
for _ in $(seq 1 1200); do
  [ "$(metric holdfast_objects_logs_uploaded_total)" -ge "$n" ] && break
  sleep 0.5
done
t2=$(now)
stored=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['storedBytes'])" "$WORK/backup.json")
echo "backup: $(rate "$size" "$t0" "$t1") of the image; stored $((stored / 1000000)) MB"
echo "backup until its $n sealed logs were uploaded: $(rate "$size" "$t0" "$t2") of the image; $(requests)"

t0=$(now)
agent restore --volume bench --snapshot latest --target "$WORK/warm.img" >/dev/null
t1=$(now)
cmp -s "$IMAGE" "$WORK/warm.img" || { echo "warm restore differs from the image" >&2; exit 1; }
echo "restore, sealed logs local: $(rate "$size" "$t0" "$t1"), byte-identical"
rm -f "$WORK/warm.img"

stop_server
sealed_logs | xargs rm -f
start_server
t0=$(now)
agent restore --volume bench --snapshot latest --target "$WORK/cold.img" >/dev/null
t1=$(now)
cmp -s "$IMAGE" "$WORK/cold.img" || { echo "cold restore differs from the image" >&2; exit 1; }
echo "restore, $n sealed logs deleted (fetched from RGW): $(rate "$size" "$t0" "$t1"), byte-identical;" \
  "logs fetched $(metric holdfast_objects_logs_fetched_total); $(requests)"
rm -f "$WORK/cold.img"
stop_server
server_pid=
