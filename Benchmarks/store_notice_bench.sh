#!/usr/bin/env bash
# Store notifications, end to end (issue 29): signed App Store Server Notifications V2 posted to the release server
# (`POST /store/apple/quiosc`), one phase per outcome (applied, duplicate, recorded): notifications/s and per server
# CPU-second; then a renewal storm of 100 000 DID_RENEW notifications (10 000 subscriptions × 10 renewals, every one
# applied) while a steady catalogue load (getEdicions and getDarrersEdicio, 400 calls/s in all) runs: the catalogue's
# p99 alone, during the storm and after, side by side. Target: the storm's p99 ≤ 1.2× the baseline's.
#
#   Benchmarks/store_notice_bench.sh                      # SQLite; builds KioskServer as deployed (Benchmarks/release.sh)
#   KIOSK_BENCH_POSTGRES=postgres://postgres@127.0.0.1:55432/kiosk_notice_bench Benchmarks/store_notice_bench.sh
#   ARGS="--storm 20000 --notices 2000" Benchmarks/store_notice_bench.sh      # smaller; ARGS="--perf 20": perf record
#
# Benchmarks/store_notice_bench.py does the work: the server, its configuration and the signed notifications come
# from Tests/Clients/purchases.py (imported); the notifications are signed before any timing and posted by wrk
# (Benchmarks/store_notice.lua), the catalogue by wrk with Benchmarks/soak.lua. Needs wrk and Python's cryptography,
# PyJWT and app-store-server-library (as the purchase tests). With KIOSK_BENCH_POSTGRES, the database named in the URL
# is dropped and created again (psql). Exits non-zero when a notification is answered other than its phase expects,
# a catalogue call fails, or the database does not hold what was applied.
#
# Environment: KIOSK_BIN (a server built elsewhere), KIOSK_BENCH_POSTGRES, ARGS (more store_notice_bench.py options),
# KEEP (keep the work directory: signed bodies, server log, wrk outputs, perf data). The JSON report goes to
# Benchmarks/results/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
python3 -c "import jwt, cryptography, appstoreserverlibrary" \
    || { echo "python3 -m pip install app-store-server-library==3.1.2 cryptography pyjwt" >&2; exit 1; }
source "$ROOT/Benchmarks/release.sh"
BIN=${KIOSK_BIN:-$(release_binary KioskServer)}
echo "binary: $BIN ($(stat -c %y "$BIN" | cut -d. -f1))"
mkdir -p "$ROOT/Benchmarks/results"
stamp="$(date +%Y%m%d-%H%M%S)"
WORK=$(mktemp -d /tmp/kiosk-store-notice-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "work directory kept: $WORK" || rm -rf "$WORK"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {   # LABEL DATABASE
    echo "## $1"
    # shellcheck disable=SC2086
    python3 "$ROOT/Benchmarks/store_notice_bench.py" "$BIN" "$WORK/$1" "$2" ${ARGS:-} \
        --json "$ROOT/Benchmarks/results/store-notice-$1-$stamp.json"
}
status=0
run sqlite "$WORK/sqlite.kiosk.sqlite" || status=$?
if [ -n "${KIOSK_BENCH_POSTGRES:-}" ]; then
    command -v psql >/dev/null || { echo "psql is needed (apt-get install postgresql-client)" >&2; exit 1; }
    name="${KIOSK_BENCH_POSTGRES##*/}"; name="${name%%\?*}"
    psql -X -q -v ON_ERROR_STOP=1 -d "${KIOSK_BENCH_POSTGRES%/*}/postgres" \
        -c "DROP DATABASE IF EXISTS \"$name\"" -c "CREATE DATABASE \"$name\""
    run postgres "$KIOSK_BENCH_POSTGRES" || status=$?
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "results: $ROOT/Benchmarks/results/store-notice-*-$stamp.json"
exit "$status"
