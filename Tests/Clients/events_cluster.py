#!/usr/bin/env python3
"""The event outbox, webhooks and the event stream across three Kiosk instances on one PostgreSQL
database, under kill -9 and a PostgreSQL restart (issue 30).

    events_cluster.py BINARY WORKDIR [--postgres-bin DIR] [--scenarios NAME ...]

BINARY          the KioskServer executable.
WORKDIR         created if missing; gets the configuration (kiosk.yaml, the endpoints' secret files), the
                editions directory, the instances' logs (instance-N.log), the receiver's errors
                (receiver.log), PostgreSQL's log (postgres.log, copied when it stops) and answers.log
                (crash_check.py's LOG: "published EDITION/DATE" for each publish answered 201).
--postgres-bin  PostgreSQL's server programs (initdb, pg_ctl); default: the newest /usr/lib/postgresql/*/bin.

Set-up: a PostgreSQL cluster of the script's own (initdb in a temporary directory, a free port, run as the
`postgres` user when run as root), so that it can be restarted without disturbing anyone; one database on
it; Tests/Clients/webhook_receiver.py on loopback (it verifies each delivery with PyPI `standardwebhooks`
and records when it arrived and when it was answered); three instances of the binary (started as
Tests/Clients/cluster.py starts them: instance 0 first, it migrates, then the others together), whose
configuration names two webhook endpoints on the receiver, each with its own secret: `fast` (every event
type, answers 200 at once) and `slow` (`issue.*`, answers 200 after SLOW_DELAY seconds, so that tries are
in flight for a while); `webhooks.allow_hosts: [127.0.0.1]`, `webhooks.timeout_seconds` TIMEOUT_SECONDS (the
lease of a claimed delivery is then 4 x 3 + 30 = 42 s, as KioskWiring sets it), and an operator account for
the stream. Issues are published with `PUT /publish/EDITION/DATE` (one page each) spread over the instances.

Scenarios (each checks the events made during it; the checks are in `check_deliveries`):
  steady     30 issues published over the three instances, and meanwhile 2 with the CLI and a reader added
             (`user add`); then two withdrawn, one restored, one published again (issue.withdrawn, .restored,
             .republished; reader.added goes to `fast` only): every event reaches each endpoint that wants
             it, with a signature the endpoint's secret verifies, a body that is the outbox's event; the
             distinct webhook-ids at each endpoint are exactly the outbox's events of its types; each event
             has one delivery row per endpoint, `delivered`; no two tries of one event to one endpoint
             overlap at the receiver; a second try comes after the first was recorded, or after the first
             one's lease ran out.
  kill       three rounds of a burst of publishes; in each, kill -9 of the instance holding the most leases
             (webhook_deliveries.lease_owner, mapped to the instance by its process id), at a different
             point: as soon as it holds leases; while the slow endpoint holds one of its tries unanswered;
             just after the slow endpoint answered one (before the instance records it). Restarted at once.
             Every event still ends delivered; each delivery leased by the killed instance is tried again
             only once its lease ran out (no arrival before lease_until, a new lease no sooner than
             lease_until + lease), by another worker, and ends `delivered`. Then a graceful stop (SIGTERM) of
             the instance holding an unanswered slow try: it exits 0 having finished and recorded its tries
             (no lease left behind), as docs/events.md says.
  pgrestart  publishes on all three instances while the private cluster is restarted twice: `pg_ctl restart
             -m fast`, then stopped (-m fast) for PG_DOWN_SECONDS and started: no instance exits, each publishes
             again by itself within RECOVERY_SECONDS, publishes answer 201 or 500/503, every publish answered 201
             is visible with its issue.published event, and every event is delivered (tries whose recording
             failed are tried again once their lease ran out).
  stream     an operator's `GET /events` (SSE, httpx-sse) from the start on instance 0, cut by the client
             10 events before the end (past the first page of 200, after the other scenarios); resumed with Last-Event-ID on instance 1, followed live while issues are published on
             instances 0 and 2, and ended by instance 1's graceful stop (SIGTERM after three live events: the
             stream must end and the instance exit 0); resumed on instance 2 to the end: every event exactly
             once, in the outbox's order, each one's data the outbox's. Instance 1 is started again.
  final      every event of the run delivered to each endpoint, the receiver raised nothing, no instance
             died unasked; crash_check.py's checks (the outbox's invariants included), with --clean.

Prints one JSON report on standard output ({"scenarios": {NAME: {"seconds", "violations", ...}},
"violations": [...], ...}); each violated expectation is also printed on standard error, and the exit status
is 1 when there is one (2 for a usage or set-up error). A scenario that raises is a violation with its
traceback. Everything started (the instances, the receiver, the PostgreSQL cluster) is stopped on exit,
SIGTERM included; WORKDIR is left for inspection.
"""
import argparse
import base64
import collections
import datetime
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cluster as kiosk_cluster  # noqa: E402  (Tests/Clients/cluster.py)
import crash_check  # noqa: E402  (Tests/Clients/crash_check.py)
from cluster import SetupError, describe, finish_report, free_port, outcome, run_scenario, write_issue, zip_folder  # noqa: E402

OPERATOR = ("olga", "operator-secret-events")
TIMEOUT_SECONDS = 3                       # webhooks.timeout_seconds
LEASE_SECONDS = TIMEOUT_SECONDS * 4 + 30  # KioskWiring.WebhookWiring.worker: a claimed delivery's lease
SLOW_DELAY = 1.0                          # the slow endpoint answers 200 after this long (well within the timeout)
RECOVERY_SECONDS = 15                     # pgrestart: an instance publishes again within this long
RETRY_SLACK = 10                          # see check_deliveries: how long a claim may precede its try
PG_DOWN_SECONDS = 3                       # pgrestart: the second outage's length
ENDPOINTS = [  # name, the receiver's query, types (None: every type)
    ("fast", "endpoint=fast", None),
    ("slow", f"endpoint=slow&delay={SLOW_DELAY}", ["issue.*"]),
]
SCENARIOS = ["steady", "kill", "pgrestart", "stream", "final"]
THREAD_ERRORS = []                        # what the driver's own threads raised: violations, never swallowed


def _thread_raised(arguments):
    THREAD_ERRORS.append(f"thread {arguments.thread.name if arguments.thread else '?'} raised "
                         f"{''.join(traceback.format_exception(arguments.exc_type, arguments.exc_value, arguments.exc_traceback))[-1500:]}")


threading.excepthook = _thread_raised


def wants(types, event_type):
    if types is None:
        return True
    return any(event_type == t or (t.endswith(".*") and event_type.startswith(t[:-1])) for t in types)


def event_number(webhook_id):
    if not isinstance(webhook_id, str) or not webhook_id.startswith("evt_") or not webhook_id[4:].isdigit():
        return None
    return int(webhook_id[4:])


# MARK: - PostgreSQL of the script's own

def newest_postgres_bin():
    found = []
    for path in glob.glob("/usr/lib/postgresql/*/bin"):
        major = os.path.basename(os.path.dirname(path))
        if major.isdigit() and os.access(os.path.join(path, "initdb"), os.X_OK):
            found.append((int(major), path))
    return max(found)[1] if found else None


class PrivatePostgres:
    """initdb in a temporary directory, its own port and socket directory; `restart` is what the pgrestart
    scenario does to it. As root, everything runs as `postgres` (PostgreSQL refuses root)."""

    def __init__(self, bin_dir, workdir):
        self.bin, self.workdir = bin_dir, workdir
        self.dir = tempfile.mkdtemp(prefix="kiosk-events-pg-")
        os.chmod(self.dir, 0o777)
        self.data, self.log = os.path.join(self.dir, "data"), os.path.join(self.dir, "log")
        self.port = None
        self.running = False
        self.user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    @property
    def url(self):
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, command, what, timeout=120):
        result = subprocess.run(self.user + command, capture_output=True, text=True, timeout=timeout,
                                stdin=subprocess.DEVNULL, cwd=self.dir)
        if result.returncode != 0:
            raise SetupError(f"{what} failed ({result.returncode}): {(result.stderr or result.stdout).strip()[-1500:]}; "
                             f"PostgreSQL's log ends: {self.log_tail()}")
        return result

    def log_tail(self, lines=8):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def pg_ctl(self, *arguments):
        # fsync off: nothing here crashes the server (a restart is a clean -m fast), and the machine is shared.
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200 "
                   f"-c fsync=off -c full_page_writes=off")
        return [os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log, "-o", options, *arguments]

    def start(self):
        for program in ("initdb", "pg_ctl"):
            if not os.access(os.path.join(self.bin, program), os.X_OK):
                raise SetupError(f"{self.bin}/{program} is missing: apt-get install postgresql, or give --postgres-bin")
        if self.user and not shutil.which("runuser"):
            raise SetupError("running as root needs runuser (util-linux) to start PostgreSQL as postgres")
        self._run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                   "--no-sync"], "initdb")
        self.port = free_port()
        self._run(self.pg_ctl("-w", "-t", "60", "start"), "pg_ctl start")
        self.running = True

    def restart(self):
        return self._run(self.pg_ctl("-w", "-t", "60", "-m", "fast", "restart"), "pg_ctl restart")

    def stop_and_start(self, down=None):
        self._run(self.pg_ctl("-w", "-t", "60", "-m", "fast", "stop"), "pg_ctl stop")
        time.sleep(PG_DOWN_SECONDS if down is None else down)
        return self._run(self.pg_ctl("-w", "-t", "60", "start"), "pg_ctl start")

    def create_database(self, name):
        result = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.url, "-c", f"CREATE DATABASE {name}"],
                                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise SetupError(f"CREATE DATABASE failed: {result.stderr.strip()}")
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self):
        problems = []
        if self.running:
            result = subprocess.run(self.user + self.pg_ctl("-w", "-t", "30", "-m", "fast", "stop"), capture_output=True,
                                    text=True, timeout=60, stdin=subprocess.DEVNULL)
            if result.returncode != 0:
                subprocess.run(self.user + self.pg_ctl("-m", "immediate", "stop"), capture_output=True, timeout=60,
                               stdin=subprocess.DEVNULL)
                problems.append(f"pg_ctl stop -m fast failed: {result.stderr.strip()[-500:]}")
            self.running = False
        if os.path.exists(self.log):
            shutil.copyfile(self.log, os.path.join(self.workdir, "postgres.log"))
        shutil.rmtree(self.dir, ignore_errors=True)
        return problems


# MARK: - The webhook receiver

class Receiver:
    def __init__(self, workdir, secrets):
        self.errors_path = os.path.join(workdir, "receiver.log")
        self.lock = threading.Lock()
        with open(self.errors_path, "w") as errors:
            self.process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "webhook_receiver.py")] + [a for s in secrets for a in ("--secret", s)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True)
        line = self.process.stdout.readline()
        if not line.strip().isdigit():
            self.process.kill()
            self.process.wait()
            raise SetupError(f"webhook_receiver.py did not start (it needs PyPI standardwebhooks); {self.errors_path}")
        self.port = int(line)

    def state(self):
        with self.lock:
            if self.process.poll() is not None:
                raise RuntimeError(f"webhook_receiver.py exited ({self.process.returncode}); see {self.errors_path}")
            self.process.stdin.write('{"op": "state"}\n')
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"webhook_receiver.py did not answer; see {self.errors_path}")
        return json.loads(line)

    def stop(self):
        """The receiver's exit status: 1 when a request handler raised."""
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


# MARK: - The cluster

class EventsCluster(kiosk_cluster.Cluster):
    """cluster.py's Cluster without nginx, with webhook endpoints on the receiver and an operator."""

    def __init__(self, binary, workdir, database, receiver, secret_files, operator_hash):
        super().__init__(binary, workdir, database, 3, tls=False)
        self.receiver, self.secret_files, self.operator_hash = receiver, secret_files, operator_hash
        self.answers_log = os.path.join(self.workdir, "answers.log")
        self.answers_lock = threading.Lock()
        self.pids = {}              # process id -> instance index, every process an instance ever had
        self.killed = set()         # processes this script killed
        self.issues = (((1, 2, 8)[k % 3], (datetime.date(2024, 1, 1) + datetime.timedelta(days=k)).isoformat())
                       for k in range(100000))
        self.issues_lock = threading.Lock()   # publishing threads take the next issue in turn
        self.archive = self.issue_folder = None

    def write_configuration(self, samples=False):
        super().write_configuration(samples=False)
        lines = ["", "# events_cluster.py", "operators:",
                 f'  - {{ username: {OPERATOR[0]}, password_hash: "{self.operator_hash}", role: operator }}',
                 "webhooks:", '  allow_hosts: ["127.0.0.1"]', f"  timeout_seconds: {TIMEOUT_SECONDS}", "  concurrency: 16",
                 "  endpoints:"]
        for (name, query, types), secret_file in zip(ENDPOINTS, self.secret_files):
            lines += [f"    - name: {name}", f"      owner: {OPERATOR[0]}",
                      f'      url: "http://127.0.0.1:{self.receiver.port}/answer/200?{query}"',
                      f"      secret_file: {json.dumps(secret_file)}"]
            if types:
                lines.append(f"      types: [{', '.join(types)}]")
        lines += ["events:", "  keep_days: 7", ""]
        with open(self.config, "a") as f:
            f.write("\n".join(lines))

    def start(self, startup=None):
        os.makedirs(self.workdir, exist_ok=True)
        os.makedirs(self.editions, exist_ok=True)
        self.nginx_port = free_port()     # only public_url's port: no nginx here
        self.write_configuration()
        checked = self.run([self.binary, "config", "check", "--config", self.config], "KioskServer config check", check=False)
        if checked.returncode != 0:
            raise SetupError(f"KioskServer config check refused {self.config}: {(checked.stderr or checked.stdout).strip()[-1500:]}")
        self.launch(self.instances[0], 0)
        self.wait_listening(self.instances[0])
        for instance in self.instances[1:]:
            self.launch(instance, 0)
        for instance in self.instances[1:]:
            self.wait_listening(instance)
        for instance in self.instances:
            self.warm(instance)
        self.issue_folder = write_issue(os.path.join(self.workdir, "in-issue"), pages=1, seed=3)
        self.archive = zip_folder(self.issue_folder)

    def launch(self, instance, port):
        super().launch(instance, port)
        self.pids[instance.process.pid] = instance.index

    def kill(self, instance):
        self.killed.add(instance.process.pid)
        super().kill(instance)

    def terminate(self, instance):
        """Asks an instance to stop (SIGTERM, a graceful shutdown) without waiting for it."""
        self.killed.add(instance.process.pid)
        instance.process.send_signal(signal.SIGTERM)

    def instance_of(self, identity):
        """The instance whose process a webhook worker identity ("host/pid/random") names, or None."""
        parts = (identity or "").split("/")
        if len(parts) >= 3 and parts[-2].isdigit():
            return self.pids.get(int(parts[-2]))
        return None

    def live_instance(self, identity):
        parts = (identity or "").split("/")
        if len(parts) < 3 or not parts[-2].isdigit():
            return None
        pid = int(parts[-2])
        for instance in self.instances:
            if instance.process and instance.process.pid == pid and instance.process.poll() is None:
                return instance
        return None

    def publish(self, instance, edition=None, date=None, timeout=60):
        """(instance index, edition, date, start, end, outcome) of one PUT /publish; a 201 goes to answers.log."""
        if edition is None or date is None:
            with self.issues_lock:
                edition, date = next(self.issues)
        start = time.time()
        result = outcome(lambda: self.publish_http(instance.port, edition, date, self.archive, timeout=timeout))
        if result[0] == "ok" and result[1][0] == 201:
            with self.answers_lock, open(self.answers_log, "a") as f:
                f.write(f"published {edition}/{date}\n")
        return {"instance": instance.index, "edition": edition, "date": date, "start": start, "end": time.time(),
                "result": result}

    def forget_published(self, edition, date):
        """An issue withdrawn on purpose leaves answers.log (crash_check.py expects every line there visible)."""
        with self.answers_lock:
            with open(self.answers_log) as f:
                lines = f.readlines()
            with open(self.answers_log, "w") as f:
                f.writelines(line for line in lines if line.strip() != f"published {edition}/{date}")

    def rows(self, sql):
        return self.database_rows(sql)

    def dead_unasked(self):
        """Instances whose process exited though this script did not kill or stop it."""
        return [i for i in self.instances if i.process and i.process.poll() is not None and i.process.pid not in self.killed]


def publish_many(cluster, count, instances=None, parallel=None):
    """`count` publishes spread over `instances` (default all), one thread per instance; their records."""
    instances = instances or cluster.instances
    plan = collections.defaultdict(int)
    for k in range(count):
        plan[k % len(instances)] += 1
    results, lock = [], threading.Lock()

    def work(index):
        for _ in range(plan[index]):
            record = cluster.publish(instances[index])
            with lock:
                results.append(record)
    threads = [threading.Thread(target=work, args=(i,)) for i in plan]
    for thread in threads:
        thread.start()
    return threads, results


def acknowledged(records):
    return [r for r in records if r["result"][0] == "ok" and r["result"][1][0] == 201]


# MARK: - What the database and the receiver say

def outbox(cluster, after=0):
    return [(int(i), t, b) for i, t, b in cluster.rows(f"SELECT id, type, body FROM outbox_events WHERE id > {after} ORDER BY id")]


def max_event(cluster):
    value = cluster.rows("SELECT COALESCE(MAX(id), 0) FROM outbox_events")[0][0]
    return int(value)


def delivery_rows(cluster, after=0):
    return [{"id": int(d), "event": int(e), "endpoint": n, "state": st, "attempts": int(a), "owner": o,
             "lease_until": int(lu) if lu is not None else None}
            for d, e, n, st, a, o, lu in cluster.rows(
                "SELECT d.id, d.event_id, w.name, d.state, d.attempts, d.lease_owner, d.lease_until "
                f"FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.event_id > {after}")]


def attempt_rows(cluster, after=0):
    return [{"delivery": int(d), "endpoint": n, "event": int(e), "attempt": int(a), "time": int(t),
             "status": int(s) if s is not None else None}
            for d, n, e, a, t, s in cluster.rows(
                "SELECT a.delivery_id, w.name, a.event_id, a.attempt, a.time, a.status "
                f"FROM webhook_attempts a JOIN webhook_endpoints w ON w.id = a.endpoint_id WHERE a.event_id > {after}")]


def arrivals(receiver_state):
    """The receiver's deliveries by (endpoint name, event number), each list in arrival order."""
    by_key = collections.defaultdict(list)
    for d in receiver_state["deliveries"]:
        by_key[(d["query"].get("endpoint"), event_number(d["id"]))].append(d)
    for value in by_key.values():
        value.sort(key=lambda d: d["arrived"])
    return by_key


def wait_delivered(cluster, after, deadline, upto=None):
    """Waits until every event after `after` (up to `upto`, default the newest at each look) has a delivered row
    for each endpoint that wants it, and the receiver has answered a try of it there. Returns what is missing
    (empty when done) once done or at `deadline`."""
    missing = ["not looked"]
    while True:
        events = [e for e in outbox(cluster, after) if upto is None or e[0] <= upto]
        delivered = {(r["endpoint"], r["event"]) for r in delivery_rows(cluster, after) if r["state"] == "delivered"}
        seen = {key for key, tries in arrivals(cluster.receiver.state()).items() if any(t["answered"] for t in tries)}
        missing = [f"evt_{number} ({kind}) to {name}: {'row delivered' if (name, number) in delivered else 'row not delivered'}, "
                   f"{'answered' if (name, number) in seen else 'no answered try'} at the receiver"
                   for number, kind, _ in events for name, _, types in ENDPOINTS
                   if wants(types, kind) and not ((name, number) in delivered and (name, number) in seen)]
        if not missing or time.time() > deadline:
            return missing
        time.sleep(0.5)


def check_deliveries(cluster, s, after, upto=None, killed_leases=()):
    """The checks every scenario makes on the events after `after` (up to `upto`): see the module's doc.
    `killed_leases`: (kill time, delivery row as leased at the kill) of the instances killed."""
    events = [e for e in outbox(cluster, after) if upto is None or e[0] <= upto]
    numbers = {e[0] for e in events}
    state = cluster.receiver.state()
    by_key = arrivals(state)
    rows = [r for r in delivery_rows(cluster, after) if r["event"] in numbers]
    attempts = [a for a in attempt_rows(cluster, after) if a["event"] in numbers]
    recorded = collections.defaultdict(list)
    for a in attempts:
        recorded[(a["endpoint"], a["event"])].append(a)
    rows_by_key = collections.defaultdict(list)
    for r in rows:
        rows_by_key[(r["endpoint"], r["event"])].append(r)
    secret_index = {name: k for k, (name, _, _) in enumerate(ENDPOINTS)}
    summary = {"events": len(events), "types": dict(collections.Counter(kind for _, kind, _ in events)),
               "endpoints": {}}
    for name, _, types in ENDPOINTS:
        wanted = [(number, kind, body) for number, kind, body in events if wants(types, kind)]
        tries = [d for (endpoint, number), ds in by_key.items() if endpoint == name and number in numbers for d in ds]
        distinct = {event_number(d["id"]) for d in tries}
        repeated = {number: len(ds) for (endpoint, number), ds in by_key.items()
                    if endpoint == name and number in numbers and len(ds) > 1}
        summary["endpoints"][name] = {"events_wanted": len(wanted), "distinct_webhook_ids": len(distinct),
                                      "tries_received": len(tries), "tried_more_than_once": len(repeated),
                                      "attempt_rows": sum(len(recorded[(name, n)]) for n, _, _ in wanted)}
        s.expect(len(distinct) == len(wanted) and distinct == {n for n, _, _ in wanted},
                 f"endpoint {name}: {len(distinct)} distinct webhook-ids received for {len(wanted)} events of its types in "
                 f"outbox_events; never received: {sorted(n for n, _, _ in wanted if n not in distinct)[:20]}; received but "
                 f"not wanted there: {sorted(distinct - {n for n, _, _ in wanted})[:20]}")
        for number, kind, body in wanted:
            key = (name, number)
            ds = by_key.get(key, [])
            row = rows_by_key.get(key, [])
            s.expect(len(row) == 1 and row[0]["state"] == "delivered",
                     f"evt_{number} ({kind}) to {name}: webhook_deliveries rows {row}, expected one, delivered")
            for d in ds:
                s.expect(d["verified"] == [secret_index[name]],
                         f"evt_{number} to {name}: the signature verified with secrets {d['verified']}, expected only "
                         f"[{secret_index[name]}] (its endpoint's): {d['errors']}")
                sent = json.loads(d["body"])
                s.expect(sent.get("id") == f"evt_{number}" and sent.get("type") == kind
                         and sent.get("data") == json.loads(body),
                         f"evt_{number} to {name}: the body {d['body'][:300]} is not the outbox's event ({kind}, {body[:200]})")
            # No two tries of one event to one endpoint at once, and a try again only once the previous one was
            # recorded (a webhook_attempts row with its webhook-timestamp) or its lease ran out.
            for first, second in zip(ds, ds[1:]):
                end = first["answered"] if first["answered"] is not None else float("inf")
                s.expect(second["arrived"] >= end,
                         f"evt_{number} to {name}: two tries overlap at the receiver (one arrived at {first['arrived']:.3f} "
                         f"and was answered at {first['answered']}, the next arrived at {second['arrived']:.3f}): a "
                         f"concurrent double delivery")
                stamp = int(first["timestamp"])
                if not any(a["time"] == stamp for a in recorded[key]):
                    # Its lease ran out at (its claim + LEASE_SECONDS), the claim a moment before the try (at most
                    # RETRY_SLACK on a crowded machine): a try well before that was made while it was valid.
                    s.expect(second["arrived"] >= stamp + LEASE_SECONDS - RETRY_SLACK,
                             f"evt_{number} to {name}: a try made at {stamp} was never recorded (no webhook_attempts row), "
                             f"yet it was tried again {second['arrived'] - stamp:.1f} s later, before its lease "
                             f"({LEASE_SECONDS} s) could have run out")
            for a in recorded[key]:
                if a["status"] is not None and 200 <= a["status"] < 300:
                    s.expect(any(int(d["timestamp"]) == a["time"] for d in ds),
                             f"evt_{number} to {name}: webhook_attempts records try {a['attempt']} at {a['time']} answered "
                             f"{a['status']}, the receiver never got a try with that webhook-timestamp")
    for delivery_row_time, row in killed_leases:
        key = (row["endpoint"], row["event"])
        if row["event"] not in numbers or recorded_before_kill(row, attempts):
            continue
        # Tries made after the kill (a try the killed instance sent may reach the receiver a little later, but
        # its webhook-timestamp is from before the kill).
        later = [d for d in by_key.get(key, []) if int(d["timestamp"]) > delivery_row_time]
        if later:
            s.expect(later[0]["arrived"] >= row["lease_until"] - 0.01 and int(later[0]["timestamp"]) >= row["lease_until"],
                     f"evt_{row['event']} to {row['endpoint']}: leased by a killed instance until {row['lease_until']}, "
                     f"tried again at {later[0]['arrived']:.3f}, while that lease was still valid")
    unknown = [d["id"] for d in state["deliveries"] if event_number(d["id"]) is None]
    s.expect(not unknown, f"the receiver got tries whose webhook-id is no event id: {unknown[:10]}")
    if after == 0 and upto is None:
        strays = sorted({str(d["id"]) for d in state["deliveries"] if event_number(d["id"]) not in numbers})
        s.expect(not strays, f"the receiver got tries of events outbox_events does not hold: {strays[:10]}")
    s.expect(not state["errors"], f"the webhook receiver raised: {state['errors'][:2]}")
    return summary


def recorded_before_kill(row, attempts):
    """Whether the killed instance recorded its try of a leased delivery after all (between the last look and
    the kill): a try made while that lease was valid (only its holder may try then). Its delivery may then be
    tried again at once, if that try failed."""
    claimed = row["lease_until"] - LEASE_SECONDS
    return any(a["delivery"] == row["id"] and claimed <= a["time"] < row["lease_until"] for a in attempts)


def check_alive(cluster, s):
    dead = cluster.dead_unasked()
    s.expect(not dead, "instances exited though nobody stopped them: " + "; ".join(
        f"instance {i.index} (exit {i.process.returncode}), its log ends: {cluster.log_tail(i)}" for i in dead))


# MARK: - Scenarios

def scenario_steady(cluster, s):
    after = max_event(cluster)
    s.report["events_before"] = after
    threads, records = publish_many(cluster, 30)
    # Meanwhile, events of the other kinds and from the CLI (a process with no webhook worker of its own).
    cli_published = []
    for _ in range(2):
        with cluster.issues_lock:
            edition, date = next(cluster.issues)
        cli_published.append((edition, date, cluster.publish_cli(edition, date, cluster.issue_folder)))
        with cluster.answers_lock, open(cluster.answers_log, "a") as f:
            f.write(f"published {edition}/{date}\n")
    cluster.run([cluster.binary, "user", "add", "--config", cluster.config, "--database", cluster.database,
                 "--username", "events-reader", "--password-stdin"], "KioskServer user add", input="events-reader-password\n")
    owners = collections.Counter()
    while any(t.is_alive() for t in threads):
        for row in delivery_rows(cluster, after):
            if row["owner"]:
                owners[cluster.instance_of(row["owner"])] += 1
        time.sleep(0.2)
    for thread in threads:
        thread.join()
    ok = acknowledged(records)
    failed = [f"{r['edition']}/{r['date']} on {r['instance']}: {describe(r['result']) if r['result'][0] != 'ok' else r['result'][1]}"
              for r in records if r not in ok]
    s.report["publishes"] = {"answered_201": len(ok), "per_instance": dict(collections.Counter(r["instance"] for r in ok)),
                             "cli": len(cli_published)}
    s.expect(not failed, f"{len(failed)} of 30 publishes failed with nothing going wrong: {failed[:5]}")
    # Withdraw two (on two instances), restore one, publish one again (a new revision).
    changes = []
    if len(ok) >= 3:
        x, y, z = ok[0], ok[1], ok[2]
        instances = cluster.instances
        changes.append(("withdraw", cluster.withdraw_http(instances[0].port, x["edition"], x["date"])))
        changes.append(("withdraw", cluster.withdraw_http(instances[1].port, y["edition"], y["date"])))
        cluster.forget_published(y["edition"], y["date"])
        restored = outcome(lambda: kiosk_cluster.Client(instances[2].port, timeout=60, auth=kiosk_cluster.PUBLISHER).request(
            "POST", f"/publish/{x['edition']}/{x['date']}/restore")[0])
        changes.append(("restore", restored[1] if restored[0] == "ok" else describe(restored)))
        again = cluster.publish(instances[1], z["edition"], z["date"])
        changes.append(("publish again", again["result"][1][0] if again["result"][0] == "ok" else describe(again["result"])))
    s.report["changes"] = changes
    s.expect([status for _, status in changes] == [200, 200, 200, 201],
             f"withdraw, withdraw, restore, publish again answered {changes}, expected 200, 200, 200, 201")
    missing = wait_delivered(cluster, after, time.time() + 60)
    s.expect(not missing, f"{len(missing)} deliveries not done 60 s after the publishes: {missing[:10]}")
    s.report["leases_seen_per_instance"] = {str(k): v for k, v in owners.items()}
    s.report["deliveries"] = check_deliveries(cluster, s, after)
    types = s.report["deliveries"]["types"]
    expected = {"issue.published": len(ok) + len(cli_published), "issue.withdrawn": 2, "issue.restored": 1,
                "issue.republished": 1, "reader.added": 1}
    s.expect(types == expected, f"the outbox holds {types} for this scenario's changes, expected {expected}")
    check_alive(cluster, s)


class LeaseSampler(threading.Thread):
    """Every leased delivery row seen, sampled from the database about 4 times a second: (delivery id, owner,
    lease_until) -> first time seen."""

    def __init__(self, cluster, after):
        super().__init__(daemon=True)
        self.cluster, self.after = cluster, after
        self.stop = threading.Event()
        self.seen = {}
        self.errors = 0

    def run(self):
        while not self.stop.is_set():
            try:
                now = time.time()
                for row in delivery_rows(self.cluster, self.after):
                    if row["owner"] and row["state"] == "waiting":
                        self.seen.setdefault((row["id"], row["owner"], row["lease_until"]), now)
            except RuntimeError:
                self.errors += 1
            self.stop.wait(0.25)


def find_kill_point(cluster, point, after, deadline):
    """(victim instance, its leased rows, what was seen) at `point`, or (None, [], why) by `deadline`."""
    while time.time() < deadline:
        now = time.time()
        leased = [r for r in delivery_rows(cluster, after)
                  if r["owner"] and r["state"] == "waiting" and r["lease_until"] and r["lease_until"] > now
                  and cluster.live_instance(r["owner"])]
        if not leased:
            time.sleep(0.02)
            continue
        by_owner = collections.Counter(r["owner"] for r in leased)
        if point == "leased":
            # The holder of the most slow tries (those stay leased for a while), else of the most leases.
            slow = collections.Counter(r["owner"] for r in leased if r["endpoint"] == "slow")
            owner = (slow or by_owner).most_common(1)[0][0]
            return cluster.live_instance(owner), [r for r in leased if r["owner"] == owner], {"leases": dict(by_owner)}
        # A try of the slow endpoint the receiver holds unanswered, of a delivery a live instance has leased.
        pending = {(d["query"].get("endpoint"), event_number(d["id"])): d for d in cluster.receiver.state()["deliveries"]
                   if d["answered"] is None and d["query"].get("endpoint") == "slow"
                   and time.time() < d["arrived"] + SLOW_DELAY - 0.25}
        held = [(pending[(r["endpoint"], r["event"])], r) for r in leased if (r["endpoint"], r["event"]) in pending]
        if not held:
            time.sleep(0.02)
            continue
        arrival, row = min(held, key=lambda pair: pair[0]["arrived"])
        victim = cluster.live_instance(row["owner"])
        seen = {"leases": dict(by_owner), "try": f"evt_{row['event']} to {row['endpoint']}", "arrived": arrival["arrived"]}
        if point == "answered":
            # Just after the receiver writes its answer: the instance has it, or nearly, and has not recorded it.
            time.sleep(max(0.0, arrival["arrived"] + SLOW_DELAY + 0.02 - time.time()))
        return victim, [r for r in leased if r["owner"] == row["owner"]], seen
    return None, [], "no lease of a live instance seen in time"


def scenario_kill(cluster, s):
    after = max_event(cluster)
    sampler = LeaseSampler(cluster, after)
    sampler.start()
    rounds, killed_leases, all_records = [], [], []
    try:
        for point in ("leased", "arrived", "answered"):
            threads, records = publish_many(cluster, 9)
            victim, leases, seen = find_kill_point(cluster, point, after, time.time() + 30)
            kill_time = time.time()
            if victim is not None:
                # The leases as they are at the kill (some may have been recorded since the look).
                current = {r["id"]: r for r in delivery_rows(cluster, after)}
                leases = [current[r["id"]] for r in leases
                          if current.get(r["id"], {}).get("owner") == r["owner"] and current[r["id"]]["state"] == "waiting"]
                kill_time = time.time()
                cluster.kill(victim)
            for thread in threads:
                thread.join()
            all_records += records
            round_report = {"point": point, "seen": seen, "victim": victim.index if victim else None,
                            "leases_at_kill": len(leases),
                            "leased_tries": [f"evt_{r['event']} to {r['endpoint']} until {r['lease_until']}" for r in leases][:20],
                            "publishes_answered_201": len(acknowledged(records))}
            if s.expect(victim is not None, f"round '{point}': no instance held a lease within 30 s of a burst of publishes "
                                            f"({seen}): deliveries are not in flight"):
                killed_leases += [(kill_time, r) for r in leases]
                started = time.time()
                cluster.restart(victim)
                round_report["restart_seconds"] = round(time.time() - started, 2)
            rounds.append(round_report)
        # A graceful stop (SIGTERM) of the instance holding a try the slow endpoint has not answered: it finishes the
        # tries in flight first (docs/events.md), so it leaves no lease behind and records that try.
        threads, records = publish_many(cluster, 9)
        victim, leases, seen = find_kill_point(cluster, "arrived", after, time.time() + 30)
        graceful = {"seen": seen, "victim": victim.index if victim else None, "leases_at_sigterm": len(leases)}
        if s.expect(victim is not None, f"graceful stop: no instance held a slow try within 30 s ({seen})"):
            identity = leases[0]["owner"]
            stopping = time.time()
            cluster.terminate(victim)
            try:
                graceful["exit_status"] = victim.process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                graceful["exit_status"] = None
                cluster.kill(victim)
            graceful["stop_seconds"] = round(time.time() - stopping, 2)
            left = [r for r in delivery_rows(cluster, after) if r["owner"] == identity and r["state"] == "waiting"]
            attempts = attempt_rows(cluster, after)
            unrecorded = [f"evt_{r['event']} to {r['endpoint']}" for r in leases
                          if not any(a["delivery"] == r["id"] for a in attempts)]
            left_names = [f"evt_{r['event']} to {r['endpoint']}" for r in left]
            graceful.update({"leases_left": left_names, "tries_not_recorded": unrecorded})
            s.expect(graceful["exit_status"] == 0,
                     f"instance {victim.index}, stopped with SIGTERM during webhook tries, "
                     f"{'did not exit within 40 s' if graceful['exit_status'] is None else 'exited ' + str(graceful['exit_status'])}")
            s.expect(not left and not unrecorded,
                     f"instance {victim.index} stopped gracefully (SIGTERM) with {len(leases)} tries in flight but left "
                     f"{len(left)} deliveries leased ({left_names[:10]}) "
                     f"and these tries unrecorded: {unrecorded[:10]}: a graceful stop must finish the tries in flight "
                     f"first (docs/events.md), or they wait {LEASE_SECONDS} s for their leases and are sent twice")
            # Tries it left leased are retried once their leases run out: checked like a kill's.
            killed_leases += [(time.time(), r) for r in left]
            cluster.restart(victim)
        for thread in threads:
            thread.join()
        all_records += records
        s.report["graceful_stop"] = graceful
        last_kill = max((t for t, _ in killed_leases), default=time.time())
        s.report["rounds"] = rounds
        s.expect(killed_leases, "the killed instances held no leases at their kills")
        missing = wait_delivered(cluster, after, last_kill + LEASE_SECONDS + 40)
        s.expect(not missing, f"{len(missing)} deliveries not done {LEASE_SECONDS + 40} s after the last kill (a lease "
                              f"is {LEASE_SECONDS} s): {missing[:10]}")
    finally:
        sampler.stop.set()
        sampler.join()
    # Each delivery leased by a killed instance: taken again only after its lease ran out, by another worker.
    rows = {r["id"]: r for r in delivery_rows(cluster, after)}
    attempts = attempt_rows(cluster, after)
    taken = []
    for kill_time, old in killed_leases:
        if recorded_before_kill(old, attempts):
            taken.append({"try": f"evt_{old['event']} to {old['endpoint']}", "recorded_before_the_kill": True})
            continue
        later = sorted((first, owner, until) for (delivery, owner, until), first in sampler.seen.items()
                       if delivery == old["id"] and owner != old["owner"])
        final = rows.get(old["id"], {})
        s.expect(final.get("state") == "delivered",
                 f"evt_{old['event']} to {old['endpoint']} (leased by the killed instance) ends {final.get('state')}")
        for first, owner, until in later:
            s.expect(until >= old["lease_until"] + LEASE_SECONDS,
                     f"evt_{old['event']} to {old['endpoint']}: leased by the killed instance until {old['lease_until']}, "
                     f"leased again by {owner} until {until}, so claimed at {until - LEASE_SECONDS}, before the lease ran out")
        taken.append({"try": f"evt_{old['event']} to {old['endpoint']}", "lease_until": old["lease_until"],
                      "taken_by_instance": [cluster.instance_of(owner) for _, owner, _ in later][:3],
                      "taken_after_seconds": round(later[0][0] - old["lease_until"], 2) if later else None})
    s.report["killed_leases"] = taken[:30]
    s.report["sampler_errors"] = sampler.errors
    s.report["deliveries"] = check_deliveries(cluster, s, after, killed_leases=killed_leases)
    s.report["publishes_answered_201"] = len(acknowledged(all_records))
    check_alive(cluster, s)


class Follower(threading.Thread):
    """An operator's SSE reader that follows the stream from event `after` through whatever happens: whenever
    its stream ends, fails or is refused, it resumes with Last-Event-ID on the next instance (0, 1, 2, 0, …).
    `finish(target)` stops it once it has read up to event `target`."""

    def __init__(self, cluster, after):
        super().__init__(daemon=True)
        self.cluster, self.last = cluster, f"evt_{after}"
        self.read = []             # (instance index, id, type, data)
        self.connections = []      # (instance index, events read, how it ended)
        self.target = None
        self.stopped = threading.Event()

    def run(self):
        import httpx
        from httpx_sse import connect_sse
        k = 0
        with httpx.Client(auth=OPERATOR, timeout=httpx.Timeout(5.0, read=4.0)) as client:
            while not self.stopped.is_set():
                instance = self.cluster.instances[k % len(self.cluster.instances)]
                k += 1
                count, ended = 0, "the server ended the stream"
                try:
                    with connect_sse(client, "GET", f"http://127.0.0.1:{instance.port}/events",
                                     headers={"Last-Event-ID": self.last}) as source:
                        if source.response.status_code != 200:
                            ended = f"answered {source.response.status_code}"
                        else:
                            for event in source.iter_sse():
                                if event.id:
                                    self.read.append((instance.index, event.id, event.event, event.data))
                                    self.last = event.id
                                    count += 1
                                if self.done():
                                    ended = "finished"
                                    break
                except (httpx.TransportError, httpx.StreamError) as error:
                    ended = type(error).__name__
                self.connections.append((instance.index, count, ended))
                if self.done():
                    return
                time.sleep(0.2)

    def done(self):
        return self.target is not None and event_number(self.last) is not None and event_number(self.last) >= self.target

    def finish(self, target, deadline):
        self.target = target
        self.join(timeout=max(0.0, deadline - time.time()))
        self.stopped.set()
        self.join()


def check_stream(cluster, s, read, after, what):
    """What a reader read after event `after`: every event of outbox_events after it, once, in order, with its
    data, type and id."""
    stored = outbox(cluster, after)
    ids = [event_id for _, event_id, _, _ in read]
    expected = [f"evt_{n}" for n, _, _ in stored]
    duplicates = [i for i, n in collections.Counter(ids).items() if n > 1]
    s.expect(not duplicates, f"{what}: events read more than once across the reconnections: {duplicates[:10]}")
    first_difference = next((k for k, (x, y) in enumerate(zip(ids, expected)) if x != y), min(len(ids), len(expected)))
    s.expect(ids == expected,
             f"{what}: read {len(ids)} events, outbox_events holds {len(expected)} after evt_{after}; first difference at "
             f"position {first_difference} (read {ids[first_difference:first_difference + 3]}, stored "
             f"{expected[first_difference:first_difference + 3]}); missing {sorted(set(expected) - set(ids))[:10]}, "
             f"extra {sorted(set(ids) - set(expected))[:10]}")
    by_id = {f"evt_{n}": (kind, body) for n, kind, body in stored}
    wrong = []
    for index, event_id, kind, data in read:
        body = json.loads(data)
        expected_event = by_id.get(event_id)
        if not expected_event or body.get("id") != event_id or body.get("type") != kind or kind != expected_event[0] \
                or body.get("data") != json.loads(expected_event[1]):
            wrong.append(f"{event_id} on instance {index}: {data[:200]}")
    s.expect(not wrong, f"{what}: events whose data is not the outbox's: {wrong[:5]}")
    return len(stored)


def scenario_pgrestart(cluster, s, postgres):
    after = max_event(cluster)
    follower = Follower(cluster, after)
    follower.start()
    try:
        pgrestart(cluster, s, postgres, after, follower)
    finally:
        follower.stopped.set()


def pgrestart(cluster, s, postgres, after, follower):
    offsets = [cluster.log_size(i) for i in cluster.instances]
    stop = threading.Event()
    records, lock = [], threading.Lock()

    def publisher(instance):
        while not stop.is_set():
            record = cluster.publish(instance, timeout=30)
            with lock:
                records.append(record)
            if record["result"][0] != "ok" or record["result"][1][0] != 201:
                time.sleep(0.2)
    threads = [threading.Thread(target=publisher, args=(i,)) for i in cluster.instances]
    for thread in threads:
        thread.start()
    outages = []
    try:
        # Two outages while publishing and delivering: `pg_ctl restart -m fast`, then the server stopped for
        # PG_DOWN_SECONDS and started again (tries in flight then cannot be recorded: their leases must run out).
        for name, interrupt in (("pg_ctl restart -m fast", postgres.restart),
                                (f"pg_ctl stop -m fast, {PG_DOWN_SECONDS} s down, pg_ctl start", postgres.stop_and_start)):
            time.sleep(2.0)
            down = time.time()
            interrupt()
            up = time.time()
            recovered = {}
            # Each instance must publish again by itself.
            while time.time() < up + RECOVERY_SECONDS + 10 and len(recovered) < len(cluster.instances):
                with lock:
                    for r in records:
                        if r["start"] > up and r["result"][0] == "ok" and r["result"][1][0] == 201:
                            recovered.setdefault(r["instance"], round(r["end"] - up, 2))
                time.sleep(0.2)
            with lock:
                during = [r for r in records if r["end"] >= down and r["start"] <= up]
            outages.append({"how": name, "seconds": round(up - down, 2), "up": up,
                            "outcomes": dict(collections.Counter(describe(r["result"]) if r["result"][0] != "ok"
                                                                 else f"HTTP {r['result'][1][0]}" for r in during)),
                            "publish_recovered_after_seconds": recovered})
            s.expect(len(recovered) == len(cluster.instances),
                     f"after {name}: instances {[i.index for i in cluster.instances if i.index not in recovered]} published "
                     f"nothing within {RECOVERY_SECONDS + 10} s of PostgreSQL being back: they must reconnect by themselves")
            s.expect(all(v <= RECOVERY_SECONDS for v in recovered.values()),
                     f"after {name}: publishing came back only after {recovered} s, more than {RECOVERY_SECONDS} s")
        time.sleep(1.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    ok = acknowledged(records)
    s.report.update({"publishes": len(records), "answered_201": len(ok),
                     "outages": [{k: v for k, v in o.items() if k != "up"} for o in outages]})
    wrong = [r for r in records if r["result"][0] == "ok" and r["result"][1][0] not in (201, 500, 503)]
    s.expect(not wrong, f"publishes around the outages answered {[(r['result'][1][0], str(r['result'][1][1])[:200]) for r in wrong][:5]}"
                        f", expected 201, or 500/503 while the database is away")
    check_alive(cluster, s)
    # Everything answered 201 has its event.
    published = {(str(json.loads(b).get("edition")), str(json.loads(b).get("date")), str(json.loads(b).get("revision")))
                 for _, kind, b in outbox(cluster, after) if kind == "issue.published"}
    lost = [f"{r['edition']}/{r['date']} r{r['result'][1][1].get('revision')}" for r in ok
            if isinstance(r["result"][1][1], dict)
            and (str(r["edition"]), r["date"], str(r["result"][1][1].get("revision"))) not in published]
    s.expect(not lost, f"publishes answered 201 with no issue.published event: {lost[:10]}")
    last_up = outages[-1]["up"] if outages else time.time()
    follower.finish(max_event(cluster), time.time() + 30)
    s.report["stream"] = {"events_read": len(follower.read),
                          "connections": [f"instance {i}: {n} events, {how}" for i, n, how in follower.connections][:40]}
    check_stream(cluster, s, follower.read, after, "the stream followed through the outages")
    missing = wait_delivered(cluster, after, last_up + LEASE_SECONDS + 45)
    s.expect(not missing, f"{len(missing)} deliveries not done {LEASE_SECONDS + 45} s after PostgreSQL came back: {missing[:10]}")
    logs = [cluster.log_since(i, o) for i, o in zip(cluster.instances, offsets)]
    s.report["log_lines_per_instance"] = {
        what: [log.count(what) for log in logs]
        for what in ("webhook try not recorded", "recording a webhook try failed", "leasing webhook deliveries failed",
                     "offering events to webhook endpoints failed")}
    s.report["deliveries"] = check_deliveries(cluster, s, after)


def scenario_stream(cluster, s):
    import httpx
    from httpx_sse import connect_sse

    a, b, c = cluster.instances
    read, segments = [], []
    publisher, publish_records = None, []

    def base(instance):
        return f"http://127.0.0.1:{instance.port}"

    def read_from(instance, last, stop_when, on_event=None):
        """Reads from `instance` until stop_when() says so after an event; returns how it ended."""
        headers = {"Last-Event-ID": last} if last else {}
        params = {} if last else {"after": "0"}
        count = 0
        with httpx.Client(auth=OPERATOR, timeout=httpx.Timeout(10.0, read=25.0)) as client:
            try:
                with connect_sse(client, "GET", base(instance) + "/events", params=params, headers=headers) as source:
                    status = source.response.status_code
                    kind = source.response.headers.get("content-type", "")
                    if status != 200 or not kind.startswith("text/event-stream"):
                        return f"answered {status} {kind}: {source.response.read()[:300]!r}", count
                    for event in source.iter_sse():
                        if not event.id:
                            continue
                        read.append((instance.index, event.id, event.event, event.data))
                        count += 1
                        if on_event:
                            on_event()
                        if stop_when():
                            return "cut by the client", count
                    return "the server ended the stream", count
            except (httpx.TransportError, httpx.StreamError) as error:
                return f"{type(error).__name__}: {error}", count

    start_count = max_event(cluster)
    total_before = len(outbox(cluster))
    s.expect(total_before > 10, f"only {total_before} events to read")
    # A: from the start, cut by the client 10 events before the end (past the first page of 200 when there are
    # more: a stream reads the outbox a page at a time).
    cut = max(1, total_before - 10)
    ended, count = read_from(a, None, lambda: len(read) >= cut)
    segments.append({"instance": a.index, "events": count, "ended": ended, "last": read[-1][1] if read else None})
    # B: resumed; caught up, then live while issues are published on A and C; stopped (SIGTERM) after three live
    # events: the server ends the stream as it shuts down, and must still shut down while a stream is open.
    live = {"n": 0}

    def start_publishing():
        nonlocal publisher
        if publisher is None and read and int(read[-1][1][4:]) >= start_count:
            def work():
                for k in range(6):
                    publish_records.append(cluster.publish([c, a][k % 2]))
                    time.sleep(0.3)
            publisher = threading.Thread(target=work)
            publisher.start()

    def count_live():
        start_publishing()
        if int(read[-1][1][4:]) > start_count:
            live["n"] += 1

    stopping = {}

    def stop_b_after_three():
        if live["n"] >= 3 and not stopping:
            stopping["at"] = time.time()
            cluster.terminate(b)
        return False   # read on until the server ends the stream
    last = read[-1][1] if read else None
    ended, count = read_from(b, last, stop_b_after_three, on_event=count_live)
    ended_at = time.time()
    exit_status = None
    if stopping:
        try:
            exit_status = b.process.wait(timeout=max(1.0, stopping["at"] + 30 - time.time()))
        except subprocess.TimeoutExpired:
            cluster.kill(b)
    segments.append({"instance": b.index, "events": count, "ended": ended, "last": read[-1][1] if read else None,
                     "stream_ended_after_sigterm_seconds": round(ended_at - stopping["at"], 2) if stopping else None,
                     "exit_status": exit_status})
    if s.expect(stopping, f"instance {b.index}'s stream never carried three live events ({ended}, {live})"):
        s.expect(exit_status == 0, f"instance {b.index}, asked to stop (SIGTERM) with a stream open, "
                                   f"{'did not exit within 30 s' if exit_status is None else f'exited {exit_status}'}")
        s.expect(ended_at - stopping["at"] < 20, f"instance {b.index}'s stream ended {ended_at - stopping['at']:.1f} s after "
                                                f"SIGTERM: streams must end when the server shuts down")
    if publisher:
        publisher.join()
    s.expect(publisher is not None, "the reader never caught up on instance 1, so nothing was published live")
    # Two more while no one reads, so that instance 2 has new events to give as well as the backlog.
    publish_records += [cluster.publish(a) for _ in range(2)]
    s.expect(len(acknowledged(publish_records)) == len(publish_records),
             f"publishes during the stream failed: {[describe(r['result']) for r in publish_records if r not in acknowledged(publish_records)]}")
    # C: resumed until the newest event.
    newest = max_event(cluster)
    last = read[-1][1] if read else None
    ended, count = read_from(c, last, lambda: int(read[-1][1][4:]) >= newest)
    segments.append({"instance": c.index, "events": count, "ended": ended, "last": read[-1][1] if read else None})
    if b.process.poll() is not None:
        cluster.restart(b)
    s.report["segments"] = segments
    stored = check_stream(cluster, s, read, 0, "the stream across instances")
    s.report.update({"events_read": len(read), "events_stored": stored, "published_live": len(publish_records)})
    s.expect(all(seg["events"] > 0 for seg in segments),
             f"a segment of the stream read nothing: {segments}")
    missing = wait_delivered(cluster, start_count, time.time() + LEASE_SECONDS + 30)
    s.expect(not missing, f"{len(missing)} deliveries of the events published during the stream not done: {missing[:10]}")
    check_alive(cluster, s)


def scenario_final(cluster, s):
    s.report["deliveries"] = check_deliveries(cluster, s, 0)
    events = outbox(cluster)
    numbers = [n for n, _, _ in events]
    present = set(numbers)
    s.report["outbox"] = {"events": len(events), "first": numbers[0] if numbers else None, "last": numbers[-1] if numbers else None,
                          "gaps": [n for n in range(numbers[0], numbers[-1] + 1) if n not in present][:50] if numbers else []}
    waiting = cluster.rows("SELECT COUNT(*) FROM webhook_deliveries WHERE state <> 'delivered'")[0][0]
    s.expect(int(waiting) == 0, f"{waiting} webhook deliveries are not delivered at the end")
    report = crash_check.check(cluster.database, cluster.editions, cluster.answers_log, 0, clean=True)
    s.report["crash_check"] = report
    s.expect(report["problems"] == [], f"crash_check.py: {report['problems']}")
    check_alive(cluster, s)
    logs = {i.index: cluster.log_since(i, 0) for i in cluster.instances}
    s.report["log_lines"] = {
        index: {"webhook try failed": text.count("webhook try failed"),
                "webhook try not recorded": text.count("webhook try not recorded"),
                "recording a webhook try failed": text.count("recording a webhook try failed"),
                "leasing webhook deliveries failed": text.count("leasing webhook deliveries failed"),
                "offering events to webhook endpoints failed": text.count("offering events to webhook endpoints failed")}
        for index, text in logs.items()}
    crashes = [f"instance {index}: {line[:300]}" for index, text in logs.items() for line in text.splitlines()
               if "Fatal error" in line or "Segmentation fault" in line or "Illegal instruction" in line]
    s.expect(not crashes, f"the instance logs show a crash: {crashes[:3]}")


# MARK: - Main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("workdir")
    parser.add_argument("--postgres-bin", default=None)
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=SCENARIOS)
    args = parser.parse_args()
    bin_dir = args.postgres_bin or newest_postgres_bin()
    if not bin_dir:
        print("no PostgreSQL server programs found in /usr/lib/postgresql/*/bin: apt-get install postgresql, or give "
              "--postgres-bin", file=sys.stderr)
        return 2
    if not shutil.which("psql"):
        print("psql is needed (apt-get install postgresql-client)", file=sys.stderr)
        return 2
    if not os.access(args.binary, os.X_OK):
        print(f"{args.binary} is not an executable", file=sys.stderr)
        return 2
    try:
        import httpx  # noqa: F401
        import httpx_sse  # noqa: F401
        import standardwebhooks  # noqa: F401
    except ImportError as error:
        print(f"events_cluster.py needs PyPI httpx, httpx-sse and standardwebhooks: {error}", file=sys.stderr)
        return 2

    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)
    report = {"binary": os.path.abspath(args.binary), "database": "postgresql", "workdir": workdir, "postgres_bin": bin_dir,
              "lease_seconds": LEASE_SECONDS, "scenarios": {}, "violations": []}
    started = time.time()
    status = 0
    postgres = receiver = cluster = None
    stop_problems = []

    def terminate(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    try:
        postgres = PrivatePostgres(bin_dir, workdir)
        postgres.start()
        database = postgres.create_database("kiosk_events")
        secrets, secret_files = [], []
        for name, _, _ in ENDPOINTS:
            secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
            path = os.path.join(workdir, f"{name}.secret")
            with open(path, "w") as f:
                f.write(secret + "\n")
            secrets.append(secret)
            secret_files.append(path)
        receiver = Receiver(workdir, secrets)
        hashed = subprocess.run([args.binary, "hash-password", "--cost", "4"], input=OPERATOR[1] + "\n", capture_output=True,
                                text=True, timeout=60)
        if hashed.returncode != 0 or not hashed.stdout.strip().startswith("$2"):
            raise SetupError(f"KioskServer hash-password failed: {hashed.stderr.strip()}")
        cluster = EventsCluster(args.binary, workdir, database, receiver, secret_files, hashed.stdout.strip())
        cluster.start()
        report.update({"postgres_port": postgres.port, "receiver_port": receiver.port,
                       "instances": [i.port for i in cluster.instances], "setup_seconds": round(time.time() - started, 2)})
        for name in args.scenarios:
            s = kiosk_cluster.Scenario(cluster, name)
            if name == "pgrestart":
                run_scenario(s, name, lambda: scenario_pgrestart(cluster, s, postgres))
            else:
                run_scenario(s, name, lambda: globals()[f"scenario_{name}"](cluster, s))
            while THREAD_ERRORS:
                s.violations.append(f"{name}: {THREAD_ERRORS.pop(0)}")
            s.report["violations"] = s.violations
            report["scenarios"][name] = s.report
            report["violations"] += s.violations
        status = 1 if report["violations"] else 0
    except SetupError as error:
        report["setup_error"] = str(error)
        report["violations"].append(f"set-up: {error}")
        status = 2
    except KeyboardInterrupt:
        report["violations"].append("interrupted")
        status = 2
    finally:
        if cluster:
            cluster.stop()
        if receiver and receiver.stop() not in (0, None):
            stop_problems.append(f"webhook_receiver.py exited {receiver.process.returncode}: a request handler raised "
                                 f"(see {receiver.errors_path})")
        if postgres:
            stop_problems += postgres.stop()
    return finish_report(report, started, status, stop_problems)


if __name__ == "__main__":
    sys.exit(main())
