#!/usr/bin/env bash
# Bundle download throughput: Kiosk serving a signed link vs nginx serving the same file, side by side,
# with 1 and 32 concurrent clients (wrk), and Kiosk's memory while 50 clients download at once.
#
#   Benchmarks/download_bench.sh        # needs: wrk, nginx, the reference data set (peer_comparison.sh makes it)
#
# Environment: DATA (default .bench-data), DURATION (default 10), PORT (default 8771), NGINX_PORT (default 8772).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DATA="${DATA:-$ROOT/.bench-data}"
DURATION="${DURATION:-10}"
PORT="${PORT:-8771}"
NGINX_PORT="${NGINX_PORT:-8772}"
source "$ROOT/Benchmarks/release.sh"
BIN="$(release_binary PeerBenchServer)"
WORK="$(mktemp -d)"
trap 'kill $KIOSK_PID 2>/dev/null; nginx -p "$WORK" -c "$WORK/nginx.conf" -s stop 2>/dev/null; rm -rf "$WORK"' EXIT

"$BIN" --data "$DATA" --port "$PORT" --log-level warning &
KIOSK_PID=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

# The bundle link from getEdicio (builds the bundle if needed).
read -r LINK RELATIVE < <(python3 - "$PORT" <<'PY'
import sys, xmlrpc.client, urllib.parse
p = xmlrpc.client.ServerProxy(f"http://kiosk:secret@127.0.0.1:{sys.argv[1]}/RPC2")
ed = p.epquiosc.getEdicions("quiosc", "")[0]
issue = p.epquiosc.getEdicio("quiosc", "", ed["id"], ed["data"], "", "bench")
path = urllib.parse.urlparse(issue["zip"]).path
print(issue["zip"], "/".join(path.split("/")[4:]))
PY
)
SIZE=$(stat -c %s "$DATA/$RELATIVE")
cat > "$WORK/nginx.conf" <<NGINX
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    server { listen 127.0.0.1:$NGINX_PORT; root $DATA; }
}
NGINX
nginx -p "$WORK" -c "$WORK/nginx.conf"
NGINX_URL="http://127.0.0.1:$NGINX_PORT/$RELATIVE"
echo "## bundle: $RELATIVE, $SIZE bytes"

rate() {  # URL CONNECTIONS -> MB/s
    wrk -t"$([ "$2" = 1 ] && echo 1 || echo 2)" -c"$2" -d"${DURATION}s" "$1" | awk '/Transfer\/sec/ {
        v=$2; u=substr(v, length(v)-1); n=substr(v, 1, length(v)-2);
        if (u=="GB") n*=1024; else if (u=="KB") n/=1024; printf "%.0f", n }'
}
for c in 1 32; do
    k=$(rate "$LINK" "$c"); n=$(rate "$NGINX_URL" "$c")
    echo "clients $c: kiosk $k MiB/s, nginx $n MiB/s, ratio $(python3 -c "print(f'{$k/$n:.2f}')")"
done

rss() { awk '/VmRSS/ {print $2}' "/proc/$KIOSK_PID/status"; }
idle=$(rss); peak=$idle
wrk -t2 -c50 -d"${DURATION}s" "$LINK" >/dev/null &
WRK=$!
while kill -0 $WRK 2>/dev/null; do r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.2; done
echo "memory: idle $((idle / 1024)) MiB, peak with 50 downloading clients $((peak / 1024)) MiB, +$(((peak - idle) / 1024)) MiB"
