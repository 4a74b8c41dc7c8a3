#!/usr/bin/env bash
# Makes sure the PostgreSQL server the ledger uses is up (default
# 127.0.0.1:5432, trust auth). On these machines it is Debian's cluster;
# `start` starts it when it is installed but stopped. The ledger creates its
# own database and applies its own migrations at start.
set -euo pipefail
host="${PGHOST:-127.0.0.1}"
port="${PGPORT:-5432}"
ready() { pg_isready -q -h "$host" -p "$port" 2>/dev/null; }
case "${1:-status}" in
  start)
    if ready; then echo "postgres: up on $host:$port"; exit 0; fi
    if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
      version="$(ls /etc/postgresql | sort -V | tail -1)"
      pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    fi
    for _ in $(seq 1 60); do ready && { echo "postgres: up on $host:$port"; exit 0; }; sleep 0.5; done
    echo "postgres: not reachable on $host:$port" >&2
    exit 1
    ;;
  status)
    ready && echo "postgres: up on $host:$port" || { echo "postgres: down"; exit 1; }
    ;;
  *)
    echo "usage: scripts/postgres.sh start|status" >&2
    exit 2
    ;;
esac
