#!/usr/bin/env bash
# Kiosk against the reference peer (../shared/bench), side by side in one run, on the peer's data set:
# req/s of getEdicions, getDarrersEdicio (num 30) and getEdicio with wrk, as ratios to `peer_1cpu`.
# Kiosk runs as PeerBenchServer (Benchmarks/PeerBenchServer): `KioskServer serve` on the data set, with the
# peer's /zip route.
#
#   Benchmarks/peer_comparison.sh                # builds release, generates the data set once, runs both
#   DURATION=20 Benchmarks/peer_comparison.sh    # longer wrk runs
#
# Environment: BENCH (default ../shared/bench), DATA (default .bench-data), DURATION (default 10),
# CONNECTIONS (default 32), PORT (default 8765). Results (JSON) go to Benchmarks/results/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="${BENCH:-$ROOT/../shared/bench}"
DATA="${DATA:-$ROOT/.bench-data}"
mkdir -p "$ROOT/Benchmarks/results"
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }

source "$ROOT/Benchmarks/release.sh"
BIN="$(release_binary PeerBenchServer)"
python3 "$BENCH/gen_data.py" "$DATA"

stamp="$(date +%Y%m%d-%H%M%S)"
cd "$ROOT"
python3 "$BENCH/load.py" --data "$DATA" --port "${PORT:-8765}" --duration "${DURATION:-10}" \
    --connections "${CONNECTIONS:-32}" \
    --clean "$DATA/zip" --clean "$DATA/kiosk-swift" \
    --json "$ROOT/Benchmarks/results/peer-$stamp.json" --logdir "$ROOT/Benchmarks/results/logs-$stamp" \
    --server "peer_1cpu=taskset -c 0 {python} {bench}/peer_server.py --data {data} --port {port}" \
    --server "kiosk=$BIN --data {data} --port {port} --log-level warning"
