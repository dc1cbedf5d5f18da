#!/usr/bin/env python3
"""Webhook deliveries and the outbox's cost on a publish, end to end against the release server. Run by
Benchmarks/webhook_bench.sh.

    webhook_bench.py BINARY WORKDIR DATABASE [--readers N] [--concurrency 16,64] [--publishes M] ...

BINARY    KioskServer (release).
WORKDIR   created; gets each measurement's configuration, database (SQLite), server log, nginx's files.
DATABASE  `sqlite` (a fresh file per measurement in WORKDIR), or a `postgres://` URL: its database name is the
          prefix of the databases made per measurement (NAME_c16, NAME_publish_a, ...; dropped and created
          again with psql, dropped at the end unless --keep-databases).

The server is started as the project's drivers start it (Tests/Clients/cluster.py's Cluster, imported: the
configuration is Config/kiosk.yaml with the database and editions replaced, `KioskServer serve --port 0`, one
instance); the receiver is a real nginx run as a private process (its own configuration, pid and logs in
WORKDIR/nginx-*), one worker, `return 204;` for every request, keep-alive without limit, its access log holding
`$msec $http_webhook_id $uri $status` per request. Server CPU is utime+stime of its process (/proc/PID/stat).

1. Deliveries: for each --concurrency value (webhooks.concurrency), a fresh database and a server with --endpoints
   file endpoints (default 10: half with types [reader.added], half with none, i.e. every type) at
   http://127.0.0.1:PORT/hook/eNN on nginx, webhooks.allow_hosts ["127.0.0.1"]. Once the start's own events are
   delivered, `KioskServer user import` of --readers readers (a bare 32-hex MD5 as password: kept as is, no
   bcrypt; one transaction, one reader.added event each); from the import's end until the database holds every
   one of the readers × endpoints deliveries `delivered`: deliveries/s and per server CPU-second. Checks (exit 1
   when one fails): exactly readers reader.added events; one delivery per (event, endpoint), all delivered with
   one try; nginx's log holds exactly readers × endpoints requests for those events, each (webhook-id, endpoint)
   once, all answered 204, webhook-ids the outbox's events.
2. The outbox's cost on a publish: M (--publishes, default 30) PUT /publish/8/DATE of a one-page issue (a ZIP,
   as Tests/Clients/events_cluster.py publishes; edition 8 is free in the app quiosc), one after another after
   --warmup publishes not counted, each timed by the client (back to back, or one every --interval seconds); median
   and p90, in two set-ups one after the other,
   each its own fresh database and server (only one server runs at a time):
     a  no webhook endpoints, no push configured, no push registrations;
     b  --endpoints endpoints taking issue.published (on nginx), push configured for quiosc (APNs key, alert) and
        --registrations push registrations (apns, every edition, inserted straight into push_registrations), all
        of which hear of an issue of edition 8. APNs is https://127.0.0.1:PORT where nothing listens (no APNs
        stand-in is run): the fan-out claims batches and its sends fail to connect, so (b) measures the append,
        the webhook deliveries and the fan-out's claim work, not real sends.
   Reports (b) / (a) of the median and the p90. Checks: every publish answered 201; in (b), every issue.published
   delivered to every endpoint and nginx's log holding exactly those requests.

With --perf SECONDS, `perf record -g` samples the server for SECONDS from the import's end in each deliveries
measurement (perf-report.txt and perf-report-graph.txt in its folder); those numbers are then perturbed by it.

Prints progress and a human summary, and the JSON report to --json. Exit status 1 when a check fails, 2 when the
run could not be made (the error and its traceback are printed).
"""
import argparse
import base64
import collections
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Tests", "Clients"))
sys.path.insert(0, HERE)
from machine import cpu_seconds, load_average, machine  # noqa: E402  (Benchmarks/machine.py)
import cluster as kiosk_cluster  # noqa: E402  (Tests/Clients/cluster.py)
import crash_check  # noqa: E402  (Tests/Clients/crash_check.py)
from cluster import SetupError, free_port, metric  # noqa: E402

NGINX = "/usr/sbin/nginx"
OPERATOR = ("olga", "operator-secret-webhook-bench")
PUBLISH_EDITION = 8          # free in quiosc: every registration that names no edition hears of its issues
APP = "quiosc"


# MARK: - Measuring


def percentile(values, p):
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


# MARK: - nginx, the receiver

class Nginx:
    """A private nginx: one worker, `return 204;`, keep-alive without limit, an access log per request."""

    def __init__(self, directory):
        self.dir = os.path.abspath(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_port()
        self.conf = os.path.join(self.dir, "nginx.conf")
        self.log = os.path.join(self.dir, "access.log")
        self.pid_file = os.path.join(self.dir, "nginx.pid")
        self.running = False
        d = self.dir
        with open(self.conf, "w") as f:
            f.write(f"""worker_processes 1;
worker_rlimit_nofile 8192;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  log_format hooks '$msec $http_webhook_id $uri $status';
  access_log {d}/access.log hooks buffer=256k flush=1s;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 600s;
  server {{
    listen 127.0.0.1:{self.port};
    location / {{ return 204; }}
  }}
}}
""")

    def _run(self, *arguments):
        result = subprocess.run([NGINX, "-p", self.dir, "-c", self.conf, *arguments], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise SetupError(f"nginx {' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip()[-1500:]}")

    def start(self):
        self._run("-t", "-q")
        self._run()
        self.running = True
        deadline = time.time() + 10
        while not os.path.exists(self.pid_file):
            if time.time() > deadline:
                raise SetupError(f"nginx wrote no pid file; see {self.dir}/error.log")
            time.sleep(0.05)
        status, _, _ = kiosk_cluster.Client(self.port, timeout=5, auth=None).request("POST", "/hook/check", b"{}")
        if status != 204:
            raise SetupError(f"nginx answered {status} to a test POST, expected 204")

    def master(self):
        with open(self.pid_file) as f:
            return int(f.read().strip())

    def workers(self):
        master = self.master()
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == master:
                            found.append(int(entry))
                except (FileNotFoundError, ProcessLookupError):
                    pass
        return found

    def cpu(self):
        return sum(cpu_seconds(pid) for pid in self.workers())

    def stop(self):
        """Graceful quit (the log's buffer is written); waits for the master to exit."""
        if not self.running:
            return
        master = self.master()
        self._run("-s", "quit")
        deadline = time.time() + 30
        while os.path.exists(f"/proc/{master}") and time.time() < deadline:
            time.sleep(0.05)
        if os.path.exists(f"/proc/{master}"):
            os.kill(master, signal.SIGKILL)
            raise RuntimeError(f"nginx (pid {master}) did not quit within 30 s; killed")
        self.running = False

    def requests(self):
        """(msec, webhook-id, uri, status) of each logged request, the start's test POST left out."""
        rows = []
        with open(self.log) as f:
            for line in f:
                parts = line.split()
                if len(parts) != 4:
                    raise RuntimeError(f"nginx access log line not as written by its log_format: {line!r}")
                if parts[2] == "/hook/check":
                    continue
                rows.append((float(parts[0]), parts[1], parts[2], int(parts[3])))
        return rows


# MARK: - The server

class Server(kiosk_cluster.Cluster):
    """cluster.py's Cluster, one instance, no nginx in front; webhook endpoints, push and an operator added to
    the configuration."""

    def __init__(self, binary, workdir, database, operator_hash, endpoints=(), concurrency=16, push=None):
        super().__init__(binary, workdir, database, 1, tls=False)
        self.operator_hash = operator_hash
        self.endpoints = list(endpoints)        # (name, url, types or None, secret file)
        self.concurrency = concurrency
        self.push = push                        # None, or {"key_file", "url"}
        self.exit_status = None

    def write_configuration(self, samples=False):
        super().write_configuration(samples=False)
        with open(self.config) as f:
            text = f.read()
        if self.push:
            # The app's push section, inside quiosc's entry (just after its demo_quota line).
            section = ('    push:\n      apns_topic: cat.elpunt.quiosc\n'
                       '      alert: { ca: { title: "{edition}", body: "{date}" } }\n')
            text, count = re.subn(r"(?m)^    demo_quota: 3\n", lambda m: m.group(0) + section, text, count=1)
            if count != 1:
                raise SetupError("Config/kiosk.yaml no longer has quiosc's `    demo_quota: 3` line: update webhook_bench.py")
        lines = ["", "# webhook_bench.py", "operators:",
                 f'  - {{ username: {OPERATOR[0]}, password_hash: "{self.operator_hash}", role: operator }}',
                 "webhooks:", '  allow_hosts: ["127.0.0.1"]', "  timeout_seconds: 15", f"  concurrency: {self.concurrency}"]
        if self.endpoints:
            lines.append("  endpoints:")
            for name, url, types, secret_file in self.endpoints:
                lines += [f"    - name: {name}", f"      owner: {OPERATOR[0]}", f'      url: "{url}"',
                          f"      secret_file: {json.dumps(secret_file)}"]
                if types:
                    lines.append(f"      types: [{', '.join(types)}]")
        if self.push:
            lines += ["push:",
                      f"  apns: {{ team_id: ABCDE12345, key_id: KEY1234567, key_file: {json.dumps(self.push['key_file'])}, "
                      f"production_url: {json.dumps(self.push['url'])}, sandbox_url: {json.dumps(self.push['url'])} }}"]
        lines += ["events:", "  keep_days: 7", ""]
        with open(self.config, "w") as f:
            f.write(text + "\n".join(lines))

    def start(self, startup=None):
        os.makedirs(self.workdir, exist_ok=True)
        os.makedirs(self.editions, exist_ok=True)
        self.nginx_port = free_port()     # only public_url's port: no nginx in front
        self.write_configuration()
        checked = self.run([self.binary, "config", "check", "--config", self.config], "KioskServer config check", check=False)
        if checked.returncode != 0:
            raise SetupError(f"KioskServer config check refused {self.config}: {(checked.stderr or checked.stdout).strip()[-1500:]}")
        instance = self.instances[0]
        self.launch(instance, 0)
        self.wait_listening(instance)
        self.warm(instance)

    @property
    def instance(self):
        return self.instances[0]

    @property
    def pid(self):
        return self.instance.process.pid

    @property
    def port(self):
        return self.instance.port

    def alive(self):
        return self.instance.process is not None and self.instance.process.poll() is None

    def metrics_text(self):
        return self.metrics(self.instance)

    def stop(self):
        """SIGTERM; the problems seen (an exit status other than 0, a crash in the log)."""
        problems = []
        process = self.instance.process
        if process is None:
            return problems
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                problems.append("the server did not stop within 30 s of SIGTERM (killed)")
        self.exit_status = process.returncode
        if process.returncode != 0:
            problems.append(f"the server exited with {process.returncode}; see {self.instance.log}")
        log = self.log_since(self.instance, 0)
        crashes = [line for line in log.splitlines() if "Fatal error" in line or "Segmentation fault" in line]
        if crashes:
            problems.append(f"the server's log shows a crash: {crashes[0][:300]}")
        return problems

    def import_users(self, csv_path):
        return self.run([self.binary, "user", "import", "--config", self.config, "--database", self.database,
                         "--editions", self.editions, csv_path], "KioskServer user import", timeout=3600, cwd=self.workdir)

    def scalar(self, sql):
        return int(self.database_rows(sql)[0][0] or 0)


# MARK: - The benchmark

class Bench:
    def __init__(self, args):
        self.args = args
        self.workdir = os.path.abspath(args.workdir)
        self.postgres = crash_check.is_postgres(args.database)
        self.report = {"binary": os.path.abspath(args.binary), "database": "postgresql" if self.postgres else "sqlite",
                       "machine": machine(), "started": datetime.datetime.now().isoformat(timespec="seconds"),
                       "load_average_start": load_average(), "options": {k: v for k, v in vars(args).items() if k != "json"},
                       "deliveries": {}, "publishes": {}, "failures": []}
        self.started = []    # servers and nginxes to stop on the way out
        self.databases = []  # PostgreSQL databases made

    def fail(self, message):
        print(f"FAILED: {message}", file=sys.stderr, flush=True)
        self.report["failures"].append(message)

    def progress(self, message):
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)

    # MARK: set-up

    def prepare(self):
        os.makedirs(self.workdir, exist_ok=True)
        hashed = subprocess.run([self.args.binary, "hash-password", "--cost", "4"], input=OPERATOR[1] + "\n",
                                capture_output=True, text=True, timeout=60)
        if hashed.returncode != 0 or not hashed.stdout.strip().startswith("$2"):
            raise SetupError(f"KioskServer hash-password failed: {hashed.stderr.strip()}")
        self.operator_hash = hashed.stdout.strip()
        self.secret_files = []
        for k in range(self.args.endpoints):
            path = os.path.join(self.workdir, f"endpoint-{k + 1:02d}.secret")
            with open(path, "w") as f:
                f.write("whsec_" + base64.b64encode(os.urandom(24)).decode() + "\n")
            self.secret_files.append(path)
        self.apns_key = os.path.join(self.workdir, "AuthKey_KEY1234567.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", self.apns_key],
                       check=True, capture_output=True, timeout=60)
        folder = kiosk_cluster.write_issue(os.path.join(self.workdir, "in-issue"), pages=1, seed=3)
        self.archive = kiosk_cluster.zip_folder(folder)

    def database(self, label):
        """A fresh database for one measurement."""
        if not self.postgres:
            path = os.path.join(self.workdir, label, "kiosk.sqlite")
            return path
        base, name = self.args.database.rsplit("/", 1)
        name = name.split("?", 1)[0]
        database = f"{name}_{label}"
        for sql in (f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)', f'CREATE DATABASE "{database}"'):
            result = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", f"{base}/postgres", "-c", sql],
                                    capture_output=True, text=True, timeout=120)
            if result.returncode != 0:
                raise SetupError(f"psql {sql!r} failed: {result.stderr.strip()}")
        self.databases.append((base, database))
        return f"{base}/{database}"

    def drop_databases(self):
        if self.args.keep_databases:
            return
        for base, database in self.databases:
            result = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", f"{base}/postgres", "-c",
                                     f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'], capture_output=True, text=True, timeout=120)
            if result.returncode != 0:
                self.fail(f"dropping {database} failed: {result.stderr.strip()}")
        self.databases = []

    def endpoints(self, nginx, types_for):
        return [(f"e{k + 1:02d}", f"http://127.0.0.1:{nginx.port}/hook/e{k + 1:02d}", types_for(k), self.secret_files[k])
                for k in range(self.args.endpoints)]

    def start_server(self, label, **kwargs):
        server = Server(self.args.binary, os.path.join(self.workdir, label), self.database(label), self.operator_hash, **kwargs)
        self.started.append(server)
        server.start()
        self.progress(f"{label}: server pid {server.pid}, port {server.port}, {self.report['database']}, log {server.instance.log}")
        return server

    def start_nginx(self, label):
        nginx = Nginx(os.path.join(self.workdir, label, "nginx"))
        self.started.append(nginx)
        nginx.start()
        return nginx

    def stop(self, thing):
        if isinstance(thing, Server):
            for problem in thing.stop():
                self.fail(f"{os.path.basename(thing.workdir)}: {problem}")
        else:
            thing.stop()
        if thing in self.started:
            self.started.remove(thing)

    def wait_idle(self, server, what, timeout=120):
        """Until no webhook delivery is waiting (the start's own events delivered)."""
        deadline = time.time() + timeout
        time.sleep(2.0)   # a dispatch pass (every second) has offered the start's events
        while True:
            waiting = server.scalar("SELECT COUNT(*) FROM webhook_deliveries WHERE state <> 'delivered'")
            if waiting == 0:
                return
            if time.time() > deadline:
                raise RuntimeError(f"{what}: {waiting} webhook deliveries still not delivered {timeout} s after the start")
            time.sleep(0.2)

    # MARK: 1. deliveries

    def deliveries(self, concurrency):
        a = self.args
        label = f"c{concurrency}"
        n, endpoints = a.readers, a.endpoints
        expected = n * endpoints
        phase = {"concurrency": concurrency, "readers": n, "endpoints": endpoints, "deliveries_expected": expected}
        self.report["deliveries"][label] = phase
        nginx = self.start_nginx(label)
        half = endpoints // 2
        server = self.start_server(label, endpoints=self.endpoints(nginx, lambda k: ["reader.added"] if k < half else None),
                                   concurrency=concurrency)
        self.wait_idle(server, label)
        before_event = server.scalar("SELECT COALESCE(MAX(id), 0) FROM outbox_events")
        before_attempts = server.scalar("SELECT COUNT(*) FROM webhook_attempts")
        before_delivered_metric = metric(server.metrics_text(), "kiosk_webhook_deliveries_total", outcome="delivered")
        # The readers: a bare MD5 as password (kept as it is: no bcrypt), usernames of this measurement.
        csv_path = os.path.join(server.workdir, "readers.csv")
        with open(csv_path, "w") as f:
            f.write("username,name,email,password\n")
            for i in range(n):
                f.write(f"bench{concurrency}r{i:06d},Reader {i},reader{i}@bench.example,"
                        f"{hashlib.md5(f'password-{i}'.encode()).hexdigest()}\n")
        self.progress(f"{label}: importing {n} readers ({endpoints} endpoints, webhooks.concurrency {concurrency}) ...")
        load0 = load_average()
        t_import = time.monotonic()
        imported = server.import_users(csv_path)
        t0 = time.monotonic()
        cpu0, nginx_cpu0 = cpu_seconds(server.pid), nginx.cpu()
        phase["import_seconds"] = round(t0 - t_import, 2)
        self.progress(f"{label}: import took {phase['import_seconds']} s: {imported.stdout.strip()}")
        perf = None
        if a.perf:
            perf_data = os.path.join(server.workdir, "perf.data")
            perf = subprocess.Popen(["perf", "record", "-g", "-F", "499", "-p", str(server.pid), "-o", perf_data, "--", "sleep", str(a.perf)],
                                    stdout=subprocess.DEVNULL, stderr=open(os.path.join(server.workdir, "perf-record.log"), "w"))
        # Wait until every delivery is delivered: progress from /metrics, the end from the database.
        deadline = t0 + a.timeout
        last_print, last_count = t0, 0
        done_at = None
        while True:
            now = time.monotonic()
            delivered_metric = metric(server.metrics_text(), "kiosk_webhook_deliveries_total", outcome="delivered") - before_delivered_metric
            if delivered_metric >= expected:
                delivered = server.scalar(f"SELECT COUNT(*) FROM webhook_deliveries WHERE event_id > {before_event} AND state = 'delivered'")
                if delivered >= expected:
                    done_at = time.monotonic()
                    break
            if now - last_print >= 5:
                rate = (delivered_metric - last_count) / (now - last_print)
                self.progress(f"{label}: {int(delivered_metric)}/{expected} delivered ({rate:.0f}/s over the last {now - last_print:.0f} s)")
                last_print, last_count = now, delivered_metric
            if not server.alive():
                raise RuntimeError(f"{label}: the server exited ({server.instance.process.returncode}); see {server.instance.log}")
            if now > deadline:
                self.fail(f"{label}: only {int(delivered_metric)} of {expected} deliveries done {a.timeout} s after the import")
                break
            time.sleep(0.1)
        cpu = cpu_seconds(server.pid) - cpu0
        nginx_cpu = nginx.cpu() - nginx_cpu0
        load1 = load_average()
        if perf:
            self.perf_report(perf, perf_data, server.workdir, label)
        if done_at is not None:
            seconds = done_at - t0
            phase.update({"seconds": round(seconds, 2), "per_second": round(expected / seconds, 1),
                          "server_cpu_seconds": round(cpu, 2), "server_cpu_pct": round(100 * cpu / seconds, 1),
                          "per_server_cpu_second": round(expected / cpu, 1) if cpu else None,
                          "nginx_cpu_seconds": round(nginx_cpu, 2), "load_average": [load0, load1]})
        # The database: the events, one delivery per (event, endpoint), delivered at the first try.
        events = server.scalar(f"SELECT COUNT(*) FROM outbox_events WHERE id > {before_event} AND type = 'reader.added'")
        other = server.scalar(f"SELECT COUNT(*) FROM outbox_events WHERE id > {before_event} AND type <> 'reader.added'")
        rows = server.database_rows(
            "SELECT d.state, d.attempts, COUNT(*) FROM webhook_deliveries d "
            f"WHERE d.event_id > {before_event} GROUP BY d.state, d.attempts")
        by_state = {f"{state}/{attempts}": int(c) for state, attempts, c in rows}
        pairs = server.scalar(f"SELECT COUNT(*) FROM (SELECT DISTINCT event_id, endpoint_id FROM webhook_deliveries WHERE event_id > {before_event}) x")
        attempts = server.scalar(f"SELECT COUNT(*) FROM webhook_attempts WHERE event_id > {before_event}")
        all_attempts = server.scalar("SELECT COUNT(*) FROM webhook_attempts")
        latencies = sorted(int(r[0]) for r in server.database_rows(f"SELECT latency_ms FROM webhook_attempts WHERE event_id > {before_event}"))
        statuses = {str(s): int(c) for s, c in server.database_rows(
            f"SELECT status, COUNT(*) FROM webhook_attempts WHERE event_id > {before_event} GROUP BY status")}
        ids = {f"evt_{int(r[0])}" for r in server.database_rows(
            f"SELECT id FROM outbox_events WHERE id > {before_event} AND type = 'reader.added'")}
        uris = {f"/hook/e{k + 1:02d}" for k in range(endpoints)}
        phase["database"] = {"reader_added_events": events, "other_events": other, "deliveries_by_state_attempts": by_state,
                             "distinct_event_endpoint": pairs, "attempts": attempts, "attempt_statuses": statuses}
        if latencies:
            phase["try_latency_ms"] = {"p50": percentile(latencies, 50), "p90": percentile(latencies, 90),
                                       "p99": percentile(latencies, 99), "max": latencies[-1]}
        if events != n:
            self.fail(f"{label}: the import of {n} readers appended {events} reader.added events")
        if by_state != {"delivered/1": expected} or pairs != expected or attempts != expected:
            self.fail(f"{label}: deliveries by state/attempts {by_state}, {pairs} distinct (event, endpoint), {attempts} tries; "
                      f"expected {expected} delivered at the first try")
        # nginx: exactly one request per (event, endpoint), all 204.
        time.sleep(1.2)                 # the log's flush=1s
        self.stop(nginx)
        logged = nginx.requests()
        ours = [r for r in logged if r[1] in ids]
        counts = collections.Counter((r[1], r[2]) for r in ours)
        wrong_uri = [r for r in ours if r[2] not in uris]
        not_204 = collections.Counter(r[3] for r in logged if r[3] != 204)
        strangers = [r for r in logged if r[1] not in ids and not re.fullmatch(r"evt_\d+", r[1])]
        duplicated = {k: c for k, c in counts.items() if c > 1}
        missing = len(ids) * len(uris) - len(set(counts) & {(i, u) for i in ids for u in uris}) if ids else expected
        phase["nginx"] = {"requests": len(logged), "requests_for_the_import": len(ours),
                          "distinct_webhook_id_endpoint": len(counts), "duplicated": len(duplicated), "missing": missing,
                          "not_204": dict(not_204), "without_event_id": len(strangers)}
        if len(ours) != expected or len(counts) != expected or duplicated or missing or wrong_uri:
            self.fail(f"{label}: nginx logged {len(ours)} requests for the imported readers' events, {len(counts)} distinct "
                      f"(webhook-id, endpoint), {len(duplicated)} duplicated (e.g. {list(duplicated.items())[:3]}), {missing} missing, "
                      f"{len(wrong_uri)} to another path; expected exactly {expected}, each once")
        if not_204 or strangers:
            self.fail(f"{label}: nginx answered other than 204 {dict(not_204)}, {len(strangers)} requests without an event's webhook-id "
                      f"(e.g. {strangers[:2]})")
        if len(logged) != all_attempts:
            self.fail(f"{label}: nginx logged {len(logged)} requests in all, the database records {all_attempts} tries")
        log = server.log_since(server.instance, 0)
        phase["log"] = {what: log.count(what) for what in ("webhook try failed", "webhook try not recorded",
                                                            "recording a webhook try failed", "leasing webhook deliveries failed")}
        self.stop(server)
        if done_at is not None:
            lat = phase.get("try_latency_ms", {})
            self.progress(f"{label}: {expected} deliveries in {phase['seconds']:.2f} s: {phase['per_second']:.1f}/s, "
                          f"{phase['per_server_cpu_second']:.1f} per server CPU-s (server {phase['server_cpu_pct']:.0f}% CPU, "
                          f"nginx {phase['nginx_cpu_seconds']:.1f} CPU-s); try p50 {lat.get('p50')} ms, p99 {lat.get('p99')} ms; "
                          f"nginx {len(ours)} requests, {len(counts)} distinct, {len(duplicated)} duplicated, {missing} missing")

    def perf_report(self, perf, data, directory, label):
        """Waits for `perf record`, then writes perf-report.txt (flat) and perf-report-graph.txt into `directory`."""
        if perf.wait() != 0:
            self.fail(f"{label}: perf record exited with {perf.returncode}; see {directory}/perf-record.log")
            return
        for suffix, extra in (("", ["-g", "none"]), ("-graph", [])):
            report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--percent-limit", "0.3", "--stdio", *extra],
                                    capture_output=True, text=True, check=True).stdout
            if shutil.which("swift-demangle"):
                report = subprocess.run(["swift-demangle", "--simplified"], input=report, capture_output=True, text=True,
                                        check=True).stdout
            with open(os.path.join(directory, f"perf-report{suffix}.txt"), "w") as out:
                out.write(report)
        self.progress(f"{label}: perf: {directory}/perf-report.txt (flat), perf-report-graph.txt")

    # MARK: 2. publishes

    def publishes(self, setup):
        a = self.args
        label = f"publish_{setup}"
        phase = {"setup": setup, "publishes": a.publishes, "warmup": a.warmup}
        self.report["publishes"][setup] = phase
        nginx = None
        if setup == "a":
            phase["description"] = "no webhook endpoints, no push configured, no push registrations"
            server = self.start_server(label)
        else:
            nginx = self.start_nginx(label)
            dead = free_port()   # bound and closed at once: nothing listens there
            phase["description"] = (f"{a.endpoints} endpoints taking issue.published (nginx, loopback), push configured for {APP}, "
                                    f"{a.registrations} apns registrations; APNs https://127.0.0.1:{dead} where nothing listens")
            server = self.start_server(label, endpoints=self.endpoints(nginx, lambda k: ["issue.published"]),
                                       push={"key_file": self.apns_key, "url": f"https://127.0.0.1:{dead}"})
            t = time.monotonic()
            self.insert_registrations(server, a.registrations)
            count = server.scalar("SELECT COUNT(*) FROM push_registrations")
            phase["registrations_inserted"] = count
            phase["registrations_insert_seconds"] = round(time.monotonic() - t, 2)
            self.progress(f"{label}: {count} push registrations inserted in {phase['registrations_insert_seconds']} s")
            if count != a.registrations:
                self.fail(f"{label}: push_registrations holds {count} rows, expected {a.registrations}")
        self.wait_idle(server, label)
        before_event = server.scalar("SELECT COALESCE(MAX(id), 0) FROM outbox_events")
        client = kiosk_cluster.Client(server.port, timeout=120, auth=kiosk_cluster.PUBLISHER)
        day = datetime.date(2024, 1, 1)
        times, failures = [], []
        load0 = load_average()
        cpu0 = None
        self.progress(f"{label}: {a.warmup} warm-up publishes, then {a.publishes} timed ...")
        t_start = None
        for k in range(a.warmup + a.publishes):
            if k == a.warmup:
                cpu0, t_start = cpu_seconds(server.pid), time.monotonic()
            date = (day + datetime.timedelta(days=k)).isoformat()
            t = time.perf_counter()
            status, _, body = client.request("PUT", f"/publish/{PUBLISH_EDITION}/{date}", self.archive, {"Content-Type": "application/zip"})
            elapsed = time.perf_counter() - t
            if status != 201:
                failures.append(f"{date}: {status} {body[:200]!r}")
            if k >= a.warmup:
                times.append(elapsed * 1000)
            if a.interval > elapsed:
                time.sleep(a.interval - elapsed)
        wall = time.monotonic() - t_start
        cpu = cpu_seconds(server.pid) - cpu0
        client.close()
        phase.update({"ms": [round(v, 2) for v in times], "median_ms": round(statistics.median(times), 2),
                      "p90_ms": round(percentile(times, 90), 2), "min_ms": round(min(times), 2), "max_ms": round(max(times), 2),
                      "wall_seconds": round(wall, 2), "server_cpu_seconds": round(cpu, 2),
                      "server_cpu_pct": round(100 * cpu / wall, 1), "load_average": [load0, load_average()]})
        if failures:
            self.fail(f"{label}: {len(failures)} publishes not answered 201: {failures[:3]}")
        published = server.scalar(f"SELECT COUNT(*) FROM outbox_events WHERE id > {before_event} AND type = 'issue.published'")
        phase["issue_published_events"] = published
        if published != a.warmup + a.publishes:
            self.fail(f"{label}: {published} issue.published events for {a.warmup + a.publishes} publishes")
        if setup == "b":
            self.after_publishes_b(server, nginx, phase, before_event, published)
        self.stop(server)
        self.progress(f"{label}: {a.publishes} publishes: median {phase['median_ms']:.1f} ms, p90 {phase['p90_ms']:.1f} ms "
                      f"(min {phase['min_ms']:.1f}, max {phase['max_ms']:.1f}); server {phase['server_cpu_pct']:.0f}% CPU over "
                      f"{phase['wall_seconds']:.1f} s")

    def after_publishes_b(self, server, nginx, phase, before_event, published):
        """What the fan-out did meanwhile; every issue.published delivered to every endpoint, nginx agreeing."""
        text = server.metrics_text()
        phase["push_during_publishes"] = {
            outcome: int(metric(text, "kiosk_push_sent_total", service="apns", outcome=outcome)) for outcome in ("sent", "dead_token", "failed")}
        rows = server.database_rows("SELECT event_id, after_id, done FROM push_fanouts ORDER BY event_id")
        phase["fanouts_at_end"] = {"events": len(rows), "done": sum(1 for r in rows if str(r[2]) in ("1", "t", "True")),
                                   "registrations_claimed": sum(int(r[1]) for r in rows)}
        expected = published * self.args.endpoints
        deadline = time.time() + 120
        while True:
            delivered = server.scalar(f"SELECT COUNT(*) FROM webhook_deliveries WHERE event_id > {before_event} AND state = 'delivered'")
            if delivered >= expected or time.time() > deadline:
                break
            time.sleep(0.2)
        rows = server.database_rows(f"SELECT state, attempts, COUNT(*) FROM webhook_deliveries WHERE event_id > {before_event} GROUP BY state, attempts")
        by_state = {f"{s}/{n}": int(c) for s, n, c in rows}
        phase["webhook_deliveries"] = by_state
        if by_state != {"delivered/1": expected}:
            self.fail(f"publish_b: webhook deliveries by state/attempts {by_state}, expected {expected} delivered at the first try")
        ids = {f"evt_{int(r[0])}" for r in server.database_rows(
            f"SELECT id FROM outbox_events WHERE id > {before_event} AND type = 'issue.published'")}
        time.sleep(1.2)
        self.stop(nginx)
        logged = nginx.requests()
        ours = collections.Counter((r[1], r[2]) for r in logged if r[1] in ids)
        phase["nginx"] = {"requests": len(logged), "distinct_webhook_id_endpoint": len(ours),
                          "duplicated": sum(1 for c in ours.values() if c > 1), "not_204": sum(1 for r in logged if r[3] != 204)}
        if sum(ours.values()) != expected or len(ours) != expected or phase["nginx"]["not_204"]:
            self.fail(f"publish_b: nginx logged {sum(ours.values())} requests for the {published} issue.published events, "
                      f"{len(ours)} distinct (webhook-id, endpoint), {phase['nginx']['not_204']} not 204; expected {expected}, each once")
        log = server.log_since(server.instance, 0)
        phase["log"] = {what: log.count(what) for what in ("push notifications not sent", "claiming a push batch failed",
                                                            "webhook try failed")}
        reasons = re.findall(r'reason=(.{0,160})', log)
        phase["push_failure_reason"] = reasons[0] if reasons else None
        self.progress(f"publish_b: during the publishes the fan-out claimed {phase['fanouts_at_end']['registrations_claimed']} "
                      f"registrations over {phase['fanouts_at_end']['events']} events ({phase['fanouts_at_end']['done']} done); "
                      f"push outcomes {phase['push_during_publishes']}; webhooks {by_state}")

    def insert_registrations(self, server, count):
        now = int(time.time())
        if not self.postgres:
            db = sqlite3.connect(server.database, timeout=60, isolation_level=None)
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute(f"""
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count})
                    INSERT INTO push_registrations (app_key, device_key, identity_key, user_id, platform, token, editions, language,
                                                    created_at, updated_at)
                    SELECT '{APP}', printf('bench-device-%07d', i), printf('bench-identity-%07d', i), 0, 'apns',
                           printf('%064d', i), '', 'ca', {now}, {now} FROM n""")
                db.execute("COMMIT")
            finally:
                db.close()
        else:
            sql = f"""INSERT INTO push_registrations (app_key, device_key, identity_key, user_id, platform, token, editions, language,
                                                     created_at, updated_at)
                      SELECT '{APP}', 'bench-device-' || lpad(i::text, 7, '0'), 'bench-identity-' || lpad(i::text, 7, '0'), 0, 'apns',
                             lpad(i::text, 64, '0'), '', 'ca', {now}, {now} FROM generate_series(1, {count}) i"""
            result = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", server.database, "-c", sql],
                                    capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                raise SetupError(f"inserting push registrations failed: {result.stderr.strip()}")

    # MARK: run

    def run(self):
        a = self.args
        self.prepare()
        if not a.skip_deliveries:
            for concurrency in a.concurrency:
                self.deliveries(concurrency)
        if not a.skip_publishes:
            self.publishes("a")
            self.publishes("b")
            pa, pb = self.report["publishes"]["a"], self.report["publishes"]["b"]
            ratio = {"median": round(pb["median_ms"] / pa["median_ms"], 2), "p90": round(pb["p90_ms"] / pa["p90_ms"], 2)}
            self.report["publish_ratio_b_over_a"] = ratio
            self.progress(f"publish (b) ÷ (a): median {ratio['median']:.2f}× ({pb['median_ms']:.1f} vs {pa['median_ms']:.1f} ms), "
                          f"p90 {ratio['p90']:.2f}× ({pb['p90_ms']:.1f} vs {pa['p90_ms']:.1f} ms)")

    def cleanup(self):
        for thing in reversed(list(self.started)):
            try:
                self.stop(thing)
            except Exception as error:   # noqa: BLE001  reported, and the exit status says so
                self.fail(f"stopping {type(thing).__name__}: {type(error).__name__}: {error}")
        if self.postgres:
            self.drop_databases()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("workdir")
    parser.add_argument("database", help="sqlite, or a postgres:// URL whose database name prefixes the ones made")
    parser.add_argument("--readers", type=int, default=10000, help="readers imported per deliveries measurement (default 10 000)")
    parser.add_argument("--endpoints", type=int, default=10, help="webhook endpoints (default 10)")
    parser.add_argument("--concurrency", default="16,64", help="webhooks.concurrency values, one measurement each (default 16,64)")
    parser.add_argument("--publishes", type=int, default=30, help="timed publishes per set-up (default 30)")
    parser.add_argument("--warmup", type=int, default=2, help="publishes before the timed ones (default 2)")
    parser.add_argument("--interval", type=float, default=0.0,
                        help="seconds from one publish's start to the next's (default 0: one after another)")
    parser.add_argument("--registrations", type=int, default=100000, help="push registrations in set-up b (default 100 000)")
    parser.add_argument("--timeout", type=int, default=1800, help="bound on one deliveries measurement, seconds (default 1800)")
    parser.add_argument("--skip-deliveries", action="store_true")
    parser.add_argument("--skip-publishes", action="store_true")
    parser.add_argument("--perf", type=int, default=0, metavar="SECONDS",
                        help="perf record -g the server for SECONDS from the import's end, in each deliveries measurement "
                             "(perturbs it; perf-report*.txt in its folder of WORKDIR)")
    parser.add_argument("--keep-databases", action="store_true", help="PostgreSQL: leave the databases made")
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args()
    try:
        args.concurrency = [int(v) for v in args.concurrency.split(",") if v.strip()]
    except ValueError:
        parser.error("--concurrency takes integers separated by commas")
    if args.endpoints < 2 or args.readers < 1 or args.publishes < 1:
        parser.error("--endpoints must be ≥ 2, --readers and --publishes ≥ 1")
    for tool in [NGINX, "openssl"] + (["psql"] if crash_check.is_postgres(args.database) else []) + (["perf"] if args.perf else []):
        if not shutil.which(tool):
            parser.error(f"{tool} is needed")
    if not crash_check.is_postgres(args.database) and args.database != "sqlite":
        parser.error("DATABASE is `sqlite` or a postgres:// URL")

    bench = Bench(args)

    def terminate(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    status = 0
    try:
        bench.run()
    except BaseException as error:   # reported with its traceback, and the exit status is 2
        traceback.print_exc()
        bench.fail(f"{type(error).__name__}: {error}")
        status = 2
    finally:
        bench.cleanup()
        bench.report["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
        bench.report["load_average_end"] = load_average()
        if args.json:
            with open(args.json, "w") as f:
                json.dump(bench.report, f, indent=1)
    if bench.report["failures"]:
        print(f"{len(bench.report['failures'])} check(s) failed", file=sys.stderr)
    return status or (1 if bench.report["failures"] else 0)


if __name__ == "__main__":
    sys.exit(main())
