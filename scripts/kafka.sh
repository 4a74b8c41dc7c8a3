#!/usr/bin/env bash
# Single-node Apache Kafka broker (KRaft, combined broker+controller) for local
# development and CI, assembled from Maven Central jars. No Docker, no tarball.
#
# Usage: scripts/kafka.sh <command>
#   install          resolve the broker jars (idempotent)
#   start            install if needed, format storage if needed, start in the
#                    background and wait until it answers a metadata request
#                    (no-op if already running; when another broker already
#                    answers on KAFKA_PORT it is used, never started or stopped here)
#   stop             clean shutdown (SIGTERM), SIGKILL after KAFKA_STOP_TIMEOUT
#   restart          stop + start
#   status           exit 0 if the broker process is running, 1 if not
#   logs [-f] [-n N] show (or follow) the broker log
#   reset            stop + wipe the data directory
#   cluster start|stop|status|logs N|reset
#                    a three-node cluster on loopback (see "Cluster" below); the
#                    single-broker commands above are independent of it
#
# Environment (defaults in brackets):
#   KAFKA_VERSION          broker version [4.1.2]; 3.9.x also supported
#   KAFKA_PORT             client listener, 127.0.0.1 only [9092]
#   KAFKA_CONTROLLER_PORT  KRaft controller listener, 127.0.0.1 only [9093]
#   KAFKA_HEAP             JVM heap flags ["-Xmx512m -Xms256m"]
#   KAFKA_OPTS             extra JVM flags for the broker [none]
#   KAFKA_START_TIMEOUT    seconds to wait for readiness [120]
#   KAFKA_STOP_TIMEOUT     seconds to wait for a clean exit before SIGKILL [30]
#   KAFKA_M2               Maven local repository [Maven's default, ~/.m2/repository]
#   MAVEN_OPTS, JAVA_HOME  honoured as usual
#
# State (git-ignored), all under <repo>/.stack/kafka/:
#   <version>/libs   jars          data/        log.dirs + KRaft metadata
#   broker.log       broker log    broker.pid   pid of the running broker
#   cluster.id       generated once, reused by every format
#   server.properties rendered from deploy/kafka/server.properties
#
# Cluster: `cluster start` runs KAFKA_CLUSTER_NODES (3) KRaft nodes, each a
# combined broker + controller (three JVMs, not six, on a small machine; a
# quorum of three voters and replication factor 3 both survive one lost node),
# from the same jars, rendered from deploy/kafka/cluster.properties. Node i
# (1-based) listens on KAFKA_CLUSTER_PORT+i-1 (clients) and
# KAFKA_CLUSTER_PORT+N+i-1 (controller). `start` starts the nodes that are not
# running (so it also restarts one that was killed) and waits until every node
# answers and lists all N brokers; it prints the LEDGER_KAFKA_BROKERS list.
# `status` prints each node (pid, port, running / paused / down) and the active
# controller (from the quorum-state files), exit 1 when a node is down. `stop`
# stops every node; `logs N [-f]` shows node N's log; `reset` stops and wipes.
#   KAFKA_CLUSTER_PORT     first client port [9192]
#   KAFKA_CLUSTER_NODES    nodes [3]
#   KAFKA_CLUSTER_HEAP     JVM heap flags per node ["-Xmx384m -Xms128m"]
#   KAFKA_CLUSTER_DIR      state [<repo>/.stack/kafka-cluster]: cluster.id and
#                          node-<i>/{data,server.properties,broker.log,broker.pid}
# The ledger on it: LEDGER_KAFKA_BROKERS=<printed list> and
# LEDGER_KAFKA_DEPLOYMENT=cluster (replication factor 3, min.insync.replicas 2,
# deploy/topics.json).
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
ROOT=$(cd -- "$SCRIPT_DIR/.." && pwd -P)
DEPLOY="$ROOT/deploy/kafka"
STACK="$ROOT/.stack/kafka"

KAFKA_VERSION=${KAFKA_VERSION:-4.1.2}
KAFKA_PORT=${KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
KAFKA_HEAP=${KAFKA_HEAP:--Xmx512m -Xms256m}
KAFKA_OPTS=${KAFKA_OPTS:-}
KAFKA_START_TIMEOUT=${KAFKA_START_TIMEOUT:-120}
KAFKA_STOP_TIMEOUT=${KAFKA_STOP_TIMEOUT:-30}
KAFKA_M2=${KAFKA_M2:-}

VDIR="$STACK/$KAFKA_VERSION"
LIBS="$VDIR/libs"
DATA="$STACK/data"
LOG="$STACK/broker.log"
PIDFILE="$STACK/broker.pid"
PROPS="$STACK/server.properties"
CLUSTER_ID_FILE="$STACK/cluster.id"
FORMAT_MARKER="$DATA/.kafka-sh-format"   # version + controller port used to format
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

say() { printf 'kafka: %s\n' "$*"; }
die() { printf 'kafka: error: %s\n' "$*" >&2; exit 1; }
rel() { printf '%s' "${1#"$ROOT"/}"; }

log_tail() {
  if [[ -s $LOG ]]; then
    printf -- '---- last %s lines of %s ----\n' "${1:-40}" "$(rel "$LOG")" >&2
    tail -n "${1:-40}" "$LOG" >&2
    printf -- '----\n' >&2
  fi
}

[[ $KAFKA_VERSION =~ ^([0-9]+)\.([0-9]+)\.[0-9]+([.-][A-Za-z0-9.-]+)?$ ]] ||
  die "KAFKA_VERSION='$KAFKA_VERSION' is not a Kafka version like 4.1.2"
KAFKA_MAJOR=${BASH_REMATCH[1]}
KAFKA_MINOR=${BASH_REMATCH[2]}
if (( KAFKA_MAJOR >= 4 )); then
  FLAVOR=kafka4 LOG_PROFILE=log4j2
  LOG_OPTS=("-Dlog4j2.configurationFile=$DEPLOY/log4j2.xml")
elif (( KAFKA_MAJOR == 3 && KAFKA_MINOR >= 3 )); then
  FLAVOR=kafka3 LOG_PROFILE=reload4j
  LOG_OPTS=("-Dlog4j.configuration=file:$DEPLOY/log4j.properties")
else
  die "KAFKA_VERSION=$KAFKA_VERSION: only 3.3+ (KRaft) is supported; 3.9.x or 4.x recommended"
fi
for v in KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_START_TIMEOUT KAFKA_STOP_TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v='${!v}' must be a number"
done
[[ $KAFKA_PORT != "$KAFKA_CONTROLLER_PORT" ]] || die "KAFKA_PORT and KAFKA_CONTROLLER_PORT must differ"

need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH ($2)"; }

# Serialise install/start/stop/reset between concurrent invocations. fd 9 is
# closed for the broker process so it never holds the lock.
lock() {
  mkdir -p "$STACK"
  exec 9>"$STACK/.lock"
  if command -v flock >/dev/null 2>&1; then
    flock -w 900 9 || die "timed out waiting for $(rel "$STACK/.lock")"
  fi
}

# ---------------------------------------------------------------- processes --

# Is $1 a live broker started from this checkout's config?
is_our_broker() {
  local pid=$1 cmdline
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *" kafka.Kafka $PROPS"* ]]
}

# Prints the broker pid (from broker.pid, else found via /proc) or fails.
broker_pid() {
  local pid=""
  [[ -f $PIDFILE ]] && pid=$(<"$PIDFILE")
  if is_our_broker "$pid"; then printf '%s\n' "$pid"; return 0; fi
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    if is_our_broker "$pid"; then printf '%s\n' "$pid" >"$PIDFILE"; printf '%s\n' "$pid"; return 0; fi
  done 2>/dev/null
  return 1
}

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# Sends a Metadata v4 request (all topics; supported by Kafka 1.0 .. 4.x) and
# succeeds once the response lists at least one live broker, i.e. the broker
# has registered with the controller, is unfenced and serves requests.
metadata_ready() {
  local hex
  # A broker that is still starting accepts connections but may not answer:
  # keep each attempt short (${1:-1}s) and let the caller retry.
  # shellcheck disable=SC2016 # expanded by the inner shell
  local port=${2:-$KAFKA_PORT} min=${3:-1}
  hex=$(timeout "${1:-1}" bash -c '
      exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
      # size=23 | api_key=3 (Metadata) | version=4 | correlation_id="kfk1"
      # | client_id="kafka.sh" | topics=null (all) | allow_auto_topic_creation=false
      printf "\x00\x00\x00\x17\x00\x03\x00\x04kfk1\x00\x08kafka.sh\xff\xff\xff\xff\x00" >&3
      head -c 16 <&3 | od -An -v -tx1 | tr -d " \n"
    ' _ "$port" 2>/dev/null) || return 1
  # response: size(4) correlation_id(4) throttle_time_ms(4) brokers.length(4)
  [[ ${#hex} -eq 32 && ${hex:8:8} == 6b666b31 ]] || return 1
  (( 16#${hex:24:8} >= min && 16#${hex:24:8} < 16#80000000 ))
}

# ------------------------------------------------------------------ install --

pom_hash() { sha256sum "$DEPLOY/pom.xml" | cut -c1-64; }

installed() {
  [[ -f $VDIR/.installed && $(<"$VDIR/.installed") == "$(pom_hash)" && -f $LIBS/kafka_2.13-$KAFKA_VERSION.jar ]]
}

do_install() {
  if installed; then
    say "kafka $KAFKA_VERSION already installed ($(rel "$LIBS"))"
    return 0
  fi
  need mvn "install Maven 3.8+"
  need "$JAVA" "install a JDK 17+"
  say "installing kafka $KAFKA_VERSION ($LOG_PROFILE logging) from Maven Central into $(rel "$LIBS")"
  mkdir -p "$VDIR"
  rm -rf "$VDIR/libs.tmp" "$VDIR/mvn-build"
  local args=(-B -q -ntp -Dstyle.color=never -f "$DEPLOY/pom.xml" -P "$LOG_PROFILE"
              "-Dkafka.version=$KAFKA_VERSION" "-Dkafka.libs=$VDIR/libs.tmp" "-Dkafka.build=$VDIR/mvn-build")
  [[ -n $KAFKA_M2 ]] && args+=("-Dmaven.repo.local=$KAFKA_M2")
  if ! mvn "${args[@]}" dependency:copy-dependencies >"$VDIR/install.log" 2>&1; then
    sed -e 's/\x1b\[[0-9;]*m//g' "$VDIR/install.log" | grep -v '^\s*$' | tail -n 20 >&2 || true
    rm -rf "$VDIR/libs.tmp"
    die "maven could not resolve org.apache.kafka:kafka_2.13:$KAFKA_VERSION (full output: $(rel "$VDIR/install.log"))"
  fi
  [[ -f $VDIR/libs.tmp/kafka_2.13-$KAFKA_VERSION.jar ]] || die "kafka_2.13-$KAFKA_VERSION.jar missing after resolve"
  rm -rf "$LIBS" "$VDIR/mvn-build"
  mv "$VDIR/libs.tmp" "$LIBS"
  pom_hash >"$VDIR/.installed"
  say "installed $(find "$LIBS" -name '*.jar' | wc -l) jars ($(du -sh "$LIBS" | cut -f1))"
}

# -------------------------------------------------------------------- start --

sed_escape() { printf '%s' "$1" | sed -e 's/[|&\\]/\\&/g'; }

render_config() {
  local tmp="$PROPS.tmp"
  sed -e "s|^#$FLAVOR# ||" -e '/^#kafka[0-9]*# /d' \
      -e "s|@KAFKA_PORT@|$KAFKA_PORT|g" \
      -e "s|@KAFKA_CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
      -e "s|@KAFKA_DATA_DIR@|$(sed_escape "$DATA")|g" \
      "$DEPLOY/server.properties" >"$tmp"
  mv "$tmp" "$PROPS"
}

cluster_id() {
  if [[ ! -s $CLUSTER_ID_FILE ]]; then
    # A Kafka Uuid: 16 random bytes, URL-safe base64 without padding, and (as
    # Uuid.randomUuid() guarantees) not starting with '-'.
    local id
    while :; do
      id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
      [[ $id != -* ]] && break
    done
    printf '%s\n' "$id" >"$CLUSTER_ID_FILE"
  fi
  tr -d ' \n' <"$CLUSTER_ID_FILE"
}

format_marker() { printf 'version=%s\ncontroller_port=%s\n' "$KAFKA_MAJOR.$KAFKA_MINOR" "$KAFKA_CONTROLLER_PORT"; }

format_storage() {
  if [[ -f $DATA/meta.properties ]]; then
    if [[ -f $FORMAT_MARKER && $(<"$FORMAT_MARKER") != "$(format_marker)" ]]; then
      die "$(rel "$DATA") was formatted with $(tr '\n' ' ' <"$FORMAT_MARKER")but KAFKA_VERSION=$KAFKA_VERSION KAFKA_CONTROLLER_PORT=$KAFKA_CONTROLLER_PORT; run 'scripts/kafka.sh reset' (wipes data) or use the old settings"
    fi
    return 0
  fi
  local cid args
  cid=$(cluster_id)
  say "formatting $(rel "$DATA") (cluster id $cid)"
  rm -rf "$DATA"
  mkdir -p "$DATA"
  args=(format -t "$cid" -c "$PROPS")
  [[ $FLAVOR == kafka4 ]] && args+=(--standalone)
  if ! "$JAVA" -Xmx256m "${LOG_OPTS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool "${args[@]}" >>"$LOG" 2>&1 9>&-; then
    log_tail 20
    rm -rf "$DATA"
    die "storage format failed"
  fi
  format_marker >"$FORMAT_MARKER"
}

launch() {
  local heap jvm extra
  read -r -a heap <<<"$KAFKA_HEAP"
  read -r -a extra <<<"$KAFKA_OPTS"
  jvm=("${heap[@]}" -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
       -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true
       "-Dkafka.logs.dir=$STACK" "${LOG_OPTS[@]}" "${extra[@]}")
  rm -f "$PIDFILE"
  # setsid: own session, so the broker outlives the calling shell and is not
  # hit by signals sent to its process group. The inner shell records its own
  # pid and execs java, so broker.pid is the JVM's pid.
  (
    cd "$STACK"
    # shellcheck disable=SC2016 # expanded by the inner shell
    exec setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$PIDFILE" \
      "$JAVA" "${jvm[@]}" -cp "$LIBS/*" kafka.Kafka "$PROPS"
  ) >>"$LOG" 2>&1 </dev/null 9>&- &
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -s $PIDFILE ]] && return 0
    sleep 0.05
  done
  die "broker process did not start"
}

wait_ready() {
  local pid=$1 start=$SECONDS
  while :; do
    if metadata_ready; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      log_tail 40
      rm -f "$PIDFILE"
      die "broker exited during startup (see $(rel "$LOG"))"
    fi
    if (( SECONDS - start >= KAFKA_START_TIMEOUT )); then
      log_tail 40
      say "broker not ready after ${KAFKA_START_TIMEOUT}s; stopping it"
      do_stop >/dev/null || true
      die "broker did not answer a metadata request on 127.0.0.1:$KAFKA_PORT within ${KAFKA_START_TIMEOUT}s (KAFKA_START_TIMEOUT)"
    fi
    sleep 0.2
  done
}

do_start() {
  local pid t0=${EPOCHREALTIME/[.,]/}
  if pid=$(broker_pid); then
    local running=""
    [[ -f $STACK/broker.version ]] && running=$(<"$STACK/broker.version")
    wait_ready "$pid"
    say "already running (pid $pid, kafka ${running:-?}, 127.0.0.1:$KAFKA_PORT)"
    if [[ -n $running && $running != "$KAFKA_VERSION" ]]; then
      say "warning: KAFKA_VERSION=$KAFKA_VERSION requested but $running is running; use 'restart' (or 'reset' + 'start' across minor versions)"
    fi
    return 0
  fi
  if port_open "$KAFKA_PORT"; then
    # A broker this script did not start already answers there (the user's own, another checkout's): use it, and never stop it.
    if metadata_ready; then
      say "a Kafka broker already answers on 127.0.0.1:$KAFKA_PORT (not started here): using it; 'stop' leaves it running"
      return 0
    fi
    die "127.0.0.1:$KAFKA_PORT is already in use by another process that is not a Kafka broker (set KAFKA_PORT, and LEDGER_KAFKA_BROKERS to match)"
  fi
  if port_open "$KAFKA_CONTROLLER_PORT"; then die "127.0.0.1:$KAFKA_CONTROLLER_PORT is already in use by another process (set KAFKA_CONTROLLER_PORT)"; fi
  # Only a broker started here needs the jars (and the JDK and Maven to fetch them).
  do_install
  mkdir -p "$STACK"
  [[ -s $LOG ]] && mv -f "$LOG" "$LOG.1"
  : >"$LOG"
  render_config
  format_storage
  say "starting kafka $KAFKA_VERSION on 127.0.0.1:$KAFKA_PORT (controller :$KAFKA_CONTROLLER_PORT)"
  launch
  pid=$(<"$PIDFILE")
  printf '%s\n' "$KAFKA_VERSION" >"$STACK/broker.version"
  wait_ready "$pid"
  local ms=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
  say "ready in $((ms / 1000)).$(printf '%03d' $((ms % 1000)) | cut -c1)s (pid $pid, log $(rel "$LOG"))"
}

# --------------------------------------------------------------------- stop --

do_stop() {
  local pid i
  if ! pid=$(broker_pid); then
    rm -f "$PIDFILE"
    say "not running"
    return 0
  fi
  say "stopping broker (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < KAFKA_STOP_TIMEOUT * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "still running after ${KAFKA_STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && die "pid $pid survived SIGKILL"
  fi
  rm -f "$PIDFILE"
  say "stopped"
}

# ------------------------------------------------------------------- others --

do_status() {
  local pid version="?"
  if pid=$(broker_pid); then
    [[ -f $STACK/broker.version ]] && version=$(<"$STACK/broker.version")
    if metadata_ready 5; then
      say "running and ready (pid $pid, kafka $version, 127.0.0.1:$KAFKA_PORT)"
    else
      say "running but not answering metadata requests yet (pid $pid, kafka $version, 127.0.0.1:$KAFKA_PORT)"
    fi
    return 0
  fi
  say "not running"
  return 1
}

do_logs() {
  local follow=() n=200
  while (($#)); do
    case $1 in
      -f|--follow) follow=(-F) ;;
      -n) shift; n=${1:?-n needs a number} ;;
      *) die "logs: unknown argument '$1' (usage: logs [-f] [-n N])" ;;
    esac
    shift
  done
  [[ -f $LOG ]] || die "no log yet ($(rel "$LOG"))"
  exec tail -n "$n" "${follow[@]}" "$LOG"
}

do_reset() {
  do_stop
  rm -rf "$DATA" "$PROPS"
  say "wiped $(rel "$DATA")"
}

# ------------------------------------------------------------------ cluster --

KAFKA_CLUSTER_PORT=${KAFKA_CLUSTER_PORT:-9192}
KAFKA_CLUSTER_NODES=${KAFKA_CLUSTER_NODES:-3}
KAFKA_CLUSTER_HEAP=${KAFKA_CLUSTER_HEAP:--Xmx384m -Xms128m}
KAFKA_CLUSTER_DIR=${KAFKA_CLUSTER_DIR:-$ROOT/.stack/kafka-cluster}

node_dir() { printf '%s/node-%s' "$KAFKA_CLUSTER_DIR" "$1"; }
node_port() { printf '%s' $((KAFKA_CLUSTER_PORT + $1 - 1)); }
node_controller_port() { printf '%s' $((KAFKA_CLUSTER_PORT + KAFKA_CLUSTER_NODES + $1 - 1)); }

cluster_check_env() {
  [[ $KAFKA_CLUSTER_PORT =~ ^[0-9]+$ ]] || die "KAFKA_CLUSTER_PORT='$KAFKA_CLUSTER_PORT' must be a number"
  [[ $KAFKA_CLUSTER_NODES =~ ^[1-9]$ ]] || die "KAFKA_CLUSTER_NODES='$KAFKA_CLUSTER_NODES' must be 1 to 9"
  (( KAFKA_CLUSTER_PORT + 2 * KAFKA_CLUSTER_NODES <= 65536 )) || die "KAFKA_CLUSTER_PORT=$KAFKA_CLUSTER_PORT leaves no room for $KAFKA_CLUSTER_NODES nodes"
}

cluster_lock() {
  mkdir -p "$KAFKA_CLUSTER_DIR"
  exec 9>"$KAFKA_CLUSTER_DIR/.lock"
  if command -v flock >/dev/null 2>&1; then
    flock -w 900 9 || die "timed out waiting for $(rel "$KAFKA_CLUSTER_DIR/.lock")"
  fi
}

cluster_nodes() { seq 1 "$KAFKA_CLUSTER_NODES"; }

# Prints node $1's pid when it runs (from its pidfile, else found via /proc).
node_pid() {
  local props pidfile pid cmdline f
  props="$(node_dir "$1")/server.properties"
  pidfile="$(node_dir "$1")/broker.pid"
  pid=""
  [[ -f $pidfile ]] && pid=$(<"$pidfile")
  for candidate in "$pid" $(
    for f in /proc/[0-9]*/cmdline; do p=${f#/proc/}; printf '%s\n' "${p%/cmdline}"; done 2>/dev/null
  ); do
    [[ $candidate =~ ^[0-9]+$ ]] && kill -0 "$candidate" 2>/dev/null || continue
    cmdline=$(tr '\0' ' ' <"/proc/$candidate/cmdline" 2>/dev/null) || continue
    if [[ $cmdline == *" kafka.Kafka $props"* ]]; then
      [[ $candidate == "$pid" ]] || printf '%s\n' "$candidate" >"$pidfile"
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

cluster_brokers() {
  local i list=()
  for i in $(cluster_nodes); do list+=("127.0.0.1:$(node_port "$i")"); done
  (IFS=,; printf '%s\n' "${list[*]}")
}

cluster_voters() {
  local i list=()
  for i in $(cluster_nodes); do list+=("$i@127.0.0.1:$(node_controller_port "$i")"); done
  (IFS=,; printf '%s' "${list[*]}")
}

cluster_render() {
  local i=$1 dir tmp
  dir=$(node_dir "$i")
  tmp="$dir/server.properties.tmp"
  sed -e "s|@NODE_ID@|$i|g" \
      -e "s|@BROKER_PORT@|$(node_port "$i")|g" \
      -e "s|@CONTROLLER_PORT@|$(node_controller_port "$i")|g" \
      -e "s|@VOTERS@|$(cluster_voters)|g" \
      -e "s|@DATA_DIR@|$(sed_escape "$dir/data")|g" \
      "$DEPLOY/cluster.properties" >"$tmp"
  mv "$tmp" "$dir/server.properties"
}

cluster_format() {
  local i=$1 dir cid marker
  dir=$(node_dir "$i")
  marker="version=$KAFKA_MAJOR.$KAFKA_MINOR voters=$(cluster_voters)"
  if [[ -f $dir/data/meta.properties ]]; then
    [[ ! -f $dir/data/.kafka-sh-format || $(<"$dir/data/.kafka-sh-format") == "$marker" ]] ||
      die "$(rel "$dir/data") was formatted with $(<"$dir/data/.kafka-sh-format"), not $marker; run 'scripts/kafka.sh cluster reset' (wipes data) or use the old settings"
    return 0
  fi
  cid=$(CLUSTER_ID_FILE="$KAFKA_CLUSTER_DIR/cluster.id" cluster_id)
  rm -rf "$dir/data"
  mkdir -p "$dir/data"
  if ! "$JAVA" -Xmx256m "${LOG_OPTS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format -t "$cid" -c "$dir/server.properties" >>"$dir/broker.log" 2>&1 9>&-; then
    tail -n 20 "$dir/broker.log" >&2
    rm -rf "$dir/data"
    die "storage format of node $i failed"
  fi
  printf '%s\n' "$marker" >"$dir/data/.kafka-sh-format"
}

cluster_launch() {
  local i=$1 dir heap extra jvm n
  dir=$(node_dir "$i")
  read -r -a heap <<<"$KAFKA_CLUSTER_HEAP"
  read -r -a extra <<<"$KAFKA_OPTS"
  jvm=("${heap[@]}" -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
       -XX:+ExplicitGCInvokesConcurrent -XX:TieredStopAtLevel=1 -XX:CICompilerCount=2 -Djava.awt.headless=true
       "-Dkafka.logs.dir=$dir" "${LOG_OPTS[@]}" "${extra[@]}")
  rm -f "$dir/broker.pid"
  [[ -s $dir/broker.log ]] && mv -f "$dir/broker.log" "$dir/broker.log.1"
  (
    cd "$dir"
    # shellcheck disable=SC2016 # expanded by the inner shell
    exec setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$dir/broker.pid" \
      "$JAVA" "${jvm[@]}" -cp "$LIBS/*" kafka.Kafka "$dir/server.properties"
  ) >>"$dir/broker.log" 2>&1 </dev/null 9>&- &
  for ((n = 0; n < 100; n++)); do
    [[ -s $dir/broker.pid ]] && return 0
    sleep 0.05
  done
  die "node $i did not start"
}

cluster_start() {
  local i pid started=() t0=${EPOCHREALTIME/[.,]/} port
  do_install >/dev/null
  mkdir -p "$KAFKA_CLUSTER_DIR"
  for i in $(cluster_nodes); do
    mkdir -p "$(node_dir "$i")"
    node_pid "$i" >/dev/null && continue
    for port in "$(node_port "$i")" "$(node_controller_port "$i")"; do
      port_open "$port" && die "127.0.0.1:$port (node $i) is already in use by another process (set KAFKA_CLUSTER_PORT)"
    done
    cluster_render "$i"
    cluster_format "$i"
    cluster_launch "$i"
    printf '%s\n' "$KAFKA_VERSION" >"$(node_dir "$i")/broker.version"
    started+=("$i")
  done
  (( ${#started[@]} > 0 )) && say "starting node(s) ${started[*]} (kafka $KAFKA_VERSION)"
  local start=$SECONDS
  for i in $(cluster_nodes); do
    while ! metadata_ready 2 "$(node_port "$i")" "$KAFKA_CLUSTER_NODES"; do
      if ! pid=$(node_pid "$i"); then
        tail -n 40 "$(node_dir "$i")/broker.log" >&2 || true
        die "node $i exited during startup (see $(rel "$(node_dir "$i")/broker.log"))"
      fi
      if (( SECONDS - start >= KAFKA_START_TIMEOUT )); then
        tail -n 40 "$(node_dir "$i")/broker.log" >&2 || true
        die "node $i did not list $KAFKA_CLUSTER_NODES live brokers within ${KAFKA_START_TIMEOUT}s (KAFKA_START_TIMEOUT); 'cluster stop' stops the others"
      fi
      sleep 0.3
    done
  done
  local ms=$(( (${EPOCHREALTIME/[.,]/} - t0) / 1000 ))
  say "cluster ready in $((ms / 1000)).$(printf '%03d' $((ms % 1000)) | cut -c1)s ($KAFKA_CLUSTER_NODES nodes, $(rel "$KAFKA_CLUSTER_DIR"))"
  printf 'LEDGER_KAFKA_BROKERS=%s\n' "$(cluster_brokers)"
}

cluster_stop() {
  local i pid pids=() n
  for i in $(cluster_nodes); do
    if pid=$(node_pid "$i"); then
      kill -CONT "$pid" 2>/dev/null || true   # a paused node cannot shut down
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  if (( ${#pids[@]} == 0 )); then say "cluster not running"; return 0; fi
  say "stopping ${#pids[@]} node(s) (pids ${pids[*]})"
  for ((n = 0; n < KAFKA_STOP_TIMEOUT * 10; n++)); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    (( alive )) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then say "pid $pid still running after ${KAFKA_STOP_TIMEOUT}s; sending SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  done
  for i in $(cluster_nodes); do rm -f "$(node_dir "$i")/broker.pid"; done
  say "cluster stopped"
}

# The active controller: the leader with the highest epoch among the running
# nodes' quorum-state files (each voter writes the leader it knows of).
cluster_leader() {
  local i file best_epoch=-1 best=""
  for i in $(cluster_nodes); do
    file="$(node_dir "$i")/data/__cluster_metadata-0/quorum-state"
    [[ -f $file ]] && node_pid "$i" >/dev/null || continue   # a stopped node's file is stale
    local text leader epoch
    text=$(<"$file")
    [[ $text =~ \"leaderId\":(-?[0-9]+) ]] && leader=${BASH_REMATCH[1]} || continue
    [[ $text =~ \"leaderEpoch\":([0-9]+) ]] && epoch=${BASH_REMATCH[1]} || continue
    if (( leader >= 0 && epoch > best_epoch )); then best_epoch=$epoch; best="$leader epoch $epoch"; fi
  done
  [[ -n $best ]] && printf '%s\n' "$best"
}

cluster_status() {
  local i pid state down=0 leader
  for i in $(cluster_nodes); do
    if pid=$(node_pid "$i"); then
      state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
      if [[ $state == T ]]; then state="paused (SIGSTOP)"
      elif metadata_ready 3 "$(node_port "$i")"; then state="running and ready"
      else state="running, not answering"; fi
      printf 'node %s: %s (pid %s, broker 127.0.0.1:%s, controller 127.0.0.1:%s)\n' "$i" "$state" "$pid" "$(node_port "$i")" "$(node_controller_port "$i")"
    else
      down=1
      printf 'node %s: down (broker 127.0.0.1:%s, controller 127.0.0.1:%s)\n' "$i" "$(node_port "$i")" "$(node_controller_port "$i")"
    fi
  done
  if leader=$(cluster_leader); then printf 'active controller: node %s\n' "$leader"; else printf 'active controller: unknown\n'; fi
  printf 'LEDGER_KAFKA_BROKERS=%s\n' "$(cluster_brokers)"
  return "$down"
}

cluster() {
  cluster_check_env
  local sub=${1:-}
  [[ $# -gt 0 ]] && shift
  case $sub in
    start)  cluster_lock; cluster_start ;;
    stop)   cluster_lock; cluster_stop ;;
    status) cluster_status ;;
    logs)
      local i=${1:?usage: cluster logs N [-f]}; shift
      [[ $i =~ ^[0-9]+$ ]] && (( i >= 1 && i <= KAFKA_CLUSTER_NODES )) || die "no node $i"
      exec tail -n 200 ${1:+-F} "$(node_dir "$i")/broker.log" ;;
    reset)  cluster_lock; cluster_stop; rm -rf "$KAFKA_CLUSTER_DIR"; say "wiped $(rel "$KAFKA_CLUSTER_DIR")" ;;
    *) die "usage: scripts/kafka.sh cluster start|stop|status|logs N [-f]|reset" ;;
  esac
}

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
  install) lock; do_install ;;
  start)   lock; do_start ;;
  stop)    lock; do_stop ;;
  restart) lock; do_stop; do_start ;;
  status)  do_status ;;
  logs)    do_logs "$@" ;;
  reset)   lock; do_reset ;;
  cluster) cluster "$@" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
