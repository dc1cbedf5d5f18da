#!/usr/bin/env bash
# Webhook deliveries and the outbox's cost on a publish, end to end against the release server:
#  1. deliveries/s and per server CPU-second: one KioskServer with 10 file-configured endpoints on a private nginx
#     (`return 204;`, loopback, webhooks.allow_hosts ["127.0.0.1"]), `KioskServer user import` of 10 000 readers
#     (100 000 deliveries), timed from the import's end until the database holds every delivery delivered; once per
#     webhooks.concurrency value (16 and 64). Checked against nginx's access log: exactly readers × endpoints
#     requests, each (webhook-id, endpoint) once.
#  2. 30 PUT /publish of a one-page issue, median and p90, (a) with no endpoints and no push, then (b) with 10
#     endpoints taking issue.published and 100 000 push registrations (push configured; APNs on a loopback port where
#     nothing listens: no APNs stand-in); the ratio (b) / (a).
#
#   Benchmarks/webhook_bench.sh                       # SQLite; builds KioskServer as deployed (Benchmarks/release.sh)
#   KIOSK_BENCH_POSTGRES=postgres://postgres@127.0.0.1:55432/kiosk_webhook_bench Benchmarks/webhook_bench.sh
#   ARGS="--readers 1000 --concurrency 16 --publishes 10 --registrations 10000" Benchmarks/webhook_bench.sh   # smaller
#
# Benchmarks/webhook_bench.py does the work (the server is started as Tests/Clients/cluster.py starts it, imported).
# Needs nginx (/usr/sbin/nginx), openssl, and psql with KIOSK_BENCH_POSTGRES: the databases NAME_c16, NAME_c64,
# NAME_publish_a and NAME_publish_b (NAME: the URL's database) are dropped and created again on that server, and
# dropped at the end. Exits non-zero when a delivery is lost, duplicated or retried, a publish fails, or the server
# does not stop cleanly.
#
# Environment: KIOSK_BIN (a server built elsewhere), KIOSK_BENCH_POSTGRES, ARGS (more webhook_bench.py options),
# KEEP (keep the work directory: configurations, server logs, nginx's access logs). The JSON report goes to
# Benchmarks/results/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
[ -x /usr/sbin/nginx ] || { echo "nginx is needed (apt-get install nginx)" >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is needed" >&2; exit 1; }
if [ -n "${KIOSK_BIN:-}" ]; then
    BIN=$KIOSK_BIN
else
    source "$ROOT/Benchmarks/release.sh"
    BIN=$(release_binary KioskServer)
fi
echo "binary: $BIN ($(stat -c %y "$BIN" | cut -d. -f1))"
echo "machine: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
mkdir -p "$ROOT/Benchmarks/results"
stamp="$(date +%Y%m%d-%H%M%S)"
WORK=$(mktemp -d /tmp/kiosk-webhook-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "work directory kept: $WORK" || rm -rf "$WORK"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {   # LABEL DATABASE
    echo "## $1"
    # shellcheck disable=SC2086
    python3 "$ROOT/Benchmarks/webhook_bench.py" "$BIN" "$WORK/$1" "$2" ${ARGS:-} \
        --json "$ROOT/Benchmarks/results/webhook-$1-$stamp.json"
}
status=0
run sqlite sqlite || status=$?
if [ -n "${KIOSK_BENCH_POSTGRES:-}" ]; then
    command -v psql >/dev/null || { echo "psql is needed (apt-get install postgresql-client)" >&2; exit 1; }
    run postgres "$KIOSK_BENCH_POSTGRES" || status=$?
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "results: $ROOT/Benchmarks/results/webhook-*-$stamp.json"
exit "$status"
