#!/usr/bin/env bash
# Start or stop the loopback redis-server the Redis store tests use: `bash .ci/redis.sh start|stop`.
# It listens on 127.0.0.1:6390 (not the default port, so it never collides with a developer's redis), keeps
# nothing on disk, and is safe to run twice: `start` reuses a server that already answers, `stop` stops only
# the server `start` launched and is a no-op otherwise.
set -euo pipefail

PORT=6390
PIDFILE=/tmp/ctxbudget-redis.pid
WAIT_SECONDS=20

ping_ok() {
    [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" = "PONG" ]
}

install_if_missing() {
    if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
        return
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null
}

start() {
    install_if_missing
    if ping_ok; then
        echo "redis: already answering on 127.0.0.1:$PORT"
        return
    fi
    redis-server --save '' --appendonly no --daemonize yes --pidfile "$PIDFILE" \
        --bind 127.0.0.1 --port "$PORT"
    local waited=0
    until ping_ok; do
        if [ "$waited" -ge $((WAIT_SECONDS * 10)) ]; then
            echo "redis: no PONG on 127.0.0.1:$PORT after ${WAIT_SECONDS}s" >&2
            exit 1
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    echo "redis: started on 127.0.0.1:$PORT"
}

stop() {
    # Only stop the server `start` launched (its pidfile names a live redis-server), never someone else's.
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null || true)"
    if [ -z "$pid" ] || ! grep -qs redis-server "/proc/$pid/comm"; then
        rm -f "$PIDFILE"
        echo "redis: nothing of ours running on 127.0.0.1:$PORT"
        return
    fi
    kill "$pid"
    local waited=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$waited" -ge $((WAIT_SECONDS * 10)) ]; then
            echo "redis: pid $pid still running after ${WAIT_SECONDS}s" >&2
            exit 1
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    rm -f "$PIDFILE"
    echo "redis: stopped on 127.0.0.1:$PORT"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *)
        echo "usage: $0 start|stop" >&2
        exit 2
        ;;
esac
