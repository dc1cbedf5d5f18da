#!/usr/bin/env bash
# Soak: MINUTES (default 10) of steady mixed load on the release server serving the reference data set:
# all six XML-RPC methods, page images and whole bundles by their signed links, each kind from its own
# wrk process at a fixed pace (Benchmarks/soak.lua). Reports the server's RSS every minute, then per
# kind: requests, req/s, p50/p99/max latency and errors (transport errors, non-200s, faults). Exits
# non-zero when anything failed.
#
#   Benchmarks/soak.sh [MINUTES]     # needs wrk, python3 and the data set (peer_comparison.sh makes it)
#
# Environment: DATA (default .bench-data), PORT (default 8781), KIOSK_SOAK_BIN (the server; default: built here).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MINUTES="${1:-10}"
DATA="${DATA:-$ROOT/.bench-data}"
PORT="${PORT:-8781}"
source "$ROOT/Benchmarks/release.sh"
BIN="${KIOSK_SOAK_BIN:-$(release_binary PeerBenchServer)}"   # KIOSK_SOAK_BIN: a server built elsewhere
[ -f "$DATA/dataset.json" ] || { echo "no data set in $DATA (run Benchmarks/peer_comparison.sh once)" >&2; exit 1; }
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    kill "$KIOSK_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN" --data "$DATA" --port "$PORT" --log-level warning > "$WORK/server.log" 2>&1 &
KIOSK_PID=$!
for _ in $(seq 300); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

# One body per method (checked once: none may fault) and the signed links of a page image and a bundle.
python3 - "$PORT" "$WORK" <<'PY'
import sys, xmlrpc.client, urllib.request
port, work = sys.argv[1], sys.argv[2]
proxy = xmlrpc.client.ServerProxy(f"http://kiosk:secret@127.0.0.1:{port}/RPC2")
editions = proxy.epquiosc.getEdicions("quiosc", "")
edition = editions[0]
issue = proxy.epquiosc.getEdicio("quiosc", "", edition["id"], edition["data"], "0", "ios")
calls = {
    "getEdicions": ("epquiosc.getEdicions", ("quiosc", "")),
    "getDarrersEdicio": ("epquiosc.getDarrersEdicio", ("quiosc", "", edition["id"], "", 7, "DESC")),
    "getEdicio": ("epquiosc.getEdicio", ("quiosc", "", edition["id"], edition["data"], "0", "ios")),
    "registrar": ("epusuaris.registrar", ("quiosc", "@DEVICE@", "", "", "soak", "ios")),
    "consumirDemo": ("epusuaris.consumirDemo", ("quiosc", "@DEVICE@", "", "soak", "android", "")),
    "hashQuiosc": ("epusuaris.hashQuiosc", ("quiosc", "", "", "portada")),
}
for name, (method, params) in calls.items():
    body = xmlrpc.client.dumps(params, method, encoding="utf-8")
    with open(f"{work}/{name}.xml", "w") as f:
        f.write(body)
    getattr(proxy, method)(*[p.replace("@DEVICE@", "probe") if isinstance(p, str) else p for p in params])
with open(f"{work}/links", "w") as f:
    f.write(issue["pagines"][0]["jpgA"] + "\n" + issue["zip"] + "\n")
PY
JPG="$(sed -n 1p "$WORK/links")"; ZIP="$(sed -n 2p "$WORK/links")"
AUTH="$(printf 'kiosk:secret' | base64)"
RPC="http://127.0.0.1:$PORT/RPC2"

# kind, connections, pause (ms), target
KINDS=(
    "getEdicions 3 5 $RPC"
    "getDarrersEdicio 3 5 $RPC"
    "getEdicio 3 5 $RPC"
    "registrar 1 10 $RPC"
    "consumirDemo 1 10 $RPC"
    "hashQuiosc 1 20 $RPC"
    "page-jpgA 2 10 $JPG"
    "bundle 1 1000 $ZIP"
)
SECONDS_=$((MINUTES * 60))
echo "## soak: $MINUTES min, data set $DATA, server pid $KIOSK_PID"
for entry in "${KINDS[@]}"; do
    read -r kind connections pause target <<< "$entry"
    body=""; [ -f "$WORK/$kind.xml" ] && body="$WORK/$kind.xml"
    SOAK_BODY="$body" SOAK_AUTH="$AUTH" SOAK_DELAY="$pause" \
        wrk -t1 -c"$connections" -d"${SECONDS_}s" --timeout 10s --latency -s "$ROOT/Benchmarks/soak.lua" "$target" \
        > "$WORK/wrk-$kind.out" 2>&1 &
    PIDS+=($!)
done

rss() { awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$KIOSK_PID/status"; }
START_RSS=$(rss)
echo "minute 0: RSS $START_RSS MiB"
for minute in $(seq 1 "$MINUTES"); do
    sleep 60
    echo "minute $minute: RSS $(rss) MiB"
done
for pid in "${PIDS[@]}"; do wait "$pid" || true; done
PIDS=()

set +e
python3 - "$WORK" "$SECONDS_" "${KINDS[@]}" <<'PY'
import json, sys
work, seconds, kinds = sys.argv[1], int(sys.argv[2]), [k.split()[0] for k in sys.argv[3:]]
print(f"\n{'kind':18s} {'requests':>9s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'max ms':>8s} {'MB/s':>7s} {'errors':>7s}")
failed, total = 0, 0
for kind in kinds:
    text = open(f"{work}/wrk-{kind}.out").read()
    line = next((l for l in text.splitlines() if l.startswith("SOAKJSON ")), None)
    if line is None:
        print(f"{kind:18s} wrk failed: {text.strip()[:200]}")
        failed += 1
        continue
    r = json.loads(line[9:])
    errors = r["errors"] + r["faults"] + r["bad"]
    failed += errors
    total += r["requests"]
    secs = r["duration_us"] / 1e6
    print(f"{kind:18s} {r['requests']:9d} {r['requests'] / secs:8.0f} {r['p50_us'] / 1000:8.2f} {r['p99_us'] / 1000:8.2f} "
          f"{r['max_us'] / 1000:8.1f} {r['bytes'] / secs / 1e6:7.1f} {errors:7d}")
print(f"\ntotal {total} requests, {total / seconds:.0f} req/s, {failed} errors")
sys.exit(1 if failed else 0)
PY
STATUS=$?
echo "RSS: $START_RSS MiB at the start, $(rss) MiB at the end"
grep -E '"level":"(error|critical)"| error | critical ' "$WORK/server.log" | head -5 || true
exit $STATUS
