#!/usr/bin/env bash
# Times `KioskServer stats` on a year of generated data (default: one million downloads).
#
#   Benchmarks/stats_bench.sh                 # builds KioskServer as deployed (Benchmarks/release.sh)
#   KIOSK_BIN=path/to/KioskServer ROWS=2000000 Benchmarks/stats_bench.sh
#
# The database is created and migrated by the binary itself (`user add`, `user subscribe`), then
# filled by Benchmarks/stats_bench_data.py with sqlite3 (the v3 triggers keep the per-day counts as
# the rows go in), then each `stats` variant runs RUNS times (default 5); the best and the median
# wall times are printed. Target: under a second.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-5}
BIN=${KIOSK_BIN:-}
if [ -z "$BIN" ]; then
    source Benchmarks/release.sh
    BIN="$(release_binary KioskServer)"
fi

WORK=$(mktemp -d /tmp/kiosk-stats-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
sed -e "s#database: data/kiosk.sqlite#database: $WORK/kiosk.sqlite#" \
    -e "s#editions: Editions#editions: $WORK/Editions#" \
    -e "s#samples: Samples#\# samples: none#" Config/kiosk.yaml > "$WORK/kiosk.yaml"
export KIOSK_SECRET=stats-benchmark-secret-stats-benchmark-0123

echo "binary: $BIN"
echo bench-password | "$BIN" user add --config "$WORK/kiosk.yaml" --username bench --password-stdin > /dev/null
"$BIN" user subscribe --config "$WORK/kiosk.yaml" --username bench --edition 1 --until 2030-01-01 > /dev/null
python3 Benchmarks/stats_bench_data.py "$WORK/kiosk.sqlite" "$ROWS"
echo "database: $(du -h "$WORK/kiosk.sqlite" | cut -f1)"

measure() {
    local label=$1; shift
    local times=()
    for _ in $(seq "$RUNS"); do
        local start end
        start=$(date +%s.%N)
        "$BIN" stats --config "$WORK/kiosk.yaml" "$@" > "$WORK/out"
        end=$(date +%s.%N)
        times+=("$(echo "$end - $start" | bc)")
    done
    local sorted
    sorted=$(printf '%s\n' "${times[@]}" | sort -n)
    printf '%-44s best %6.3f s   median %6.3f s   (%s lines)\n' "$label" \
        "$(echo "$sorted" | head -1)" "$(echo "$sorted" | sed -n "$(( (RUNS + 1) / 2 ))p")" "$(wc -l < "$WORK/out")"
}

"$BIN" stats --config "$WORK/kiosk.yaml" --format json > /dev/null   # warm the page cache
measure "stats (whole year, table)"
measure "stats --format json" --format json
measure "stats --format csv" --format csv
measure "stats --from 2025-01-01 --to 2025-01-31" --from 2025-01-01 --to 2025-01-31
measure "stats --app presencia" --app presencia
measure "stats --edition 1 --format json" --edition 1 --format json
