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

# Kiosk's own floor in the same run: GET /healthz with the same wrk settings, and the server's CPU.
PORT_HZ="${PORT:-8765}"
"$BIN" --data "$DATA" --port "$PORT_HZ" --log-level warning >"$ROOT/Benchmarks/results/logs-$stamp/healthz-server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 300); do curl -fs -o /dev/null "http://127.0.0.1:$PORT_HZ/healthz" && break; sleep 0.1; done
wrk -t2 -c"${CONNECTIONS:-32}" -d2s "http://127.0.0.1:$PORT_HZ/healthz" >/dev/null
ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
before=$(ticks)
result=$(wrk -t2 -c"${CONNECTIONS:-32}" -d"${DURATION:-10}s" --latency "http://127.0.0.1:$PORT_HZ/healthz")
after=$(ticks)
rps=$(echo "$result" | awk '/Requests\/sec/ {print $2}')
p99=$(echo "$result" | awk '$1 == "99%" {print $2}')
cpu=$(python3 -c "print(($after - $before) / $(getconf CLK_TCK))")
python3 - "$rps" "$cpu" "${DURATION:-10}" "$p99" <<'PY'
import sys
rps, cpu, duration, p99 = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print(f"kiosk GET /healthz: {rps:,.0f} req/s, p99 {p99}, server CPU {cpu:.2f} s, {rps * duration / cpu:,.0f} req per server CPU-second")
PY
kill "$server"; wait "$server" 2>/dev/null || true
