#!/usr/bin/env python3
"""Several Kiosk instances on one database behind a real nginx, under load and failure (issue 15).

    cluster.py BINARY WORKDIR DATABASE SCENARIO... [options]

BINARY    the KioskServer executable.
WORKDIR   created if missing; gets the configuration, the editions directory, publish folders, the
          instances' logs (instance-N.log), nginx's files (nginx/) and the clients' answer logs.
DATABASE  a SQLite file (all instances on this host share it) or a `postgres://user@host:port/db`
          URL of an existing, empty database (KIOSK_SECRET is always set for the instances).
SCENARIO  one or more of
  startup    every instance starts at the same moment on the empty database, with the sample issues
             configured: all start (migrations and catalogue sync under a lock), the samples end up
             published and complete, nothing left behind, every instance lists the same editions.
             (Without it, instance 0 starts first and the others then together.)
  demo       200 concurrent epusuaris.consumirDemo for one device through nginx, quota 3: exactly 3
             granted, the database agrees, the calls were spread over the instances.
  bundle     an issue whose bundle file is gone; 20 concurrent first-demand getEdicio through nginx:
             one build in all (kiosk_bundle_builds_total summed over the instances' own /metrics),
             one zip_sha256 in every answer, the publish-time one.
  publish    publish over HTTP on one instance and with the CLI, withdraw both ways, and four
             concurrent publishes of one issue (three instances and the CLI): every other instance
             lists the change at once (getEdicions, getDarrersEdicio, getEdicio), revisions distinct,
             one revision folder left.
  kill       mixed load through nginx (consumirDemo, getEdicio, bundle links, publishes), kill -9 of
             one instance in the middle: only requests in flight on it fail, nothing acknowledged is
             lost (crash_check.py), and it restarts cleanly while another instance is publishing.
  pgrestart  (PostgreSQL only) PostgreSQL stopped and started under load: calls fail with -32603 (not a
             wrong fault, not a hang), the instances recover by themselves, nothing acknowledged lost.
  all        startup demo bundle publish kill, and pgrestart when DATABASE is a URL and a way to stop and start
             the server is given.

Options
  --instances N              instances (default 3)
  --tls                      nginx listens with TLS (a self-signed certificate made with openssl)
  --pg-ctl CMD               how to control the PostgreSQL server for pgrestart: the driver runs
                             `CMD stop -m fast` and `CMD start -w` (a pg_ctl command line with -D, and the
                             -l/-o it was started with); or give both of
  --pg-stop CMD --pg-start CMD   full shell commands. Environment: KIOSK_PG_CTL, KIOSK_PG_STOP, KIOSK_PG_START.
  --pg-down-seconds S        how long PostgreSQL stays down (default 4)
  --recovery-seconds S       how long an instance may take to answer again once it is back (default 10)

Prints one JSON report on standard output; each violated expectation is also printed on standard
error, and the exit status is 1 when there is one (2 for a usage or set-up error). Everything started
(instances, nginx) is stopped on exit; WORKDIR is left for inspection.
"""
import argparse
import base64
import collections
import hashlib
import http.client
import io
import json
import os
import random
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
import xmlrpc.client
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import crash_check  # noqa: E402  (Tests/Clients/crash_check.py)

SECRET = "cluster-test-secret-" + "k" * 24
LINK_SECRET = "cluster-link-secret-0123456789abcdef"
API = ("kiosk", "secret")
PUBLISHER = ("publisher", "publisher-secret")
QUOTA = 3
BASE_DATE = "2025-07-01"         # edition 1 (subscribers: demos are spent on it) and 8 (free)
NGINX = "/usr/sbin/nginx"
FAIL_TIMEOUT = 3                 # nginx fail_timeout for the test upstream (production: 10 s)
PG_CLIENT_TIMEOUT = 15           # pgrestart: a client gives up on a call after this long (a hang)


class SetupError(Exception):
    """The cluster could not be set up or driven (exit status 2): a broken environment or input, or an
    instance that does not start at all."""


# MARK: - Publish folders (the same bytes on every run, like KioskTestSupport.IssueFolders.smallPages)

def _jpeg(n, seed, body):
    cycle = bytes(((i * 7919 + seed) % 251) for i in range(251))
    data = (cycle * (body // 251 + 1))[:body]
    return bytes([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x06, 0x40, 0x04, 0xB0, 0x03,
                  0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]) + data + b"\xff\xd9"


def _pdf(n, seed, binary):
    out = b"%PDF-1.4\n1 0 obj << >> endobj\n" + (f"BT (pagina {n}) Tj ET\n".encode() * 200)
    if binary:
        noise = random.Random(seed * 1000 + n).randbytes(binary)
        out += f"5 0 obj << /Length {binary} /Filter /DCTDecode >> stream\n".encode() + noise + b"\nendstream endobj\n"
    xref = len(out)
    return out + f"xref\n0 1\n0000000000 65535 f \ntrailer << >>\nstartxref\n{xref}\n%%EOF\n".encode()


def write_issue(folder, pages, seed=1, pdf_binary=0):
    """A publish folder of `pages` pages in section 1; `pdf_binary` random bytes per PDF make the bundle
    (and its build) bigger."""
    for kind in ("pdf", "jpg", "jpgA"):
        os.makedirs(os.path.join(folder, kind), exist_ok=True)
    entries = []
    for n in range(1, pages + 1):
        name = f"{n:03d}"
        jpeg = _jpeg(n, seed, 40_000 + n)
        for path, data in ((f"pdf/{name}.pdf", _pdf(n, seed, pdf_binary)), (f"jpg/{name}.jpg", jpeg[:2000] + b"\xff\xd9"),
                           (f"jpgA/{name}.jpg", jpeg)):
            with open(os.path.join(folder, path), "wb") as f:
                f.write(data)
        entries.append({"number": n, "section": 1, "pdf": f"pdf/{name}.pdf", "jpg": f"jpg/{name}.jpg",
                        "jpgA": f"jpgA/{name}.jpg"})
    with open(os.path.join(folder, "issue.json"), "w") as f:
        json.dump({"sections": [{"id": 1, "name": "Portada"}], "pages": entries}, f)
    return folder


def zip_folder(folder):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        for root, _, files in os.walk(folder):
            for name in sorted(files):
                path = os.path.join(root, name)
                z.write(path, os.path.relpath(path, folder))
    return buffer.getvalue()


# MARK: - HTTP and XML-RPC clients (http.client: every failure is seen and counted, nothing retried)

class HTTPStatusError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {body[:200]!r}")
        self.status = status


class Client:
    """One keep-alive connection to host:port, reopened after a failure. Never retries a request."""

    def __init__(self, port, host="127.0.0.1", tls=False, timeout=30.0, auth=API):
        self.host, self.port, self.tls, self.timeout = host, port, tls, timeout
        self.authorization = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode() if auth else None
        self.connection = None

    def _connect(self):
        if self.tls:
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                               context=ssl._create_unverified_context())
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def request(self, method, path, body=None, headers=None, auth=True):
        connection = self.connection or self._connect()
        self.connection = None
        all_headers = dict(headers or {})
        if auth and self.authorization:
            all_headers["Authorization"] = self.authorization
        try:
            connection.request(method, path, body=body, headers=all_headers)
            response = connection.getresponse()
            data = response.read()
        except BaseException:
            connection.close()
            raise
        if response.will_close:
            connection.close()
        else:
            self.connection = connection
        return response.status, response.headers, data

    def call(self, method, *params):
        body = xmlrpc.client.dumps(params, method, encoding="utf-8").encode()
        status, _, data = self.request("POST", "/RPC2", body, {"Content-Type": "text/xml"})
        if status != 200:
            raise HTTPStatusError(status, data)
        return xmlrpc.client.loads(data)[0][0]   # raises xmlrpc.client.Fault

    def close(self):
        if self.connection:
            self.connection.close()
            self.connection = None


def outcome(function):
    """("ok", value), ("fault", code), ("http", status), ("timeout", text) or ("network", text)."""
    try:
        return "ok", function()
    except xmlrpc.client.Fault as fault:
        return "fault", fault.faultCode
    except HTTPStatusError as error:
        return "http", error.status
    except socket.timeout as error:
        return "timeout", str(error)
    except (OSError, http.client.HTTPException, xmlrpc.client.ResponseError) as error:
        return "network", f"{type(error).__name__}: {error}"


def describe(result):
    kind, value = result
    return {"fault": f"fault {value}", "http": f"HTTP {value}"}.get(kind, f"{kind} {value}")


# MARK: - Metrics

_SAMPLE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def metric(text, name, **labels):
    """The sum of the samples of `name` whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or match.group(1) != name:
            continue
        have = dict(_LABEL.findall(match.group(2) or ""))
        if all(have.get(key) == value for key, value in labels.items()):
            total += float(match.group(3))
    return total


# MARK: - The cluster

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Instance:
    def __init__(self, index, log):
        self.index, self.log, self.process, self.port = index, log, None, None


class Cluster:
    def __init__(self, binary, workdir, database, instances, tls):
        self.binary = os.path.abspath(binary)
        self.workdir = os.path.abspath(workdir)
        self.postgres = crash_check.is_postgres(database)
        self.database = database if self.postgres else os.path.abspath(database)
        self.editions = os.path.join(self.workdir, "Editions")
        self.config = os.path.join(self.workdir, "kiosk.yaml")
        self.nginx_dir = os.path.join(self.workdir, "nginx")
        self.count, self.tls = instances, tls
        self.instances = [Instance(i, os.path.join(self.workdir, f"instance-{i}.log")) for i in range(instances)]
        self.nginx_port = None
        self.nginx_started = False
        self.environment = {**os.environ, "KIOSK_SECRET": SECRET, "KIOSK_LINK_SECRET": LINK_SECRET}

    # Set-up

    def start(self, startup=None):
        """Starts the instances and nginx, and publishes the base issues. With `startup` (the startup
        scenario) every instance starts at the same moment on the empty database, with the sample issues
        configured (each instance that finds the database empty publishes them); a failed start is that
        scenario's violation, and the instance is started again so that the other scenarios still run.
        Otherwise instance 0 starts (and migrates) first and the others then start together."""
        os.makedirs(self.workdir, exist_ok=True)
        os.makedirs(self.editions, exist_ok=True)
        self.nginx_port = free_port()
        self.write_configuration(samples=startup is not None)
        together = self.instances if startup else self.instances[1:]
        if not startup:
            self.launch(self.instances[0], 0)
            self.wait_listening(self.instances[0])
        for instance in together:
            self.launch(instance, 0)
        failed = []
        for instance in together:
            try:
                self.wait_listening(instance)
            except SetupError as error:
                if not startup:
                    raise
                failed.append(instance.index)
                startup.expect(False, f"instance {instance.index} did not start together with the others on an empty "
                                      f"database: {error}. Several instances may start at once: migrations and the "
                                      f"catalogue sync must take a lock (e.g. an exclusive transaction or an advisory lock)")
        if startup:
            startup.report["failed_to_start"] = failed
        for instance in together:
            if instance.index in failed:
                self.launch(instance, 0)
                self.wait_listening(instance)
        for instance in self.instances:
            self.warm(instance)
        self.write_nginx()
        self.run([NGINX, "-p", self.nginx_dir, "-c", os.path.join(self.nginx_dir, "nginx.conf")], "nginx start")
        self.nginx_started = True
        self.wait_http(self.nginx_port, "/healthz", tls=self.tls)
        small = write_issue(os.path.join(self.workdir, "in-base"), pages=3, seed=1)
        for edition in (1, 8):
            self.publish_cli(edition, BASE_DATE, small)

    def write_configuration(self, samples=False):
        with open(os.path.join(ROOT, "Config", "kiosk.yaml")) as f:
            text = f.read()
        scheme = "https" if self.tls else "http"
        replacements = [
            (r"(?m)^(\s*)database: .*$", r"\1database: " + json.dumps(self.database)),
            (r"(?m)^(\s*)editions: .*$", r"\1editions: " + json.dumps(self.editions)),
            (r"(?m)^(\s*)samples: .*$", (r"\1samples: " + json.dumps(os.path.join(ROOT, "Samples"))) if samples
             else r"\1# samples: none (the cluster publishes its own issues)"),
            (r"(?m)^(\s*)format: kiosk\b.*$", r"\1format: nginx"),
            (r"(?m)^(\s*)# public_url: .*$", rf"\1public_url: {scheme}://127.0.0.1:{self.nginx_port}"),
            (r"(?s)(- key: quiosc\b.*?demo_quota: )\d+", rf"\g<1>{QUOTA}"),
        ]
        for pattern, replacement in replacements:
            text, count = re.subn(pattern, replacement, text, count=1)
            if count != 1:
                raise SetupError(f"Config/kiosk.yaml no longer matches {pattern!r}: update cluster.py's write_configuration")
        with open(self.config, "w") as f:
            f.write(text)

    def write_nginx(self):
        os.makedirs(self.nginx_dir, exist_ok=True)
        with open(os.path.join(ROOT, "Deploy", "nginx-kiosk-cluster.conf")) as f:
            conf = f.read()
        # The line holding only @INSTANCES@ becomes one `server` line per instance (the header comment keeps its mention).
        conf, count = re.subn(r"(?m)^([ \t]*)@INSTANCES@[ \t]*$", lambda m: "\n".join(
            f"{m.group(1)}server 127.0.0.1:{i.port} max_fails=1 fail_timeout={FAIL_TIMEOUT}s;" for i in self.instances), conf)
        if count != 1:
            raise SetupError("Deploy/nginx-kiosk-cluster.conf must hold one line with only @INSTANCES@ on it")
        values = {"@EDITIONS@": self.editions + "/", "@LINK_SECRET@": LINK_SECRET}
        if self.tls:
            key, certificate = os.path.join(self.nginx_dir, "key.pem"), os.path.join(self.nginx_dir, "cert.pem")
            if not os.path.exists(certificate):
                self.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                          "-days", "2", "-subj", "/CN=127.0.0.1"], "openssl")
            values.update({"@LISTEN@": f"127.0.0.1:{self.nginx_port} ssl", "@CERTIFICATE@": certificate,
                           "@CERTIFICATE_KEY@": key})
        else:
            # Plain HTTP on loopback for the test: the TLS lines go, everything else is used as written.
            conf = re.sub(r"(?m)^[ \t]*ssl_[a-z_]+ .*;[ \t]*\n", "", conf)
            values["@LISTEN@"] = f"127.0.0.1:{self.nginx_port}"
        for placeholder, value in values.items():
            conf = conf.replace(placeholder, value)
        left = sorted(set(re.findall(r"@[A-Z_]+@", re.sub(r"(?m)#.*$", "", conf))))
        if left:
            raise SetupError(f"Deploy/nginx-kiosk-cluster.conf has placeholders cluster.py does not fill: {left}")
        d = self.nginx_dir
        main = f"""worker_processes 1;
worker_rlimit_nofile 4096;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 2000; }}
http {{
  log_format upstream '$msec $request_method $uri $status upstream=$upstream_addr upstream_status=$upstream_status time=$request_time';
  access_log {d}/access.log upstream;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
{conf}
}}
"""
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(main)
        self.run([NGINX, "-t", "-q", "-p", d, "-c", os.path.join(d, "nginx.conf")], "nginx -t")

    def run(self, command, what, check=True, timeout=120, **kwargs):
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=self.environment, **kwargs)
        if check and result.returncode != 0:
            raise SetupError(f"{what} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
        return result

    # Instances

    def launch(self, instance, port):
        with open(instance.log, "a") as log:
            log.write(f"\n==== cluster.py: starting instance {instance.index} on port {port or 'any'} at {time.time():.3f}\n")
            instance.offset = log.tell()
            instance.process = subprocess.Popen(
                [self.binary, "serve", "--config", self.config, "--database", self.database, "--editions", self.editions,
                 "--host", "127.0.0.1", "--port", str(port)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.environment, cwd=self.workdir)

    def wait_listening(self, instance, timeout=60):
        deadline = time.time() + timeout
        pattern = re.compile(r"rpc=https?://[^ ]+:(\d+)/RPC2")
        while time.time() < deadline:
            with open(instance.log) as f:
                f.seek(instance.offset)
                match = pattern.search(f.read())
            if match:
                instance.port = int(match.group(1))
                self.wait_http(instance.port, "/healthz")
                return
            if instance.process.poll() is not None:
                raise SetupError(f"instance {instance.index} exited with {instance.process.returncode} before listening; "
                                 f"its log, {instance.log}, ends: {self.log_tail(instance)}")
            time.sleep(0.05)
        raise SetupError(f"instance {instance.index} did not listen within {timeout} s; see {instance.log}")

    def log_tail(self, instance, lines=15):
        with open(instance.log, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def wait_http(self, port, path, tls=False, timeout=30):
        deadline = time.time() + timeout
        while True:
            kind, value = outcome(lambda: Client(port, tls=tls, timeout=5).request("GET", path, auth=False))
            if kind == "ok" and value[0] == 200:
                return
            if time.time() > deadline:
                raise SetupError(f"GET {path} on port {port} did not answer 200 within {timeout} s: {kind} {value}")
            time.sleep(0.05)

    def warm(self, instance):
        """One call, so that the instance has checked the API client's password (bcrypt, cached afterwards):
        otherwise the first burst of concurrent calls all run bcrypt at once and measure that instead."""
        client = self.direct(instance)
        result = outcome(lambda: client.call("epquiosc.getEdicions", "quiosc", ""))
        client.close()
        if result[0] != "ok":
            raise SetupError(f"instance {instance.index} answered its first call with {describe(result)}; see {instance.log}")

    def kill(self, instance):
        instance.process.send_signal(signal.SIGKILL)
        instance.process.wait()

    def restart(self, instance):
        self.launch(instance, instance.port)
        self.wait_listening(instance)

    def metrics(self, instance):
        status, _, data = Client(instance.port, timeout=10).request("GET", "/metrics", auth=False)
        if status != 200:
            raise SetupError(f"GET /metrics on instance {instance.index} answered {status}")
        return data.decode()

    def log_since(self, instance, offset):
        with open(instance.log, errors="replace") as f:
            f.seek(offset)
            return f.read()

    def log_size(self, instance):
        return os.path.getsize(instance.log)

    # Publishing

    def cli(self, *arguments, check=True):
        return self.run([self.binary, *arguments[:1], "--config", self.config, "--database", self.database,
                         "--editions", self.editions, *arguments[1:]], f"KioskServer {' '.join(arguments[:1])}",
                        check=check, cwd=self.workdir)

    def publish_cli(self, edition, date, folder):
        """(revision, sha256) of a publish with the CLI."""
        result = self.cli("publish", "--quiet", "--edition", str(edition), "--date", date, folder)
        match = re.search(r"revision (\d+).*sha256 ([0-9a-f]{64})", result.stdout)
        if not match:
            raise SetupError(f"KioskServer publish printed no revision and sha256: {result.stdout!r}")
        return int(match.group(1)), match.group(2)

    def publish_http(self, port, edition, date, archive, tls=False, timeout=60):
        """(status, JSON answer or text) of PUT /publish/EDITION/DATE."""
        client = Client(port, tls=tls, timeout=timeout, auth=PUBLISHER)
        status, _, data = client.request("PUT", f"/publish/{edition}/{date}", archive, {"Content-Type": "application/zip"})
        client.close()
        try:
            return status, json.loads(data)
        except ValueError:
            return status, data[:500].decode(errors="replace")

    def withdraw_http(self, port, edition, date):
        client = Client(port, timeout=30, auth=PUBLISHER)
        status, _, _ = client.request("DELETE", f"/publish/{edition}/{date}")
        client.close()
        return status

    def front(self, timeout=30.0):
        """A client of nginx."""
        return Client(self.nginx_port, tls=self.tls, timeout=timeout)

    def direct(self, instance, timeout=30.0):
        return Client(instance.port, timeout=timeout)

    def database_rows(self, sql):
        db = crash_check.Database(self.database)
        try:
            return db.rows(sql)
        finally:
            db.close()

    def stop(self):
        if self.nginx_started:
            subprocess.run([NGINX, "-p", self.nginx_dir, "-c", os.path.join(self.nginx_dir, "nginx.conf"), "-s", "stop"],
                           capture_output=True, timeout=30)
            self.nginx_started = False
        for instance in self.instances:
            if instance.process and instance.process.poll() is None:
                instance.process.send_signal(signal.SIGTERM)
        for instance in self.instances:
            if instance.process:
                try:
                    instance.process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    instance.process.kill()
                    instance.process.wait()


# MARK: - Scenarios

class Scenario:
    def __init__(self, cluster, name):
        self.cluster, self.name = cluster, name
        self.report = {}
        self.violations = []

    def expect(self, condition, message):
        if not condition:
            self.violations.append(f"{self.name}: {message}")
        return condition

    def concurrently(self, count, work):
        """Runs work(k) for k in 0..<count on threads released together; returns their results in order."""
        results = [None] * count
        barrier = threading.Barrier(count)

        def run(k):
            try:
                barrier.wait(timeout=60)
            except threading.BrokenBarrierError:
                pass
            results[k] = work(k)
        threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results


def scenario_startup(cluster, s):
    """What the simultaneous start left (see Cluster.start): every sample issue visible and complete, no
    leftover of the publishes the instances raced through, every instance answering the same listing."""
    rows = cluster.database_rows("SELECT edition_id, date, revision FROM issues ORDER BY edition_id, date")
    published = [cluster.log_since(i, 0).count("published sample issue") for i in cluster.instances]
    cleanups = [line for i in cluster.instances for line in cluster.log_since(i, 0).splitlines() if "editions clean-up" in line]
    s.report.update({"sample_issues": {f"{e}/{d}": int(r) for e, d, r in rows if str(d) < BASE_DATE},
                     "samples_published_per_instance": published, "cleanup_log": cleanups})
    listings = []
    for instance in cluster.instances:
        client = cluster.direct(instance)
        result = outcome(lambda: sorted((e["id"], e["data"]) for e in client.call("epquiosc.getEdicions", "quiosc", "")))
        client.close()
        listings.append(result[1] if result[0] == "ok" else describe(result))
    s.report["listings"] = listings
    s.expect(all(listing == listings[0] for listing in listings), f"the instances list different editions: {listings}")
    report = crash_check.check(cluster.database, cluster.editions, "/nonexistent", 0, clean=True)
    s.report["check"] = report
    s.expect(report["problems"] == [], f"after the instances started together: {report['problems']}")
    expected = sum(1 for _ in __import__("glob").glob(os.path.join(ROOT, "Samples", "*", "*", "issue.json")))
    s.expect(len(s.report["sample_issues"]) == expected,
             f"{len(s.report['sample_issues'])} sample issues are published, Samples/ has {expected}")


def scenario_demo(cluster, s):
    instances = cluster.instances
    device = f"demo-{random.getrandbits(48):012x}"
    before = [cluster.metrics(i) for i in instances]
    clients = [cluster.front() for _ in range(200)]

    def one(k):
        return outcome(lambda: clients[k].call("epusuaris.consumirDemo", "quiosc", device, "", {"model": "cluster"}, "iOS", 0))
    started = time.time()
    results = s.concurrently(200, one)
    elapsed = time.time() - started
    for client in clients:
        client.close()
    after = [cluster.metrics(i) for i in instances]
    answers = [value for kind, value in results if kind == "ok"]
    granted = sum(1 for answer in answers if answer.get("servir_demo") == "1")
    errors = collections.Counter(describe(r) for r in results if r[0] != "ok")
    calls = [metric(a, "kiosk_xmlrpc_requests_total", method="epusuaris.consumirDemo")
             - metric(b, "kiosk_xmlrpc_requests_total", method="epusuaris.consumirDemo") for a, b in zip(after, before)]
    grants_metric = sum(metric(a, "kiosk_demo_grants_total", outcome="granted") - metric(b, "kiosk_demo_grants_total", outcome="granted")
                        for a, b in zip(after, before))
    consumed = cluster.database_rows(
        f"SELECT consumed FROM demo_counters WHERE app_key = 'quiosc' AND device_key = '{device}'")
    grant_rows = cluster.database_rows(
        f"SELECT COUNT(*) FROM demo_grants WHERE app_key = 'quiosc' AND device_key = '{device}'")
    consumed = int(consumed[0][0]) if consumed else 0
    grant_rows = int(grant_rows[0][0])
    s.report.update({"calls": 200, "answered": len(answers), "granted": granted, "errors": dict(errors),
                     "seconds": round(elapsed, 2), "calls_per_instance": [int(c) for c in calls],
                     "granted_per_metrics": int(grants_metric), "database_consumed": consumed,
                     "database_grants": grant_rows,
                     "demos_answered_max": max((int(a.get("demos", 0)) for a in answers), default=0)})
    s.expect(not errors, f"{sum(errors.values())} of 200 consumirDemo calls failed ({dict(errors)}); every call must be "
                         f"answered: see {cluster.workdir}/instance-*.log and nginx/error.log")
    s.expect(granted == QUOTA, f"{granted} of 200 concurrent consumirDemo calls for one device were granted, expected exactly "
                               f"{QUOTA} (the quota): the check and the increment must be one transaction across instances")
    s.expect(consumed == QUOTA and grant_rows == QUOTA,
             f"the database has demo_counters.consumed {consumed} and {grant_rows} demo_grants rows for the device, "
             f"expected {QUOTA} and {QUOTA}")
    s.expect(int(grants_metric) == QUOTA, f"the instances' kiosk_demo_grants_total{{outcome=granted}} add up to {grants_metric}, "
                                          f"expected {QUOTA}")
    s.expect(all(c > 0 for c in calls), f"nginx did not spread the calls over every instance: {calls}")


def scenario_bundle(cluster, s):
    date = "2025-08-01"
    folder = write_issue(os.path.join(cluster.workdir, "in-bundle"), pages=60, seed=5, pdf_binary=100_000)
    revision, published_sha = cluster.publish_cli(8, date, folder)
    path = os.path.join(cluster.editions, "8", date, f"r{revision}", f"8-{date}.zip")
    size = os.path.getsize(path)
    os.remove(path)   # missing: the next getEdicio of any instance builds it again ("first demand")
    instances = cluster.instances
    before = [cluster.metrics(i) for i in instances]
    offsets = [cluster.log_size(i) for i in instances]
    clients = [cluster.front(timeout=120) for _ in range(20)]
    started = time.time()
    results = s.concurrently(20, lambda k: outcome(lambda: clients[k].call("epquiosc.getEdicio", "quiosc", "", 8, date, "0", "ios")))
    elapsed = time.time() - started
    for client in clients:
        client.close()
    after = [cluster.metrics(i) for i in instances]
    builds = [metric(a, "kiosk_bundle_builds_total") - metric(b, "kiosk_bundle_builds_total") for a, b in zip(after, before)]
    calls = [metric(a, "kiosk_xmlrpc_requests_total", method="epquiosc.getEdicio")
             - metric(b, "kiosk_xmlrpc_requests_total", method="epquiosc.getEdicio") for a, b in zip(after, before)]
    building = [cluster.log_since(i, o).count("bundle missing: building it") for i, o in zip(instances, offsets)]
    answers = [value for kind, value in results if kind == "ok"]
    errors = collections.Counter(describe(r) for r in results if r[0] != "ok")
    hashes = collections.Counter(answer["zip_sha256"] for answer in answers)
    report = {"bundle_bytes": size, "requests": 20, "answered": len(answers), "errors": dict(errors),
              "seconds": round(elapsed, 2), "builds_per_instance": [int(b) for b in builds],
              "getEdicio_per_instance": [int(c) for c in calls], "found_missing_per_instance": building,
              "distinct_sha256": len(hashes), "sha256_is_publish_time_one": list(hashes) == [published_sha]}
    s.report.update(report)
    s.expect(not errors, f"{sum(errors.values())} of 20 getEdicio calls failed ({dict(errors)}); see the instance logs")
    s.expect(sum(builds) == 1, f"the bundle was built {int(sum(builds))} times in all ({[int(b) for b in builds]} per instance), "
                               f"expected once: builders on different instances must share the lock "
                               f"(.bundle.lock in the revision folder)")
    s.expect(len(hashes) == 1, f"the answers carry {len(hashes)} different zip_sha256 values: {dict(hashes)}")
    s.expect(list(hashes) == [published_sha] or len(hashes) != 1,
             f"the rebuilt bundle's sha256 {next(iter(hashes), '-')} differs from the one recorded at publish time "
             f"{published_sha}: the same issue must give the same bytes (docs/publishing.md, Bundles)")
    s.expect(sum(1 for c in calls if c > 0) >= min(3, len(instances)),
             f"the 20 calls reached only {sum(1 for c in calls if c > 0)} instances ({[int(c) for c in calls]})")
    folder_on_disk = os.path.dirname(path)
    leftovers = [name for name in os.listdir(folder_on_disk) if ".tmp-" in name]
    s.expect(os.path.exists(path) and not leftovers, f"after the build: bundle present {os.path.exists(path)}, temporary files {leftovers}")
    recorded = cluster.database_rows(f"SELECT bundle_size, bundle_sha256 FROM issues WHERE edition_id = 8 AND date = '{date}'")
    if answers and os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read()
        s.expect(recorded and int(recorded[0][0]) == len(data) and recorded[0][1] == hashlib.sha256(data).hexdigest(),
                 f"the database records {recorded} for the bundle, the file has {len(data)} bytes")
        # The link is served by nginx from the shared editions directory.
        link = answers[0]["zip"]
        status, _, blob = cluster.front().request("GET", link.split(str(cluster.nginx_port), 1)[1], auth=False)
        s.report["link_status"] = status
        s.expect(status == 200 and hashlib.sha256(blob).hexdigest() == answers[0]["zip_sha256"],
                 f"the signed link through nginx answered {status} with {len(blob)} bytes, not the bundle getEdicio described")
        if status == 200:
            with zipfile.ZipFile(io.BytesIO(blob)) as z:
                s.expect(z.testzip() is None, "the bundle nginx served fails zipfile.testzip")


def listing(client, edition):
    """(data of `edition` in getEdicions or None, first data of getDarrersEdicio or None)."""
    editions = client.call("epquiosc.getEdicions", "quiosc", "")
    listed = next((e["data"] for e in editions if e["id"] == str(edition)), None)
    recent = client.call("epquiosc.getDarrersEdicio", "quiosc", "", edition, "", 3, "")
    return listed, (recent[0]["data"] if recent else None)


def scenario_publish(cluster, s):
    instances = cluster.instances
    a, b = instances[0], instances[1 % len(instances)]
    folder = write_issue(os.path.join(cluster.workdir, "in-publish"), pages=4, seed=7)
    archive = zip_folder(folder)
    checks = []

    def check_everywhere(what, targets, edition, date, visible, sha=None):
        for instance in targets:
            client = cluster.direct(instance)
            result = outcome(lambda: listing(client, edition))
            if result[0] != "ok":
                s.expect(False, f"after {what}, instance {instance.index} failed to list: {describe(result)}")
                continue
            listed, recent = result[1]
            fetched = outcome(lambda: client.call("epquiosc.getEdicio", "quiosc", "", edition, date, "0", "ios"))
            client.close()
            checks.append({"after": what, "instance": instance.index, "getEdicions": listed, "getDarrersEdicio": recent,
                           "getEdicio": describe(fetched) if fetched[0] != "ok" else "ok"})
            if visible:
                s.expect(listed == date and recent == date,
                         f"after {what}, instance {instance.index} lists edition {edition} at {listed} (getEdicions) and "
                         f"{recent} (getDarrersEdicio), expected {date} at once: a stale listing (an instance cache "
                         f"not invalidated by another instance or the CLI?)")
                # Edition 8 is free (the issue itself); edition 2 is for subscribers: fault 2 (no identity)
                # proves the issue was found, fault 4 would say it is not published.
                found = fetched[0] == "ok" if edition == 8 else fetched == ("fault", 2)
                s.expect(found,
                         f"after {what}, getEdicio of {edition}/{date} on instance {instance.index} answered "
                         f"{describe(fetched)}, expected {'the issue' if edition == 8 else 'fault 2 (found, not entitled)'}")
                if sha and fetched[0] == "ok":
                    s.expect(fetched[1]["zip_sha256"] == sha,
                             f"after {what}, instance {instance.index} describes a bundle {fetched[1]['zip_sha256']}, "
                             f"the publish answered {sha}")
            else:
                s.expect(listed != date and recent != date and fetched == ("fault", 4),
                         f"after {what}, instance {instance.index} still shows {edition}/{date} (getEdicions {listed}, "
                         f"getDarrersEdicio {recent}, getEdicio {describe(fetched)}; expected fault 4)")

    others = [i for i in instances if i is not a]
    status, answer = cluster.publish_http(a.port, 8, "2025-09-02", archive)
    s.report["http_publish"] = {"instance": a.index, "status": status,
                                "revision": answer.get("revision") if isinstance(answer, dict) else answer}
    if s.expect(status == 201, f"PUT /publish/8/2025-09-02 on instance {a.index} answered {status}: {answer}"):
        check_everywhere("an HTTP publish on instance 0", others, 8, "2025-09-02", True, answer["bundle"]["sha256"])
    revision, sha = cluster.publish_cli(2, "2025-09-03", folder)   # edition 2's first issue: a new listing row
    s.report["cli_publish"] = {"revision": revision}
    check_everywhere("a CLI publish", instances, 2, "2025-09-03", True)
    status = cluster.withdraw_http(b.port, 8, "2025-09-02")
    s.expect(status == 200, f"DELETE /publish/8/2025-09-02 on instance {b.index} answered {status}")
    check_everywhere(f"an HTTP withdraw on instance {b.index}", [i for i in instances if i is not b], 8, "2025-09-02", False)
    cluster.cli("withdraw", "--edition", "2", "--date", "2025-09-03")
    check_everywhere("a CLI withdraw", instances, 2, "2025-09-03", False)

    # One publish of an issue at a time: every instance and the CLI publish the same issue at once.
    date = "2025-09-05"
    parties = len(instances) + 1

    def publish(k):
        if k < len(instances):
            return outcome(lambda: cluster.publish_http(instances[k].port, 8, date, archive))
        return outcome(lambda: cluster.publish_cli(8, date, folder))
    results = s.concurrently(parties, publish)
    revisions = []
    for k, (kind, value) in enumerate(results):
        who = f"instance {k}" if k < len(instances) else "the CLI"
        if kind != "ok":
            s.expect(False, f"concurrent publish through {who} failed: {describe((kind, value))}")
        elif k < len(instances):
            if s.expect(value[0] == 201, f"concurrent publish through {who} answered {value[0]}: {value[1]}"):
                revisions.append((value[1]["revision"], value[1]["bundle"]["sha256"]))
        else:
            revisions.append(value)
    on_disk = sorted(os.listdir(os.path.join(cluster.editions, "8", date)))
    s.report["concurrent_publish"] = {"parties": parties, "revisions": sorted(r for r, _ in revisions), "on_disk": on_disk}
    s.expect(len({r for r, _ in revisions}) == len(revisions),
             f"concurrent publishes of 8/{date} got revisions {sorted(r for r, _ in revisions)}: each must get its own "
             f"(the issue lock, .locks/8-{date}.lock, must serialize them across processes)")
    if revisions:
        last, last_sha = max(revisions)
        s.expect(on_disk == [f"r{last}"], f"after concurrent publishes of 8/{date}, the disk holds {on_disk}, expected only r{last}")
        stored = cluster.database_rows(f"SELECT revision FROM issues WHERE edition_id = 8 AND date = '{date}'")
        s.expect(stored and int(stored[0][0]) == last, f"the database has revision {stored} for 8/{date}, expected {last}")
        check_everywhere("concurrent publishes", instances, 8, date, True, last_sha)
    s.report["checks"] = checks


class Load:
    """Reader traffic through nginx in the style of crash_load.py: every acknowledged grant, download and
    publish is appended to `log` as it arrives; every call's outcome is kept with its time."""

    def __init__(self, cluster, log, prefix, workers, publish_archive=None, publish_dates=(), timeout=60.0):
        self.cluster, self.log, self.prefix, self.workers, self.timeout = cluster, log, prefix, workers, timeout
        self.fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.calls = []          # (start, end, what, kind, value)
        self.archive, self.dates = publish_archive, list(publish_dates)
        self.published = []
        self.links = 0
        self.threads = [threading.Thread(target=self.reader, args=(w,)) for w in range(workers)]
        if publish_archive:
            self.threads.append(threading.Thread(target=self.publisher))

    def note(self, line):
        os.write(self.fd, (line + "\n").encode())

    def record(self, start, what, result):
        with self.lock:
            self.calls.append((start, time.time(), what, result[0], result[1] if result[0] != "ok" else None))

    def timed(self, what, function):
        start = time.time()
        result = outcome(function)
        self.record(start, what, result)
        return result

    def reader(self, worker):
        client = self.cluster.front(timeout=self.timeout)
        links = self.cluster.front(timeout=self.timeout)
        i = 0
        while not self.stop.is_set():
            device = f"{self.prefix}-{worker}-{i % 5}"
            i += 1
            kind, answer = self.timed("consumirDemo", lambda: client.call(
                "epusuaris.consumirDemo", "quiosc", device, "", {"model": "cluster"}, "ios", 0))
            if kind != "ok":
                time.sleep(0.05)   # failing fast: do not spin
                continue
            if answer["servir_demo"] == "1":
                self.note(f"grant {device}")
            kind, issue = self.timed("getEdicio", lambda: client.call(
                "epquiosc.getEdicio", "quiosc", answer["iden_key"], 8, BASE_DATE, "0", "ios"))
            if kind == "ok":
                self.note(f"download {device}")
                if i % 10 == 0:
                    path = issue["zip"].split(str(self.cluster.nginx_port), 1)[1]
                    result = self.timed("link", lambda: links.request("GET", path, auth=False))
                    if result[0] == "ok" and result[1][0] == 200:
                        self.links += 1
                    elif result[0] == "ok":
                        self.record(time.time(), "link", ("http", result[1][0]))
            kind, value = self.timed("getEdicio", lambda: client.call(
                "epquiosc.getEdicio", "quiosc", answer["iden_key"], 1, BASE_DATE, "0", "ios"))
            if kind == "ok":
                self.note(f"used {device}")
                self.note(f"download {device}")
        client.close()
        links.close()

    def publisher(self):
        for date in self.dates:
            if self.stop.is_set():
                return
            start = time.time()
            result = outcome(lambda: self.cluster.publish_http(self.cluster.nginx_port, 8, date, self.archive, tls=self.cluster.tls))
            if result[0] == "ok" and result[1][0] == 201:
                self.note(f"published 8/{date}")
                self.published.append(date)
                self.record(start, "publish", ("ok", None))
            elif result[0] == "ok":
                self.record(start, "publish", ("http", result[1][0]))
            else:
                self.record(start, "publish", result)

    def start(self):
        for thread in self.threads:
            thread.start()

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join()
        os.close(self.fd)

    def failures(self, since=0.0, until=float("inf")):
        return [c for c in self.calls if c[3] != "ok" and since <= c[1] <= until]

    def ended_between(self, since, until):
        return [c for c in self.calls if since <= c[1] <= until]


def check_acknowledged(cluster, s, log, clean=False):
    report = crash_check.check(cluster.database, cluster.editions, log, 0, clean=clean)
    s.expect(report["problems"] == [], f"crash_check{' --clean' if clean else ''} found: {report['problems']}")
    return report


def scenario_kill(cluster, s):
    instances = cluster.instances
    victim = instances[len(instances) // 2]
    log = os.path.join(cluster.workdir, "kill-answers.log")
    folder = write_issue(os.path.join(cluster.workdir, "in-kill"), pages=40, seed=11, pdf_binary=20_000)
    archive = zip_folder(folder)
    workers = 9
    load = Load(cluster, log, f"kill{random.getrandbits(24):06x}", workers, archive,
                [f"2025-10-{d:02d}" for d in range(1, 29)])
    access_offset = os.path.getsize(os.path.join(cluster.nginx_dir, "access.log"))
    load.start()
    time.sleep(3)
    killed_at = time.time()
    cluster.kill(victim)
    time.sleep(5)
    load.finish()
    ended = time.time()
    before = load.failures(until=killed_at)
    after = load.failures(since=killed_at)
    late = load.failures(since=killed_at + 2)
    with open(os.path.join(cluster.nginx_dir, "access.log")) as f:
        f.seek(access_offset)
        lines = f.read().splitlines()
    victim_address = f"127.0.0.1:{victim.port}"

    def upstreams(line):   # the instances nginx tried for the request, in order
        match = re.search(r"upstream=(.*?) upstream_status=", line)
        return [a.strip() for a in match.group(1).split(",")] if match else []
    errors_5xx = [line for line in lines if re.search(r" (5\d\d) upstream=", line)]
    foreign_5xx = [line for line in errors_5xx if victim_address not in upstreams(line)]
    retried = [line for line in lines if len(upstreams(line)) > 1]
    ok_after = len([c for c in load.ended_between(killed_at, ended) if c[3] == "ok"])
    s.report.update({
        "workers": workers, "killed_instance": victim.index, "calls": len(load.calls), "calls_ok_after_kill": ok_after,
        "failures_before_kill": len(before), "failures_after_kill": len(after),
        "failure_kinds_after_kill": dict(collections.Counter(f"{c[2]}: {describe((c[3], c[4]))}" for c in after)),
        "failures_later_than_2s": len(late), "nginx_5xx": len(errors_5xx), "nginx_retried_elsewhere": len(retried),
        "links_served_by_nginx": load.links, "published": len(load.published)})
    s.expect(not before, f"{len(before)} calls failed before the kill: {[(c[2], describe((c[3], c[4]))) for c in before[:5]]}")
    # Each worker has one request in flight at a time: at most `workers` (+ the publisher) can have been
    # on the killed instance, and nginx must have stopped sending it anything within a moment.
    s.expect(len(after) <= workers + 1, f"{len(after)} calls failed after the kill, more than the {workers + 1} that can have "
                                        f"been in flight on instance {victim.index}; see nginx/access.log and error.log")
    s.expect(not late, f"{len(late)} calls still failed more than 2 s after the kill (nginx kept sending them to the dead "
                       f"instance? passive health checks: max_fails/fail_timeout, proxy_next_upstream): "
                       f"{[(c[2], describe((c[3], c[4]))) for c in late[:5]]}")
    s.expect(not foreign_5xx, f"nginx answered 5xx from instances that were not killed: {foreign_5xx[:5]}")
    s.expect(ok_after > 20, f"only {ok_after} calls succeeded in the 5 s after the kill: nginx did not keep answering")
    s.expect(load.published, "no publish was acknowledged during the load")
    s.report["check_after_kill"] = check_acknowledged(cluster, s, log)

    # Restart while another instance is publishing: its clean-up must leave that work alone.
    survivor = instances[0] if instances[0] is not victim else instances[-1]
    date = "2025-10-30"
    big = write_issue(os.path.join(cluster.workdir, "in-restart"), pages=120, seed=13, pdf_binary=40_000)
    big_archive = zip_folder(big)
    staging = os.path.join(cluster.editions, ".staging")
    busy_before = set(os.listdir(staging))
    publish_result = {}
    publisher = threading.Thread(target=lambda: publish_result.update(
        r=outcome(lambda: cluster.publish_http(survivor.port, 8, date, big_archive, timeout=120))))
    publisher.start()
    deadline = time.time() + 10
    while time.time() < deadline and not (set(os.listdir(staging)) - busy_before):
        time.sleep(0.002)
    staging_busy = sorted(set(os.listdir(staging)) - busy_before)
    offset = cluster.log_size(victim)
    restart_started = time.time()
    cluster.restart(victim)
    restart_seconds = time.time() - restart_started
    publisher.join()
    cleanup = [line for line in cluster.log_since(victim, offset).splitlines() if "clean-up" in line]
    kind, value = publish_result["r"]
    s.report["restart"] = {"seconds": round(restart_seconds, 2), "publish_in_progress_elsewhere": staging_busy,
                           "publish_status": value[0] if kind == "ok" else describe((kind, value)),
                           "cleanup_log": cleanup}
    s.expect(staging_busy, "no publish was in progress on another instance while the killed one restarted (timing); "
                           "the clean-up check is weaker this run")
    if s.expect(kind == "ok" and value[0] == 201,
                f"a publish on instance {survivor.index} during the restart of instance {victim.index} failed: "
                f"{describe((kind, value)) if kind != 'ok' else value}: did the restarted instance's start-up clean-up "
                f"remove its staging folder?"):
        with open(log, "a") as f:
            f.write(f"published 8/{date}\n")
    client = cluster.direct(victim)
    answered = outcome(lambda: client.call("epquiosc.getEdicions", "quiosc", ""))
    ready = outcome(lambda: client.request("GET", "/readyz", auth=False)[0])
    client.close()
    s.expect(answered[0] == "ok" and ready == ("ok", 200),
             f"the restarted instance answered getEdicions {describe(answered)}, /readyz {describe(ready)}")
    # Back in nginx's rotation once fail_timeout has passed.
    time.sleep(FAIL_TIMEOUT + 0.5)
    front = cluster.front()
    for _ in range(12):
        outcome(lambda: front.call("epquiosc.getEdicions", "quiosc", ""))
    front.close()
    served = metric(cluster.metrics(victim), "kiosk_xmlrpc_requests_total", method="epquiosc.getEdicions")
    s.report["restart"]["calls_via_nginx_after_restart"] = int(served) - (1 if answered[0] == "ok" else 0)
    s.expect(served > 1, f"nginx sent the restarted instance no calls {FAIL_TIMEOUT} s after it came back")
    s.report["check_after_restart"] = check_acknowledged(cluster, s, log, clean=True)


def scenario_pgrestart(cluster, s, control, down_seconds, recovery_seconds):
    stop_command, start_command = control
    log = os.path.join(cluster.workdir, "pgrestart-answers.log")
    workers = 6
    load = Load(cluster, log, f"pg{random.getrandbits(24):06x}", workers, timeout=PG_CLIENT_TIMEOUT)
    offsets = [cluster.log_size(i) for i in cluster.instances]
    load.start()
    time.sleep(2)
    stopping = time.time()
    stopped = subprocess.run(stop_command, shell=True, capture_output=True, text=True, timeout=60)
    down = time.time()
    # While it is down: /readyz says so, within its own bound; and every half second a call straight to
    # each instance in turn (a read and a write alternately), each on its own thread so a hang is seen.
    readiness = {}
    ready_probe = threading.Thread(target=lambda: readiness.update(r=outcome(
        lambda: Client(cluster.instances[0].port, timeout=10).request("GET", "/readyz", auth=False)[0])))
    ready_probe.start()
    probes = [ready_probe]
    k = 0
    while time.time() < down + down_seconds - 0.3:
        instance = cluster.instances[k % len(cluster.instances)]
        client = cluster.direct(instance, timeout=PG_CLIENT_TIMEOUT)
        call = (lambda c=client: c.call("epquiosc.getEdicions", "quiosc", "")) if k % 2 == 0 else \
            (lambda c=client, n=k: c.call("epusuaris.consumirDemo", "quiosc", f"pgprobe-{n}", "", {}, "ios", 0))
        probe = threading.Thread(target=load.timed, args=("probe", call))
        probe.start()
        probes.append(probe)
        k += 1
        time.sleep(0.5)
    time.sleep(max(0.0, down_seconds - (time.time() - down)))
    starting = time.time()
    started = subprocess.run(start_command, shell=True, capture_output=True, text=True, timeout=120)
    up = time.time()
    if stopped.returncode != 0 or started.returncode != 0:
        load.finish()
        raise SetupError(f"stopping or starting PostgreSQL failed: stop {stopped.returncode} {stopped.stderr.strip()}; "
                         f"start {started.returncode} {started.stderr.strip()}")
    recovered = {}
    deadline = up + recovery_seconds + 20
    pending = list(cluster.instances)
    while pending and time.time() < deadline:
        for instance in list(pending):
            client = cluster.direct(instance, timeout=10)
            if outcome(lambda: client.call("epquiosc.getEdicions", "quiosc", ""))[0] == "ok":
                recovered[instance.index] = round(time.time() - up, 2)
                pending.remove(instance)
            client.close()
        time.sleep(0.1)
    settled = time.time()
    # A sample of calls begun after recovery: workers still in a call begun during the outage (which may
    # wait for a pooled connection) start new ones only when it ends, so wait for the sample, not a time.
    sample_deadline = settled + 20
    while time.time() < sample_deadline and sum(1 for c in list(load.calls) if c[0] >= settled + 0.5) < 20:
        time.sleep(0.2)
    load.finish()
    for probe in probes:
        probe.join()
    probes.remove(ready_probe)
    ready = readiness["r"]
    # Calls the outage touched: in flight when it stopped, or begun while it was down; however long they took.
    during = [c for c in load.calls if c[1] >= stopping and c[0] < starting]
    during_kinds = collections.Counter(describe((c[3], c[4])) if c[3] != "ok" else "ok" for c in during)
    slowest = max((c[1] - c[0] for c in during), default=0)
    wrong = [c for c in during if c[3] == "fault" and c[4] != -32603]
    unanswered = [c for c in during if c[3] in ("http", "network", "timeout")]
    after = [c for c in load.calls if c[0] >= settled + 0.5]
    after_failed = [c for c in after if c[3] != "ok"]
    log_lines = [[line for line in cluster.log_since(i, o).splitlines()
                  if re.search(r"postgres|database|connection", line, re.I) and re.search(r"error|warning|critical", line, re.I)]
                 for i, o in zip(cluster.instances, offsets)]
    s.report.update({
        "stop_seconds": round(down - stopping, 2), "down_seconds": round(starting - down, 2),
        "start_seconds": round(up - starting, 2), "readyz_while_down": describe(ready) if ready[0] != "ok" else ready[1],
        "calls_during_outage": len(during), "probes": len(probes), "outcomes_during_outage": dict(during_kinds),
        "slowest_call_during_outage_seconds": round(slowest, 2),
        "slow_calls": [{"call": c[2], "began_after_stop_seconds": round(c[0] - stopping, 2), "seconds": round(c[1] - c[0], 2),
                        "outcome": describe((c[3], c[4])) if c[3] != "ok" else "ok"} for c in during if c[1] - c[0] > 10][:10],
        "recovered_after_seconds": recovered, "calls_after_recovery": len(after), "failed_after_recovery": len(after_failed),
        "log_lines_per_instance": [len(lines) for lines in log_lines],
        "log_example": next((lines[0][:400] for lines in log_lines if lines), None)})
    s.expect(during, "no call was made while PostgreSQL was down")
    s.expect(not wrong, f"while PostgreSQL was down {len(wrong)} calls answered another fault than -32603 "
                        f"({collections.Counter(describe((c[3], c[4])) for c in wrong)}): a database failure must never "
                        f"tell a reader that an issue is missing or not entitled")
    s.expect(slowest <= 10, f"a call made while PostgreSQL was down took {slowest:.1f} s (the client gives up at "
                            f"{PG_CLIENT_TIMEOUT} s): calls must fail fast with -32603, not hang (connection attempts and "
                            f"waits for a pooled connection need a bound)")
    s.expect(not unanswered, f"{len(unanswered)} calls made while PostgreSQL was down got no XML-RPC answer "
                             f"({collections.Counter(describe((c[3], c[4])) for c in unanswered)}; HTTP 504 is nginx "
                             f"giving up on a hung instance, a timeout is the client giving up): expected fault -32603")
    s.expect(not pending, f"instances {[i.index for i in pending]} did not answer getEdicions within "
                          f"{recovery_seconds + 20} s of PostgreSQL being back: they must reconnect by themselves")
    s.expect(all(seconds <= recovery_seconds for seconds in recovered.values()),
             f"recovery took {recovered} s after PostgreSQL was back, more than {recovery_seconds} s")
    s.expect(after and not after_failed, f"{len(after_failed)} of {len(after)} calls failed after recovery: "
                                         f"{collections.Counter(describe((c[3], c[4])) for c in after_failed)}")
    s.expect(ready[0] == "ok" and ready[1] == 503, f"/readyz answered {describe(ready) if ready[0] != 'ok' else ready[1]} "
                                                   f"while PostgreSQL was down, expected 503")
    s.expect(all(log_lines[i.index] for i in cluster.instances if recovered.get(i.index) is not None),
             f"no instance log line names the database failure ({[len(l) for l in log_lines]} lines per instance): "
             f"an operator needs one (look in {cluster.workdir}/instance-*.log)")
    s.report["check"] = check_acknowledged(cluster, s, log)


# MARK: - Main

def run_scenario(s, name, body):
    """Runs one scenario's `body`: a crash of the scenario itself (not a set-up error) becomes a violation, with
    where it happened; the scenario's length goes into its report."""
    t0 = time.time()
    try:
        body()
    except SetupError:
        raise
    except Exception as error:
        s.violations.append(f"{name}: the scenario stopped with {type(error).__name__}: {error}\n"
                            f"{traceback.format_exc(limit=4)}")
    s.report["seconds"] = round(time.time() - t0, 2)


def finish_report(report, started, status, stop_problems=()):
    """The drivers' common end: what stopping reported, the run's length, the JSON report on standard output and
    each violation on standard error; returns the exit status (1 when stopping went wrong and nothing else did)."""
    if stop_problems:
        report["stop"] = list(stop_problems)
        report["violations"] += [f"stop: {problem}" for problem in stop_problems]
        status = status or 1
    report["seconds"] = round(time.time() - started, 2)
    print(json.dumps(report, indent=1, default=str))
    for violation in report["violations"]:
        print(f"VIOLATION {violation}", file=sys.stderr)
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("workdir")
    parser.add_argument("database")
    parser.add_argument("scenarios", nargs="+", choices=["startup", "demo", "bundle", "publish", "kill", "pgrestart", "all"])
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--pg-ctl", default=os.environ.get("KIOSK_PG_CTL"))
    parser.add_argument("--pg-stop", default=os.environ.get("KIOSK_PG_STOP"))
    parser.add_argument("--pg-start", default=os.environ.get("KIOSK_PG_START"))
    parser.add_argument("--pg-down-seconds", type=float, default=4)
    parser.add_argument("--recovery-seconds", type=float, default=10)
    args = parser.parse_args()

    postgres = crash_check.is_postgres(args.database)
    control = None
    if args.pg_stop and args.pg_start:
        control = (args.pg_stop, args.pg_start)
    elif args.pg_ctl:
        control = (f"{args.pg_ctl} stop -m fast", f"{args.pg_ctl} start -w")
    scenarios = []
    for name in args.scenarios:
        if name == "all":
            scenarios += ["startup", "demo", "bundle", "publish", "kill"] + (["pgrestart"] if postgres and control else [])
        else:
            scenarios.append(name)
    if "pgrestart" in scenarios and not postgres:
        print("pgrestart needs a postgres:// DATABASE", file=sys.stderr)
        return 2
    if "pgrestart" in scenarios and not control:
        print("pgrestart needs a way to stop and start PostgreSQL: --pg-ctl 'pg_ctl -D DIR …' (or --pg-stop and "
              "--pg-start, or KIOSK_PG_CTL / KIOSK_PG_STOP and KIOSK_PG_START)", file=sys.stderr)
        return 2
    if postgres and not shutil.which("psql"):
        print("psql is needed for a postgres:// DATABASE (apt-get install postgresql-client)", file=sys.stderr)
        return 2

    cluster = Cluster(args.binary, args.workdir, args.database, args.instances, args.tls)
    report = {"binary": cluster.binary, "database": "postgresql" if postgres else "sqlite", "workdir": cluster.workdir,
              "scenarios": {}, "violations": []}
    started = time.time()
    status = 0

    def terminate(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    startup = Scenario(cluster, "startup") if "startup" in scenarios else None
    try:
        cluster.start(startup)
        report["instances"] = [i.port for i in cluster.instances]
        report["nginx"] = cluster.nginx_port
        report["setup_seconds"] = round(time.time() - started, 2)
        for name in dict.fromkeys(scenarios):
            s = startup if name == "startup" else Scenario(cluster, name)
            if name == "pgrestart":
                run_scenario(s, name, lambda: scenario_pgrestart(cluster, s, control, args.pg_down_seconds,
                                                                 args.recovery_seconds))
            else:
                run_scenario(s, name, lambda: globals()[f"scenario_{name}"](cluster, s))
            s.report["violations"] = s.violations
            report["scenarios"][name] = s.report
            report["violations"] += s.violations
        status = 1 if report["violations"] else 0
    except SetupError as error:
        if startup and "startup" not in report["scenarios"]:
            report["violations"] += startup.violations
        report["setup_error"] = str(error)
        report["violations"].append(f"set-up: {error}")
        status = 2
    except KeyboardInterrupt:
        report["violations"].append("interrupted")
        status = 2
    finally:
        cluster.stop()
    return finish_report(report, started, status)


if __name__ == "__main__":
    sys.exit(main())
