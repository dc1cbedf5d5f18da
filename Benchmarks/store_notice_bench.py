#!/usr/bin/env python3
"""App Store Server Notifications V2 against the release server (issue 29): how many a second are applied end to
end, and whether a renewal storm slows the catalogue calls. Run by Benchmarks/store_notice_bench.sh.

    store_notice_bench.py BINARY WORKDIR DATABASE [--notices N] [--storm N] [--subscriptions N] [--rate R] ...

BINARY    KioskServer (release).
WORKDIR   created; gets the configuration, the test Apple CA, the signed bodies, the server's log, the wrk outputs.
DATABASE  a SQLite file (created), or the `postgres://` URL of an existing, empty database.

Everything the server is set up with comes from Tests/Clients/purchases.py, imported, not copied: its test Apple
certificate authority (AppleAuthority: root, intermediate and leaf with Apple's marker OIDs, P-256), its signed
transactions, renewal info and notifications (AppleStore), its configuration (Kiosk.write_configuration: app
`quiosc` selling the monthly `period` subscription cat.elpunt.quiosc.mensual, with the Google stand-in its
configuration names) and its way of starting the binary (Kiosk.start: `KioskServer serve` on port 0, the Samples
published, getEdicions answering). One instance.

Every notification is signed before any timing (multiprocessing, cryptography through PyJWT, ES256, x5c of three
certificates; ~12 KB a body) and posted once by wrk (Benchmarks/store_notice.lua, one thread, --connections
connections, as fast as the server answers). Server CPU is utime+stime of its process from /proc/PID/stat over each
phase; the load generators' CPU is their own rusage (os.wait4).

1. Throughput, one phase per outcome, --notices each (default 10 000):
   applied    DID_RENEW notifications, --notices / 10 subscriptions × 10 renewals, each a new payment (interleaved:
              renewal r of every subscription before renewal r+1 of any);
   duplicate  the same bodies again (verified, found stored, dropped);
   recorded   DID_RENEW of a product the app does not sell (verified as fully, stored, changes nothing).
2. Storm: the catalogue (XML-RPC epquiosc.getEdicions and epquiosc.getDarrersEdicio, one wrk each running
   Benchmarks/soak.lua unchanged: --rate calls a second in all, half each, from --catalogue-connections connections
   each pausing connections / rate between an answer and its next call: closed loop, so when answers slow the rate
   drops a little, by the answer time over the pause; the rate reached is reported per phase)
   measured alone for --baseline-seconds, then while --storm DID_RENEW notifications (default 100 000:
   --subscriptions 10 000 × 10 renewals, none for the subscriptions of phase 1) are posted as fast as the
   server answers, then alone again for --after-seconds. p99 of each method in each phase, and the ratio
   storm / baseline. Target: ≤ 1.2 for both methods.

Checks (exit 1 when one fails): every notification of a phase is answered 200 with the phase's outcome; no
catalogue call fails (wrk errors, non-200, fault); the database holds one store_notices row per distinct
notification posted and one store_payments row per renewal applied. Prints a human summary, and the JSON report
to --json. With --perf SECONDS, `perf record -g` samples the server for SECONDS from 5 s into the storm
(perf.data and perf-report.txt in WORKDIR); the storm's numbers are then perturbed by it.
"""
import argparse
import datetime
import json
import multiprocessing
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Tests", "Clients"))
sys.path.insert(0, HERE)
from machine import cpu_seconds, load_average, machine  # noqa: E402  (Benchmarks/machine.py)
import purchases  # noqa: E402  (Tests/Clients/purchases.py)
import crash_check  # noqa: E402  (Tests/Clients/crash_check.py)

UNSOLD = "cat.elpunt.quiosc.setmanal"   # not among quiosc's products: its notifications are recorded
DAY = 86400
MONTH = 30 * DAY
RENEWALS = 10

# MARK: - Signing, before any timing

_store = None


def _sign_init(authority):
    global _store
    _store = purchases.AppleStore(authority, None)


def _notification(spec):
    """One signed DID_RENEW body: spec = (phase digit, subscription, renewal 1..RENEWALS, product, signedDate ms)."""
    phase, subscription, renewal, product, signed = spec
    otid = f"{phase}0{subscription:09d}"
    tid = f"{phase}{renewal:02d}{subscription:08d}"
    start = purchases.at("2024-01-01T00:00:00") + (subscription % 28) * DAY
    base = dict(otid=otid, product=product)
    transaction = _store.transaction(**base, tid=tid, purchase=start + renewal * MONTH, expires=start + (renewal + 1) * MONTH,
                                     original_purchase=start, signed=signed)
    renewal_info = _store.renewal(**base, signed=signed + 1)
    jws = _store.notification("DID_RENEW", None, transaction, renewal_info, signed=signed + 2)
    return json.dumps({"signedPayload": jws}, separators=(",", ":"))


def sign_phase(pool, path, phase, subscriptions, product, first_signed_ms):
    """Signs subscriptions × RENEWALS notifications (renewal r of every subscription before renewal r+1) into `path`,
    one body a line; returns how many."""
    specs = [(phase, s, r, product, first_signed_ms + 3 * (r * subscriptions + s))
             for r in range(1, RENEWALS + 1) for s in range(subscriptions)]
    with open(path, "w") as f:
        for body in pool.imap(_notification, specs, chunksize=200):
            f.write(body + "\n")
    return len(specs)


# MARK: - Measuring


def cpu_wait_seconds(pid):
    """Time the process's threads have waited for a processor (run queue, /proc/PID/task/*/schedstat), in seconds:
    much more than its CPU time means the machine, not the server, set the pace."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[1])
        except FileNotFoundError:   # a thread that ended meanwhile
            pass
    return total / 1e9


class Wrk:
    """A wrk process; its own CPU time from os.wait4 when it ends."""

    def __init__(self, name, arguments, environment, log):
        self.name, self.log = name, log
        self.output = open(log, "w")
        self.process = subprocess.Popen(["wrk", *arguments], stdout=self.output, stderr=subprocess.STDOUT,
                                        env={**os.environ, **environment})
        self.started = time.monotonic()
        self.cpu = None
        self.status = None

    def running(self):
        """Whether wrk has not exited, without reaping it (wait() does, with os.wait4, for its rusage)."""
        return os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None

    def wait_for(self, paths, timeout):
        """Until every file of `paths` exists (store_notice.lua's threads made them), then SIGINT."""
        deadline = time.monotonic() + timeout
        while not all(os.path.exists(p) for p in paths):
            if not self.running() or time.monotonic() > deadline:
                return   # wait() reports it: the summary will show notifications unanswered
            time.sleep(0.005)
        self.interrupt()

    def interrupt(self):
        """SIGINT: wrk stops, prints its summary and runs the script's done()."""
        if self.running():
            os.kill(self.process.pid, signal.SIGINT)

    def wait(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                self.process.kill()
                pid, status, usage = os.wait4(self.process.pid, 0)
                self.output.close()
                raise RuntimeError(f"wrk {self.name} did not end within {timeout:.0f} s; see {self.log}")
            time.sleep(0.02)
        self.process.returncode = os.waitstatus_to_exitcode(status)   # reaped here, not by Popen
        self.wall = time.monotonic() - self.started
        self.cpu = usage.ru_utime + usage.ru_stime
        self.output.close()
        with open(self.log) as f:
            text = f.read()
        if self.process.returncode != 0:
            raise RuntimeError(f"wrk {self.name} exited with {self.process.returncode}: {text[-1500:]}")
        match = re.search(r"^(SOAKJSON|NOTICEJSON) (\{.*\})$", text, re.M)
        if not match:
            raise RuntimeError(f"wrk {self.name} printed no summary line: {text[-1500:]}")
        return json.loads(match.group(2))


class Bench:
    def __init__(self, args):
        self.args = args
        self.workdir = os.path.abspath(args.workdir)
        self.report = {"binary": os.path.abspath(args.binary), "database": "postgresql" if crash_check.is_postgres(args.database)
                       else "sqlite", "machine": machine(), "started": datetime.datetime.now().isoformat(timespec="seconds"),
                       "phases": {}, "failures": []}
        self.kiosk = None
        self.google = None

    def fail(self, message):
        print(f"FAILED: {message}", file=sys.stderr, flush=True)
        self.report["failures"].append(message)

    @property
    def pid(self):
        return self.kiosk.instances[0].process.pid

    @property
    def port(self):
        return self.kiosk.instances[0].port

    # MARK: set-up

    def prepare(self):
        """The work directory and the test Apple authority, before any thread is started: the signing pool
        forks, and a fork taken while another thread holds a lock can leave a worker waiting on it for ever."""
        os.makedirs(self.workdir, exist_ok=True)
        self.authority = purchases.AppleAuthority("Kiosk Bench Apple")
        apple_dir = os.path.join(self.workdir, "apple")
        os.makedirs(apple_dir, exist_ok=True)
        self.root_path = os.path.join(apple_dir, "AppleRootCA-G3-test.cer")
        with open(self.root_path, "wb") as f:
            f.write(self.authority.root_der)

    def start(self):
        root_path = self.root_path
        # The configuration names a Google stand-in (purchases.py's); nothing here asks it anything.
        self.google = purchases.GoogleStandIn(os.path.join(self.workdir, "google"),
                                              {"packageName": purchases.PACKAGE, "subscriptions": {}, "products": {}})
        self.kiosk = purchases.Kiosk(self.args.binary, self.workdir, self.args.database, 1)
        self.kiosk.write_configuration(root_path, self.google)
        self.kiosk.start()
        print(f"server: pid {self.pid}, port {self.port}, {self.report['database']}, log {self.kiosk.instances[0].log}",
              flush=True)

    def stop(self):
        problems = self.kiosk.stop() if self.kiosk else []
        if self.google:
            self.google.stop()
        for problem in problems:
            self.fail(f"stop: {problem}")

    def sign(self):
        a = self.args
        t0 = time.monotonic()
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # signedDate: increasing by a millisecond per JWS, all in the last hours (the server refuses the future).
        first = int((time.time() - 4 * 3600) * 1000)
        self.bodies = {}
        context = multiprocessing.get_context("fork")
        with context.Pool(os.cpu_count(), initializer=_sign_init, initargs=(self.authority,)) as pool:
            plan = []
            if not a.skip_throughput:
                plan += [("applied", 1, a.notices // RENEWALS, purchases.MONTHLY),
                         ("recorded", 3, a.notices // RENEWALS, UNSOLD)]
            if not a.skip_storm:
                plan += [("storm", 2, a.subscriptions, purchases.MONTHLY)]
            for name, digit, subscriptions, product in plan:
                path = os.path.join(self.workdir, f"bodies-{name}")
                count = sign_phase(pool, path + ".0", digit, subscriptions, product, first)
                first += 3 * count + 1000
                self.bodies[name] = (path, count)
                print(f"signed {count} notifications for {name} ({os.path.getsize(path + '.0') / 1e6:.0f} MB)", flush=True)
            pool.close()
            pool.join()
        usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.report["signing"] = {"seconds": round(time.monotonic() - t0, 1),
                                  "notifications": sum(c for _, c in self.bodies.values()),
                                  "cpu_seconds": round(usage1.ru_utime + usage1.ru_stime - usage0.ru_utime - usage0.ru_stime, 1)}
        if "applied" in self.bodies:
            self.bodies["duplicate"] = self.bodies["applied"]
        # Apple's own verifier accepts what is posted (once, as purchases.py checks each kind).
        with open(next(iter(self.bodies.values()))[0] + ".0") as f:
            sample = json.loads(f.readline())["signedPayload"]
        verdict = purchases.apple_library_verdict("notification", sample, self.authority.root_der)
        if verdict != "accepted":
            raise RuntimeError(f"Apple's SignedDataVerifier refuses the benchmark's notifications: {verdict}")

    # MARK: phases

    def notices_wrk(self, name):
        path, _ = self.bodies[name]
        if os.path.exists(f"{path}.done.0"):   # from the phase before on the same bodies
            os.remove(f"{path}.done.0")
        return Wrk(name, ["-t1", f"-c{self.args.connections}", f"-d{self.args.timeout}s", "--timeout", "30s", "--latency",
                          "-s", os.path.join(HERE, "store_notice.lua"), f"http://127.0.0.1:{self.port}"],
                   {"NOTICE_BODIES": path}, os.path.join(self.workdir, f"wrk-{name}.out"))

    def check_notices(self, name, result, expected):
        _, count = self.bodies[name]
        if result["errors"] or result["bad"] or result[expected] != count or result["notices"] != count:
            self.fail(f"{name}: of {count} notifications, {result['applied']} applied, {result['recorded']} recorded, "
                      f"{result['duplicate']} duplicate, {result['bad']} otherwise (first: {result['first_bad']!r}), "
                      f"{result['errors']} wrk errors; expected all {expected}")

    def throughput(self, name, expected):
        _, count = self.bodies[name]
        load0, cpu0, wait0 = load_average(), cpu_seconds(self.pid), cpu_wait_seconds(self.pid)
        wrk = self.notices_wrk(name)
        wrk.wait_for([self.bodies[name][0] + ".done.0"], self.args.timeout)
        result = wrk.wait(self.args.timeout + 60)
        cpu = cpu_seconds(self.pid) - cpu0
        waited = cpu_wait_seconds(self.pid) - wait0
        self.check_notices(name, result, expected)
        seconds = result["duration_us"] / 1e6
        phase = {"notices": count, "outcomes": {k: result[k] for k in ("applied", "recorded", "duplicate", "bad")},
                 "seconds": round(seconds, 2), "per_second": round(count / seconds, 1),
                 "server_cpu_seconds": round(cpu, 2), "server_cpu_pct": round(100 * cpu / seconds, 1),
                 "server_waited_for_cpu_seconds": round(waited, 2),
                 "per_server_cpu_second": round(count / cpu, 1) if cpu else None,
                 "sender_cpu_seconds": round(wrk.cpu, 2), "sender_cpu_pct": round(100 * wrk.cpu / wrk.wall, 1),
                 "latency_ms": {"p50": result["p50_us"] / 1e3, "p99": result["p99_us"] / 1e3, "max": result["max_us"] / 1e3},
                 "load_average": [load0, load_average()]}
        self.report["phases"][name] = phase
        print(f"{name:10s} {count:7d} notifications in {seconds:6.1f} s: {phase['per_second']:7.1f}/s, "
              f"{phase['per_server_cpu_second']:7.1f} per server CPU-s (server {phase['server_cpu_pct']:.0f}% CPU, "
              f"its threads waited {waited:.0f} s for a CPU, "
              f"wrk {phase['sender_cpu_pct']:.0f}%), p50 {phase['latency_ms']['p50']:.1f} ms, p99 {phase['latency_ms']['p99']:.1f} ms; "
              f"outcomes {phase['outcomes']}", flush=True)

    def catalogue_bodies(self):
        """The two calls' bodies, checked once (soak.lua's SOAK_BODY files)."""
        client = self.kiosk.client(0)
        editions = client.call("epquiosc.getEdicions", purchases.APP, "")
        edition = editions[0]["id"]
        calls = {"getEdicions": ("epquiosc.getEdicions", (purchases.APP, "")),
                 "getDarrersEdicio": ("epquiosc.getDarrersEdicio", (purchases.APP, "", edition, "", 7, "DESC"))}
        import xmlrpc.client
        self.catalogue = {}
        for name, (method, params) in calls.items():
            client.call(method, *params)
            path = os.path.join(self.workdir, f"{name}.xml")
            with open(path, "w") as f:
                f.write(xmlrpc.client.dumps(params, method, encoding="utf-8"))
            self.catalogue[name] = path

    def catalogue_wrks(self, phase, seconds):
        """One wrk per method at --rate / 2 calls a second: CONNECTIONS connections, each pausing so that
        connections / pause is the rate (the answer's own time, well under a millisecond, is not subtracted)."""
        per_method = self.args.rate / len(self.catalogue)
        pause_ms = max(1, round(self.args.catalogue_connections * 1000 / per_method))
        auth = __import__("base64").b64encode(b"kiosk:secret").decode()
        return {name: Wrk(f"{phase}-{name}", ["-t1", f"-c{self.args.catalogue_connections}", f"-d{seconds}s", "--timeout", "10s",
                                              "--latency", "-s", os.path.join(HERE, "soak.lua"), f"http://127.0.0.1:{self.port}/RPC2"],
                          {"SOAK_BODY": path, "SOAK_AUTH": auth, "SOAK_DELAY": str(pause_ms)},
                          os.path.join(self.workdir, f"wrk-{phase}-{name}.out"))
                for name, path in self.catalogue.items()}

    def catalogue_results(self, phase, wrks, timeout):
        results = {}
        for name, wrk in wrks.items():
            r = wrk.wait(timeout)
            if r["errors"] or r["faults"] or r["bad"] or not r["requests"]:
                self.fail(f"{phase} {name}: {r['requests']} calls, {r['errors']} wrk errors, {r['faults']} faults, "
                          f"{r['bad']} bad answers")
            seconds = r["duration_us"] / 1e6
            results[name] = {"calls": r["requests"], "per_second": round(r["requests"] / seconds, 1),
                             "p50_ms": r["p50_us"] / 1e3, "p90_ms": r["p90_us"] / 1e3, "p99_ms": r["p99_us"] / 1e3,
                             "max_ms": r["max_us"] / 1e3, "sender_cpu_seconds": round(wrk.cpu, 2)}
        return results

    def catalogue_alone(self, phase, seconds):
        load0, cpu0, t0 = load_average(), cpu_seconds(self.pid), time.monotonic()
        wait0 = cpu_wait_seconds(self.pid)
        results = self.catalogue_results(phase, self.catalogue_wrks(phase, seconds), seconds + 30)
        wall = time.monotonic() - t0
        cpu = cpu_seconds(self.pid) - cpu0
        self.report["phases"][phase] = {"seconds": round(wall, 1), "catalogue": results,
                                        "server_cpu_pct": round(100 * cpu / wall, 1),
                                        "server_waited_for_cpu_seconds": round(cpu_wait_seconds(self.pid) - wait0, 2),
                                        "load_average": [load0, load_average()]}
        self.show_catalogue(phase)

    def show_catalogue(self, phase):
        p = self.report["phases"][phase]
        if "server_waited_for_cpu_seconds" in p and "notices" not in p:
            print(f"{phase:10s} server {p['server_cpu_pct']:.0f}% CPU, its threads waited {p['server_waited_for_cpu_seconds']:.0f} s "
                  f"for a CPU; load average {p['load_average'][0][0]:.1f} → {p['load_average'][1][0]:.1f}", flush=True)
        for name, r in p["catalogue"].items():
            print(f"{phase:10s} {name:17s} {r['calls']:7d} calls, {r['per_second']:6.1f}/s, p50 {r['p50_ms']:.2f} ms, "
                  f"p90 {r['p90_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, max {r['max_ms']:.1f} ms", flush=True)

    def storm(self):
        a = self.args
        _, count = self.bodies["storm"]
        load0, cpu0, t0 = load_average(), cpu_seconds(self.pid), time.monotonic()
        wait0 = cpu_wait_seconds(self.pid)
        catalogue = self.catalogue_wrks("storm", a.timeout + 120)   # interrupted when the storm ends
        notices = self.notices_wrk("storm")
        perf = None
        if a.perf:
            time.sleep(5)
            data = os.path.join(self.workdir, "perf.data")
            perf = subprocess.Popen(["perf", "record", "-g", "-F", "499", "-p", str(self.pid), "-o", data, "--", "sleep", str(a.perf)],
                                    stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.workdir, "perf-record.log"), "w"))
        notices.wait_for([self.bodies["storm"][0] + ".done.0"], a.timeout)
        result = notices.wait(a.timeout + 60)
        storm_cpu = cpu_seconds(self.pid) - cpu0
        storm_waited = cpu_wait_seconds(self.pid) - wait0
        storm_wall = time.monotonic() - t0
        load1 = load_average()
        for wrk in catalogue.values():
            wrk.interrupt()
        results = self.catalogue_results("storm", catalogue, 30)
        self.check_notices("storm", result, "applied")
        seconds = result["duration_us"] / 1e6
        catalogue_cpu = sum(r["sender_cpu_seconds"] for r in results.values())
        self.report["phases"]["storm"] = {
            "notices": count, "outcomes": {k: result[k] for k in ("applied", "recorded", "duplicate", "bad")},
            "seconds": round(seconds, 2), "per_second": round(count / seconds, 1),
            "server_cpu_seconds": round(storm_cpu, 2), "server_cpu_pct": round(100 * storm_cpu / storm_wall, 1),
            "server_waited_for_cpu_seconds": round(storm_waited, 2),
            "per_server_cpu_second": round(count / storm_cpu, 1),
            "sender_cpu_seconds": round(notices.cpu, 2), "sender_cpu_pct": round(100 * notices.cpu / notices.wall, 1),
            "catalogue_sender_cpu_pct": round(100 * catalogue_cpu / storm_wall, 1),
            "latency_ms": {"p50": result["p50_us"] / 1e3, "p99": result["p99_us"] / 1e3, "max": result["max_us"] / 1e3},
            "catalogue": results, "load_average": [load0, load1]}
        p = self.report["phases"]["storm"]
        print(f"{'storm':10s} {count:7d} notifications in {seconds:6.1f} s: {p['per_second']:7.1f}/s, "
              f"{p['per_server_cpu_second']:7.1f} per server CPU-s (server {p['server_cpu_pct']:.0f}% CPU, its threads waited "
              f"{storm_waited:.0f} s for a CPU, notices' wrk "
              f"{p['sender_cpu_pct']:.0f}%, catalogue's wrks {p['catalogue_sender_cpu_pct']:.0f}%), "
              f"p50 {p['latency_ms']['p50']:.1f} ms, p99 {p['latency_ms']['p99']:.1f} ms; outcomes {p['outcomes']}", flush=True)
        self.show_catalogue("storm")
        if perf:
            if perf.wait() != 0:
                self.fail(f"perf record exited with {perf.returncode}; see {self.workdir}/perf-record.log")
            else:
                # Flat (self time per symbol), then with call graphs; Swift names demangled when swift-demangle is there.
                for suffix, extra in (("", ["-g", "none"]), ("-graph", [])):
                    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--percent-limit", "0.3", "--stdio",
                                             *extra], capture_output=True, text=True, check=True).stdout
                    if shutil.which("swift-demangle"):
                        report = subprocess.run(["swift-demangle", "--simplified"], input=report, capture_output=True,
                                                text=True, check=True).stdout
                    with open(os.path.join(self.workdir, f"perf-report{suffix}.txt"), "w") as out:
                        out.write(report)
                print(f"perf: {self.workdir}/perf-report.txt (flat), perf-report-graph.txt", flush=True)

    def check_database(self):
        """One store_notices row per distinct notification posted, one store_payments row per renewal applied."""
        expected_notices = sum(c for n, (_, c) in self.bodies.items() if n != "duplicate")
        expected_payments = sum(c for n, (_, c) in self.bodies.items() if n in ("applied", "storm"))
        db = crash_check.Database(self.kiosk.database)
        try:
            notices = int(db.rows("SELECT COUNT(*) FROM store_notices")[0][0])
            payments = int(db.rows("SELECT COUNT(*) FROM store_payments")[0][0])
            purchases_ = int(db.rows("SELECT COUNT(*) FROM store_purchases")[0][0])
        finally:
            if not db.postgres:
                db.sqlite.close()
        self.report["database"] = {"store_notices": notices, "store_payments": payments, "store_purchases": purchases_}
        print(f"database: {notices} notices (expected {expected_notices}), {payments} payments (expected {expected_payments}), "
              f"{purchases_} purchases", flush=True)
        if notices != expected_notices or payments != expected_payments:
            self.fail(f"the database holds {notices} notices and {payments} payments; expected {expected_notices} and "
                      f"{expected_payments}")

    def run(self):
        a = self.args
        self.prepare()
        self.sign()
        self.start()
        self.catalogue_bodies()
        if not a.skip_throughput:
            self.throughput("applied", "applied")
            self.throughput("duplicate", "duplicate")
            self.throughput("recorded", "recorded")
        if not a.skip_storm:
            self.catalogue_alone("baseline", a.baseline_seconds)
            self.storm()
            if a.after_seconds:
                self.catalogue_alone("after", a.after_seconds)
            ratios = {}
            for name in self.catalogue:
                base = self.report["phases"]["baseline"]["catalogue"][name]["p99_ms"]
                ratios[name] = round(self.report["phases"]["storm"]["catalogue"][name]["p99_ms"] / base, 2)
            met = all(r <= 1.2 for r in ratios.values())
            self.report["storm_p99_ratio"] = ratios
            self.report["storm_target_met"] = met
            print(f"catalogue p99, storm ÷ baseline: " + ", ".join(f"{n} {r:.2f}×" for n, r in ratios.items())
                  + f" (target ≤ 1.20×: {'met' if met else 'MISSED'})", flush=True)
        self.check_database()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("workdir")
    parser.add_argument("database")
    parser.add_argument("--notices", type=int, default=10000, help="notifications per throughput phase (default 10 000)")
    parser.add_argument("--storm", type=int, default=100000, help="the storm's notifications (default 100 000)")
    parser.add_argument("--subscriptions", type=int, default=None, help="the storm's subscriptions (default storm / 10)")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections posting notifications (default 16)")
    parser.add_argument("--rate", type=float, default=400, help="catalogue calls a second, both methods (default 400)")
    parser.add_argument("--catalogue-connections", type=int, default=40,
                        help="connections per catalogue method, each pausing connections / rate (default 40: 200 ms)")
    parser.add_argument("--baseline-seconds", type=int, default=30)
    parser.add_argument("--after-seconds", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=3600,
                        help="bound on one phase of notifications, seconds (default 3600; wrk's -d)")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-storm", action="store_true")
    parser.add_argument("--perf", type=int, default=0, metavar="SECONDS", help="perf record -g the server during the storm")
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args()
    if args.storm % RENEWALS or args.notices % RENEWALS:
        parser.error(f"--storm and --notices must be multiples of {RENEWALS} (renewals per subscription)")
    if args.subscriptions is None:
        args.subscriptions = args.storm // RENEWALS
    if args.subscriptions * RENEWALS != args.storm:
        parser.error(f"--subscriptions × {RENEWALS} must be --storm")
    for tool in ["wrk"] + (["perf"] if args.perf else []):
        if not shutil.which(tool):
            parser.error(f"{tool} is needed")

    bench = Bench(args)

    def terminate(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    status = 0
    try:
        bench.run()
    except BaseException as error:
        bench.fail(f"{type(error).__name__}: {error}")
        status = 2
        if not isinstance(error, (KeyboardInterrupt, RuntimeError, purchases.SetupError)):
            raise
    finally:
        bench.stop()
        bench.report["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(bench.report, f, indent=1)
    return status or (1 if bench.report["failures"] else 0)


if __name__ == "__main__":
    sys.exit(main())
