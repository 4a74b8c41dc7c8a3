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
  hex=$(timeout "${1:-1}" bash -c '
      exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
      # size=23 | api_key=3 (Metadata) | version=4 | correlation_id="kfk1"
      # | client_id="kafka.sh" | topics=null (all) | allow_auto_topic_creation=false
      printf "\x00\x00\x00\x17\x00\x03\x00\x04kfk1\x00\x08kafka.sh\xff\xff\xff\xff\x00" >&3
      head -c 16 <&3 | od -An -v -tx1 | tr -d " \n"
    ' _ "$KAFKA_PORT" 2>/dev/null) || return 1
  # response: size(4) correlation_id(4) throttle_time_ms(4) brokers.length(4)
  [[ ${#hex} -eq 32 && ${hex:8:8} == 6b666b31 ]] || return 1
  (( 16#${hex:24:8} >= 1 && 16#${hex:24:8} < 16#80000000 ))
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
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
