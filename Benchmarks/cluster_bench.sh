#!/usr/bin/env bash
# Beyond one machine, measured in one run (issue 15, "Benchmarks"): the shared load.py methods against the
# reference peer pinned to one CPU, one Kiosk on SQLite, one Kiosk on PostgreSQL and two Kiosk instances on
# PostgreSQL behind nginx, all on the peer's data set, as ratios; then `db copy` of a year of data
# (1,000,000 downloads) into an empty PostgreSQL database; then `stats` on that year, PostgreSQL against
# SQLite, with the JSON outputs compared.
#
#   Benchmarks/cluster_bench.sh                 # builds release, starts and stops everything it uses
#   DURATION=20 ROWS=2000000 Benchmarks/cluster_bench.sh
#   KIOSK_BIN=path/to/KioskServer SKIP_LOAD=1 Benchmarks/cluster_bench.sh   # only db copy and stats
#
# It starts its own PostgreSQL 15 (initdb in a temporary directory, port PGPORT, trust on loopback; as root
# through `runuser -u postgres --`), the Kiosk instances, nginx (Deploy/nginx-kiosk-cluster.conf filled in
# as Tests/Clients/cluster.py does, plain HTTP on loopback) and the peer, and stops them on exit.
#
# Kiosk on SQLite is PeerBenchServer (Benchmarks/PeerBenchServer: `KioskServer serve` on the data set, with
# the peer's /zip route), as in peer_comparison.sh. PostgreSQL holds the data set by `db copy` of the SQLite
# database PeerBenchServer creates (in DATA/kiosk-swift). The PostgreSQL instances are `KioskServer serve`
# on a configuration holding the data set's catalogue as PeerBenchServer sets it (all lines free, the same
# apps and editions); they then have no /zip/ peer route, so load.py's one check of that route (401 without
# credentials) is skipped for them and said so. load.py itself is unchanged (imported; its three methods,
# wrk settings and tables as in peer_comparison.sh).
#
# Environment: BENCH (default ../shared/bench), DATA (default .bench-data), DURATION (default 10),
# CONNECTIONS (default 32), PORT (default 8765; instances of the cluster on PORT+1, PORT+2), PGPORT
# (default 55434), ROWS (default 1000000), RUNS (default 5), KIOSK_BIN, PEER_BENCH_BIN (PeerBenchServer),
# SKIP_LOAD, SKIP_STATS, KEEP (keep the work directory). Results (JSON and logs) go to Benchmarks/results/.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="$(cd "${BENCH:-$ROOT/../shared/bench}" && pwd)"
DATA="${DATA:-$ROOT/.bench-data}"
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-8765}
PGPORT=${PGPORT:-55434}
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-5}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
NGINX=${NGINX:-/usr/sbin/nginx}
for tool in wrk psql bc taskset unzip; do
    command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install wrk postgresql-client bc util-linux unzip)" >&2; exit 1; }
done
[ -x "$PGBIN/initdb" ] || { echo "PostgreSQL 15 server binaries are needed in $PGBIN (apt-get install postgresql-15)" >&2; exit 1; }
[ -x "$NGINX" ] || { echo "nginx is needed at $NGINX (apt-get install nginx-light)" >&2; exit 1; }
mkdir -p "$ROOT/Benchmarks/results"
stamp="$(date +%Y%m%d-%H%M%S)"
RESULTS="$ROOT/Benchmarks/results/cluster-$stamp"
mkdir -p "$RESULTS"

source "$ROOT/Benchmarks/release.sh"
BIN=${KIOSK_BIN:-$(release_binary KioskServer)}
echo "binary: $BIN ($(stat -c %y "$BIN" | cut -d. -f1))"
if [ -z "${SKIP_LOAD:-}" ]; then
    PEER_BIN=${PEER_BENCH_BIN:-$(release_binary PeerBenchServer)}
    echo "benchmark server: $PEER_BIN ($(stat -c %y "$PEER_BIN" | cut -d. -f1))"
fi
[ -n "${SKIP_LOAD:-}" ] || python3 "$BENCH/gen_data.py" "$DATA"
DATA="$(cd "$DATA" 2>/dev/null && pwd || echo "$DATA")"

WORK=$(mktemp -d /tmp/kiosk-cluster-bench.XXXXXX)
chmod 755 "$WORK"        # the postgres user must reach its data directory inside
export KIOSK_SECRET=cluster-benchmark-secret-0123456789abcdef
export KIOSK_LINK_SECRET=cluster-benchmark-link-secret-0123456789
PG_STARTED=""
STARTED_PIDS=()

as_postgres() {   # initdb and pg_ctl refuse to run as root
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cleanup() {
    local pid
    for pid in "${STARTED_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${STARTED_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -z "$PG_STARTED" ] || as_postgres "$PGBIN/pg_ctl" -D "$WORK/pg/data" stop -m fast >/dev/null 2>&1 || true
    if [ -n "${KEEP:-}" ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --------------------------------------------------------------------------- PostgreSQL of our own
mkdir -p "$WORK/pg"
[ "$(id -u)" != 0 ] || chown postgres: "$WORK/pg"
as_postgres "$PGBIN/initdb" -D "$WORK/pg/data" -A trust -U postgres -E UTF8 --locale=C >"$WORK/pg/initdb.log" 2>&1 \
    || { cat "$WORK/pg/initdb.log" >&2; exit 1; }
as_postgres "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/server.log" -w \
    -o "-p $PGPORT -c listen_addresses=127.0.0.1 -k $WORK/pg -c max_connections=200" start >/dev/null \
    || { cat "$WORK/pg/server.log" >&2; exit 1; }
PG_STARTED=1
echo "postgresql: $("$PGBIN/postgres" --version), port $PGPORT, data in $WORK/pg/data (defaults otherwise: fsync on, synchronous_commit on)"
pg_url() { echo "postgres://postgres@127.0.0.1:$PGPORT/$1"; }
psql_do() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres "$@"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {   # PORT PID LOG
    for _ in $(seq 600); do
        port_open "$1" && return 0
        kill -0 "$2" 2>/dev/null || { echo "server (pid $2) exited before listening:" >&2; tail -20 "$3" >&2; return 1; }
        sleep 0.1
    done
    echo "port $1 not open after 60 s" >&2; tail -20 "$3" >&2; return 1
}
stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# --------------------------------------------------------------------------- 1. load.py, four configurations
if [ -z "${SKIP_LOAD:-}" ]; then
    cd "$ROOT"
    # The SQLite database of PeerBenchServer (imported from dataset.json), which PostgreSQL gets a copy of.
    rm -rf "$DATA/zip" "$DATA/kiosk-swift"
    "$PEER_BIN" --data "$DATA" --port "$PORT" --log-level notice >"$RESULTS/probe.log" 2>&1 &
    probe=$!; STARTED_PIDS+=("$probe")
    wait_port "$PORT" "$probe" "$RESULTS/probe.log"
    stop_pid "$probe"
    [ -f "$DATA/kiosk-swift/kiosk.sqlite" ] || { echo "PeerBenchServer did not create $DATA/kiosk-swift/kiosk.sqlite" >&2; exit 1; }
    cp "$DATA/kiosk-swift/kiosk.sqlite" "$WORK/dataset.sqlite"

    # The data set's catalogue as PeerBenchServer configures it (DatasetConfiguration), for the instances of
    # `KioskServer serve`: Config/kiosk.yaml with its catalogue replaced, the database and editions set.
    write_dataset_config() {   # OUT DATABASE [nginx PUBLIC_URL]
        python3 - "$ROOT/Config/kiosk.yaml" "$DATA" "$@" <<'PY'
import json, re, sys
base, data, out, database = sys.argv[1:5]
nginx_url = sys.argv[6] if len(sys.argv) > 6 and sys.argv[5] == "nginx" else None
d = json.load(open(f"{data}/dataset.json"))
text = open(base).read().split("\npublications:")[0] + "\n"
q = json.dumps
for pattern, value in [(r"(?m)^(\s*)database: .*$", r"\1database: " + q(database)),
                       (r"(?m)^(\s*)editions: .*$", r"\1editions: " + q(data)),
                       (r"(?m)^(\s*)samples: .*$", r"\1# samples: none")]:
    text, n = re.subn(pattern, value, text, count=1)
    assert n == 1, pattern
if nginx_url:   # links served by nginx from the editions directory, as Deploy/nginx-kiosk-cluster.conf wants
    text, n = re.subn(r"(?m)^(\s*)format: kiosk\b.*$", r"\1format: nginx", text, count=1); assert n == 1
    text, n = re.subn(r"(?m)^(\s*)# public_url: .*$", rf"\1public_url: {nginx_url}", text, count=1); assert n == 1
lines = ["publications:"]
for p in d["publications"]:
    lines += [f"  - id: {p['id']}", f"    name: {q(p['name'])}", "    editions:"]
    lines += [f"      - {{ id: {e['id']}, name: {q(e['name'])}, created: {e['created_at']} }}"
              for e in d["editions"] if e["publication_id"] == p["id"]]
lines.append("apps:")
for a in d["apps"]:
    lines += [f"  - key: {a['app_key']}", f"    name: {q(a['name'])}", f"    demo_quota: {a['demo_quota']}",
              "    web_kiosk:", f"      base_url: https://{a['app_key']}.example.cat", '      sections: { portada: "/?hash=" }',
              "    lines:"]
    lines += [f"      - {{ edition: {l['edition_id']}, order: {l['sort_order']}, access: free }}"
              for l in d["tariff_lines"] if l["app_key"] == a["app_key"]]
open(out, "w").write(text + "\n".join(lines) + "\n")
PY
    }

    # Two databases filled alike, so that the single instance and the cluster both start from the copy
    # (no bundle built yet): kiosk_one by `db copy`, kiosk_two a template copy of it.
    psql_do -d postgres -c "CREATE DATABASE kiosk_one"
    write_dataset_config "$WORK/one.yaml" "$(pg_url kiosk_one)"
    "$BIN" db copy --config "$WORK/one.yaml" --database "$WORK/dataset.sqlite" --to "$(pg_url kiosk_one)" \
        >"$RESULTS/dataset-copy.log" 2>&1 || { cat "$RESULTS/dataset-copy.log" >&2; exit 1; }
    tail -1 "$RESULTS/dataset-copy.log"
    # `db copy` leaves the planner without statistics (autovacuum analyses a minute or so later); without
    # them getEdicions' listing query takes a seq scan and ~3 ms instead of ~0.4 ms. Measure the steady state.
    psql_do -d kiosk_one -c "VACUUM ANALYZE"
    psql_do -d postgres -c "CREATE DATABASE kiosk_two TEMPLATE kiosk_one"   # statistics included

    # The cluster: two instances and nginx, started and stopped together as one command for load.py (which
    # stops it by its PID and counts the CPU of its whole process tree: instances and nginx).
    NGX="$WORK/nginx"; mkdir -p "$NGX"
    write_dataset_config "$WORK/two.yaml" "$(pg_url kiosk_two)" nginx "http://127.0.0.1:$PORT"
    instance_args="--config $WORK/two.yaml"
    one_cmd="$BIN serve --config $WORK/one.yaml --port {port} --log-level warning"
    python3 - "$ROOT/Deploy/nginx-kiosk-cluster.conf" "$NGX" "$PORT" "$DATA" <<'PY'
import os, re, sys
template, d, port, data = sys.argv[1:5]
link_secret = os.environ["KIOSK_LINK_SECRET"]
conf = open(template).read()
conf, n = re.subn(r"(?m)^([ \t]*)@INSTANCES@[ \t]*$", lambda m: "\n".join(
    f"{m.group(1)}server 127.0.0.1:{int(port) + i} max_fails=1 fail_timeout=10s;" for i in (1, 2)), conf)
assert n == 1, "Deploy/nginx-kiosk-cluster.conf must hold one line with only @INSTANCES@"
conf = re.sub(r"(?m)^[ \t]*ssl_[a-z_]+ .*;[ \t]*\n", "", conf)          # plain HTTP on loopback
for k, v in {"@LISTEN@": f"127.0.0.1:{port}", "@EDITIONS@": data + "/", "@LINK_SECRET@": link_secret}.items():
    conf = conf.replace(k, v)
left = sorted(set(re.findall(r"@[A-Z_]+@", re.sub(r"(?m)#.*$", "", conf))))
assert not left, f"placeholders left: {left}"
open(f"{d}/nginx.conf", "w").write(f"""worker_processes 1;
worker_rlimit_nofile 4096;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 2000; }}
http {{
  access_log off;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
{conf}
}}
""")
PY
    "$NGINX" -t -q -p "$NGX" -c "$NGX/nginx.conf"
    cat >"$WORK/cluster.sh" <<EOF
#!/usr/bin/env bash
# Two Kiosk instances on kiosk_two, then nginx in front of them (foreground); SIGTERM stops all three.
"$BIN" serve $instance_args --port $((PORT + 1)) --log-level warning >"$RESULTS/instance-1.log" 2>&1 & i1=\$!
"$BIN" serve $instance_args --port $((PORT + 2)) --log-level warning >"$RESULTS/instance-2.log" 2>&1 & i2=\$!
trap 'kill -TERM \$i1 \$i2 \${n:-} 2>/dev/null; wait' TERM INT
for p in $((PORT + 1)) $((PORT + 2)); do
    until (exec 3<>/dev/tcp/127.0.0.1/\$p) 2>/dev/null; do
        kill -0 \$i1 2>/dev/null && kill -0 \$i2 2>/dev/null || { echo "an instance exited before listening" >&2; exit 1; }
        sleep 0.1
    done
done
"$NGINX" -p "$NGX" -c "$NGX/nginx.conf" -g "daemon off;" & n=\$!
wait
EOF
    chmod +x "$WORK/cluster.sh"

    # load.py, unchanged, imported: the servers in this order, its tables, and one more table of ratios
    # against peer_1cpu and against kiosk_sqlite.
    NOPEER="kiosk_pg,kiosk_pg_x2" python3 - "$BENCH" --data "$DATA" --port "$PORT" --duration "$DURATION" \
        --connections "$CONNECTIONS" --clean "$DATA/zip" --clean "$DATA/kiosk-swift" \
        --json "$RESULTS/load.json" --logdir "$RESULTS" \
        --server "peer_1cpu=taskset -c 0 {python} {bench}/peer_server.py --data {data} --port {port}" \
        --server "kiosk_sqlite=$PEER_BIN --data {data} --port {port} --log-level warning" \
        --server "kiosk_pg=$one_cmd" \
        --server "kiosk_pg_x2=$WORK/cluster.sh" <<'PY' || load_status=$?
import json, os, sys
bench = sys.argv.pop(1)
sys.path.insert(0, bench)
import load

NOPEER = set(filter(None, os.environ.get("NOPEER", "").split(",")))
current = {"name": None}
bench_server, http_get = load.bench_server, load.http_get

def bench_server_named(name, cmd, args, log):
    current["name"] = name
    return bench_server(name, cmd, args, log)

def http_get_unless_no_peer_route(url, auth=True):
    if not auth and "/zip/" in url and current["name"] in NOPEER:
        print(f"   {current['name']}: no /zip/ peer route in KioskServer serve; load.py's 401 check of it skipped", flush=True)
        return 401, b""
    return http_get(url, auth)

load.bench_server, load.http_get = bench_server_named, http_get_unless_no_peer_route
status = load.main()

results = {r["name"]: r for r in json.load(open(sys.argv[sys.argv.index("--json") + 1]))["results"]}
order = ["peer_1cpu", "kiosk_sqlite", "kiosk_pg", "kiosk_pg_x2"]
methods = ["getEdicions", "getDarrersEdicio", "getEdicio"]
print("\n# side by side: req/s and p99 (ms) per method; ratios of req/s (higher is better) and p99 (lower is better).\n"
      "# srvCPU% is the server's process tree (instances and nginx); othCPU% everything else but wrk, i.e. for\n"
      "# kiosk_pg* the PostgreSQL backends (started by pg_ctl, outside the tree); req/CPU-s counts both.")
print(f"{'method':17s} {'config':13s} {'req/s':>9s} {'p99 ms':>8s} {'srvCPU%':>7s} {'othCPU%':>7s} {'req/CPU-s':>9s}"
      f" {'req/s vs peer':>13s} {'req/s vs sqlite':>15s} {'p99 vs sqlite':>13s}")
for method in methods:
    for name in order:
        r = results.get(name)
        if not r or not r.get("ok") or method not in r["methods"]:
            print(f"{method:17s} {name:13s} FAILED: {r.get('error') if r else 'not run'}")
            continue
        m = r["methods"][method]
        def ratio(base, key):
            b = results.get(base)
            return f"x{m[key] / b['methods'][method][key]:.2f}" if b and b.get("ok") and method in b["methods"] else "-"
        per_cpu_s = 100 * m["req_s"] / max(1e-9, m["server_cpu_pct"] + m["other_cpu_pct"])
        print(f"{method:17s} {name:13s} {m['req_s']:9.1f} {m['p99_ms']:8.2f} {m['server_cpu_pct']:7.0f} {m['other_cpu_pct']:7.0f} "
              f"{per_cpu_s:9.0f} {ratio('peer_1cpu', 'req_s'):>13s} {ratio('kiosk_sqlite', 'req_s'):>15s} "
              f"{ratio('kiosk_sqlite', 'p99_ms'):>13s}")
sys.exit(status)
PY
    echo "load.py exit status: ${load_status:-0}"
fi

# --------------------------------------------------------------------------- 2. db copy of a year; 3. stats
if [ -z "${SKIP_STATS:-}" ]; then
    cd "$ROOT"
    Y="$WORK/year"; mkdir -p "$Y"
    sed -e "s#database: data/kiosk.sqlite#database: $Y/kiosk.sqlite#" \
        -e "s#editions: Editions#editions: $Y/Editions#" \
        -e "s#samples: Samples#\# samples: none#" Config/kiosk.yaml >"$Y/kiosk.yaml"
    echo
    echo "# a year of data: $ROWS downloads (Benchmarks/stats_bench_data.py, as stats_bench.sh)"
    echo bench-password | "$BIN" user add --config "$Y/kiosk.yaml" --username bench --password-stdin >/dev/null
    "$BIN" user subscribe --config "$Y/kiosk.yaml" --username bench --edition 1 --until 2030-01-01 >/dev/null
    python3 Benchmarks/stats_bench_data.py "$Y/kiosk.sqlite" "$ROWS"
    echo "sqlite database: $(du -h "$Y/kiosk.sqlite" | cut -f1)"
    psql_do -d postgres -c "CREATE DATABASE kiosk_year"
    PGY="$(pg_url kiosk_year)"
    start=$(date +%s.%N)
    "$BIN" db copy --config "$Y/kiosk.yaml" --database "$Y/kiosk.sqlite" --to "$PGY" >"$RESULTS/year-copy.out" 2>"$RESULTS/year-copy.err" \
        || { echo "db copy FAILED:" >&2; tail -20 "$RESULTS/year-copy.err" >&2; exit 1; }
    end=$(date +%s.%N)
    grep -v "^copied" "$RESULTS/year-copy.out" | sed 's/^/  /'
    tail -1 "$RESULTS/year-copy.out"
    printf 'db copy (wall, process start to exit): %.1f s; postgresql database: %s\n' "$(echo "$end - $start" | bc)" \
        "$(psql_do -d kiosk_year -tA -c "SELECT pg_size_pretty(pg_database_size('kiosk_year'))")"
    psql_do -d kiosk_year -c "VACUUM ANALYZE"   # what autovacuum would do soon after a bulk load

    measure() {   # LABEL DATABASE ARGS…: best and median wall time of RUNS runs; the last output in $Y/out
        local label=$1 database=$2; shift 2
        local times=() start end sorted
        for _ in $(seq "$RUNS"); do
            start=$(date +%s.%N)
            "$BIN" stats --config "$Y/kiosk.yaml" --database "$database" "$@" >"$Y/out"
            end=$(date +%s.%N)
            times+=("$(echo "$end - $start" | bc)")
        done
        sorted=$(printf '%s\n' "${times[@]}" | sort -n)
        printf '%-46s best %6.3f s   median %6.3f s   (%s lines)\n' "$label" \
            "$(echo "$sorted" | head -1)" "$(echo "$sorted" | sed -n "$(( (RUNS + 1) / 2 ))p")" "$(wc -l <"$Y/out")"
    }
    echo
    echo "# stats on $ROWS downloads: best and median of $RUNS runs (process start to exit)"
    "$BIN" stats --config "$Y/kiosk.yaml" --format json >/dev/null                       # warm the page cache
    "$BIN" stats --config "$Y/kiosk.yaml" --database "$PGY" --format json >/dev/null      # and PostgreSQL's buffers
    differ=0
    variants=("table|" "json|--format json" "csv|--format csv" "month|--from 2025-01-01 --to 2025-01-31"
              "app|--app presencia" "edition-json|--edition 1 --format json")
    for variant in "${variants[@]}"; do
        name=${variant%%|*}; read -r -a args <<<"${variant#*|}"
        for engine in sqlite postgres; do
            database="$Y/kiosk.sqlite"; [ "$engine" = sqlite ] || database="$PGY"
            measure "$engine: stats ${args[*]:-(whole year, table)}" "$database" "${args[@]}"
            cp "$Y/out" "$RESULTS/stats-$name.$engine"
        done
        if cmp -s "$RESULTS/stats-$name.sqlite" "$RESULTS/stats-$name.postgres"; then
            echo "  outputs identical ($name)"
        else
            differ=1
            echo "  OUTPUTS DIFFER ($name): diff $RESULTS/stats-$name.sqlite $RESULTS/stats-$name.postgres"
            diff "$RESULTS/stats-$name.sqlite" "$RESULTS/stats-$name.postgres" | head -10 | sed 's/^/    /'
        fi
    done
    [ "$differ" = 0 ] || load_status=1
fi
echo
echo "results and logs: $RESULTS"
exit "${load_status:-0}"
