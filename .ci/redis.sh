#!/usr/bin/env bash
# Start or stop the loopback redis-server the Redis store tests use: `bash .ci/redis.sh start|stop`.
# It listens on 127.0.0.1:6390 (not the default port, so it never collides with a developer's redis), keeps
# nothing on disk, and is safe to run twice: `start` reuses a server that already answers, `stop` stops only
# the server `start` launched and is a no-op otherwise.
#
# This server is deliberately NOT durable (--save '' --appendonly no: a restart loses everything), which keeps the
# Redis suite fast; never point a real deployment at such settings (README, "Shared sessions"). The durability test
# (tests/reliability/test_redis_durability.py) starts its own private redis-server with appendonly yes and
# appendfsync always in a temp dir, on a free port, and restarts it mid-run (SIGTERM, SIGKILL); it needs only the
# redis-server binary, which `start` installs.
#
# `bash .ci/redis.sh run CMD...` (what `make test` does) runs CMD with CTXBUDGET_REDIS_URL set, never installing
# anything: a URL already set (.ci/run sets one) is used as it is, so no second server is started; otherwise, when
# redis-server is installed, a private one is started on a free loopback port for CMD alone and stopped after it,
# whatever CMD's outcome; otherwise CMD runs without one, CTXBUDGET_REDIS_MISSING saying why (the tests then
# report the Redis suite as skipped in one line saying how to run it). CMD's exit status is returned.
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
    launch
}

launch() {
    if ! try_launch; then
        echo "redis: no PONG on 127.0.0.1:$PORT after ${WAIT_SECONDS}s" >&2
        exit 1
    fi
    echo "redis: started on 127.0.0.1:$PORT"
}

try_launch() {
    # Start a server on $PORT and wait for its PONG; fail (status 1) after WAIT_SECONDS, or as soon as the server
    # has gone: a daemonized redis-server whose port is taken exits at once, and its pidfile never names it.
    redis-server --save '' --appendonly no --daemonize yes --pidfile "$PIDFILE" \
        --bind 127.0.0.1 --port "$PORT" >/dev/null || return 1
    local waited=0 pid
    until ping_ok; do
        if [ "$waited" -ge $((WAIT_SECONDS * 10)) ]; then
            return 1
        fi
        if [ "$waited" -ge 20 ]; then  # 2 s: a live server has written its pidfile by now
            pid="$(cat "$PIDFILE" 2>/dev/null || true)"
            if [ -z "$pid" ] || ! grep -qs redis-server "/proc/$pid/comm"; then
                return 1
            fi
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
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

free_port() {
    # A port nothing listens on: the first of a random run of 50 above 20000 that refuses a connection, below the
    # kernel's ephemeral range. Outgoing connections (the tests' own, to another server) take their local ports
    # from that range, and a server cannot bind a port one of them holds, though nothing listens there.
    local low=32768 high base port
    if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
        read -r low _ </proc/sys/net/ipv4/ip_local_port_range
    fi
    high=$((low > 20100 ? low - 50 : 60000))
    base=$((20000 + RANDOM % (high - 20000)))
    for port in $(seq "$base" $((base + 49))); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    echo "redis: no free loopback port in $base-$((base + 49))" >&2
    exit 1
}

run() {
    if [ -n "${CTXBUDGET_REDIS_URL:-}" ]; then
        "$@"
        return
    fi
    if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
        CTXBUDGET_REDIS_MISSING="redis-server is not installed" "$@"
        return
    fi
    trap 'stop >/dev/null' EXIT
    local attempt
    for attempt in 1 2 3; do  # a port taken between the probe and the bind: another one
        PORT="$(free_port)"
        PIDFILE="/tmp/ctxbudget-redis-$PORT.pid"
        if try_launch; then
            CTXBUDGET_REDIS_URL="redis://127.0.0.1:$PORT/0" "$@"
            return
        fi
        stop >/dev/null
    done
    echo "redis: no private server answered on 3 free loopback ports (last $PORT)" >&2
    exit 1
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    run)
        shift
        run "$@"
        ;;
    *)
        echo "usage: $0 start|stop|run CMD..." >&2
        exit 2
        ;;
esac
