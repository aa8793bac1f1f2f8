#!/usr/bin/env bash
# Starts (and stops) a kvscope cluster on loopback: N replicas sharing a KV tier in redis-server,
# behind nginx (deploy/nginx/kvscope.conf.template). Everything runs as child processes of this
# script's caller, with its state in one directory.
#
#   deploy/local-cluster.sh start [-n 3] [--port 8080] [--dir /tmp/kvscope-cluster] [--model M.gguf]
#                                 [--kvscope path/to/kvscope] [-- more `kvscope serve` arguments]
#   deploy/local-cluster.sh status [--dir DIR]
#   deploy/local-cluster.sh stop   [--dir DIR]
#
# Ports: nginx on --port, replicas on port+1 .. port+N, redis-server on port+100.
# Files in DIR: replica-I.pid/.log/.port, redis.pid/.log, nginx.conf, nginx.pid, nginx-*.log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}
[ -n "$cmd" ] && shift
n=3 port=8080 dir=${TMPDIR:-/tmp}/kvscope-cluster model="" bin="" extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n|--replicas) n=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --kvscope) bin=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "error: unknown option '$1'" >&2; exit 1 ;;
  esac
done

die() { echo "error: $*" >&2; exit 1; }

wait_http() {  # url, seconds[, pid that must stay alive meanwhile]
  local t=0
  until curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; do
    t=$((t + 1))
    [ $t -gt $(($2 * 5)) ] && return 1
    [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && return 1
    sleep 0.2
  done
}

stop_pidfile() {
  local f=$1
  [ -f "$f" ] || return 0
  local pid
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

case "$cmd" in
  start)
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || die "-n must be a positive number"
    [[ "$port" =~ ^[0-9]+$ ]] || die "--port must be a number"
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || die "nginx not found (apt-get install nginx)"
    command -v redis-server >/dev/null || die "redis-server not found (apt-get install redis-server)"
    nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
    if [ -z "$bin" ]; then
      bin=$(command -v kvscope || true)
      [ -z "$bin" ] && [ -x "$here/../build/release/kvscope" ] && bin="$here/../build/release/kvscope"
    fi
    [ -n "$bin" ] && [ -x "$bin" ] || die "kvscope binary not found (give --kvscope PATH)"
    mkdir -p "$dir/nginx-tmp"
    dir=$(cd "$dir" && pwd)
    [ -f "$dir/nginx.pid" ] && kill -0 "$(cat "$dir/nginx.pid")" 2>/dev/null && die "a cluster is already running in $dir"
    rport=$((port + 100))
    redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --dir "$dir" \
      --maxmemory 512mb --maxmemory-policy allkeys-lru --daemonize no >"$dir/redis.log" 2>&1 &
    echo $! >"$dir/redis.pid"
    for _ in $(seq 1 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$rport" ping >/dev/null 2>&1 || die "redis-server did not start (see $dir/redis.log)"
    servers=""
    for i in $(seq 1 "$n"); do
      p=$((port + i))
      margs=()
      [ -n "$model" ] && margs=(-m "$model")
      "$bin" serve "${margs[@]}" --host 127.0.0.1 --port "$p" --kv-tier "redis://127.0.0.1:$rport" "${extra[@]}" \
        >"$dir/replica-$i.log" 2>&1 &
      echo $! >"$dir/replica-$i.pid"
      echo "$p" >"$dir/replica-$i.port"
      servers+="    server 127.0.0.1:$p max_fails=1 fail_timeout=10s;"$'\n'
    done
    # Replace each field; @SERVERS@ stands alone on its line.
    awk -v dir="$dir" -v listen="127.0.0.1:$port" -v servers="$servers" '
      /^@SERVERS@$/ { printf "%s", servers; next }
      { gsub(/@DIR@/, dir); gsub(/@LISTEN@/, listen); print }' \
      "$here/nginx/kvscope.conf.template" >"$dir/nginx.conf"
    "$nginx_bin" -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" || die "nginx rejected $dir/nginx.conf"
    "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" -g 'daemon off;' >"$dir/nginx.out" 2>&1 &
    echo $! >"$dir/nginx.pid.main"
    for i in $(seq 1 "$n"); do
      wait_http "http://127.0.0.1:$((port + i))/health" 120 "$(cat "$dir/replica-$i.pid")" ||
        die "replica $i did not become ready (see $dir/replica-$i.log): $(tail -n 3 "$dir/replica-$i.log" 2>/dev/null)"
    done
    wait_http "http://127.0.0.1:$port/router-health" 20 "$(cat "$dir/nginx.pid.main")" ||
      die "nginx did not start (see $dir/nginx-error.log): $(tail -n 3 "$dir/nginx-error.log" "$dir/nginx.out" 2>/dev/null)"
    echo "kvscope cluster: http://127.0.0.1:$port/v1 -> $n replicas (ports $((port + 1))-$((port + n))), KV tier redis://127.0.0.1:$rport, state in $dir"
    ;;
  status)
    for f in "$dir"/replica-*.pid "$dir/nginx.pid.main" "$dir/redis.pid"; do
      [ -f "$f" ] || continue
      if kill -0 "$(cat "$f")" 2>/dev/null; then s=up; else s=down; fi
      echo "$(basename "$f" .pid): $s (pid $(cat "$f"))"
    done
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    stop_pidfile "$dir/nginx.pid.main"
    for f in "$dir"/replica-*.pid; do [ -f "$f" ] && stop_pidfile "$f"; done
    stop_pidfile "$dir/redis.pid"
    echo "kvscope cluster in $dir stopped"
    ;;
  *)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "$cmd" ] && exit 1
    die "unknown command '$cmd' (start, status or stop)"
    ;;
esac
