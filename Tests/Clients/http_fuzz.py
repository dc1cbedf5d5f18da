"""HTTP fuzzer against a running Kiosk: every route, boundary and random values, for a bounded time.

    http_fuzz.py --port PORT --pid PID --seconds N [--seed S] [--app quiosc]
                 [--api user:pass] [--publisher user:pass] [--console user:pass] [--reader user:pass]

Sends the XML-RPC methods (and unknown ones), the web kiosk's pages (signed in as a reader and not), the
operator console's pages and forms (signed in, with the form's token), publishing (uploads of small random
and damaged archives, withdraw, restore), the file links, SSO, health and metrics: each with path, query
and form values drawn from boundaries (years 0 and 10000, huge and negative numbers, empty, Unicode,
markup, traversal) and random bytes, parameters repeated or missing. Fails (exit 1, each case printed)
when any answer is a 5xx, a connection breaks without an answer, or the process PID is gone; prints a
JSON summary of requests per route family and statuses seen.
"""
import argparse
import base64
import http.client
import io
import json
import os
import random
import re
import socket
import sys
import tarfile
import time
import urllib.parse
import warnings
import xmlrpc.client
import zipfile

warnings.filterwarnings("ignore", message="Duplicate name")  # duplicate archive entries are on purpose

BOUNDARY = [
    "", "0", "1", "-1", "00", "+1", " 1", "1 ", "0x10", "1e309", "NaN", "inf", "-0",
    "2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "9" * 40,
    "0000-00-00", "0000-01-01", "0001-01-01", "1969-12-31", "1970-01-01", "2025-02-29", "2024-02-29",
    "2025-06-31", "9999-12-31", "10000-01-01", "99999-01-01", "-0001-01-01", "2025-6-1", "2025-06-01T00:00",
    "0000-00", "0000-01", "0001-01", "9999-12", "10000-01", "2025-13", "2025-00", "2025-1", "-2025-01",
    "é", "\u0301", "<\u0301", "\u0600<", "\u202e", "\u2028", "\ufeff", "\U0001d54f", "\u0000", "%", "%zz",
    "<script>alert(1)</script>", "\"'><img src=x onerror=1>", "&amp;", "../../etc/passwd", "..%2f..%2f",
    "//evil.example", "\\\\evil", "/\\evil", "a" * 5000, "x y", "quiosc", "presencia", "1,2", "[]",
]


def value(rng):
    if rng.random() < 0.7:
        return rng.choice(BOUNDARY)
    kind = rng.randrange(4)
    if kind == 0:
        return str(rng.randint(-2**70, 2**70))
    if kind == 1:
        return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000), rng.randrange(0x1F300, 0x1F600)]))
                       for _ in range(rng.randrange(0, 30)))
    if kind == 2:
        return "%04d-%02d-%02d" % (rng.randrange(0, 10001), rng.randrange(0, 14), rng.randrange(0, 33))
    return "%04d-%02d" % (rng.randrange(0, 10001), rng.randrange(0, 14))


def segment(rng):
    return urllib.parse.quote(value(rng), safe="")


def query(rng, names):
    pairs = []
    for name in names:
        if rng.random() < 0.8:
            pairs.append((name, value(rng)))
            if rng.random() < 0.15:
                pairs.append((name, value(rng)))  # repeated
    if rng.random() < 0.2:
        pairs.append((value(rng), value(rng)))
    return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)


def xmlrpc_value(rng, depth=0):
    kind = rng.randrange(8 if depth < 2 else 5)
    if kind == 0:
        return value(rng)
    if kind == 1:
        return rng.choice([0, -1, 2**31 - 1, -2**31, 7, 1])
    if kind == 2:
        return rng.choice([True, False])
    if kind == 3:
        return rng.choice([0.0, -1e308, 1e308, 3.5])
    if kind == 4:
        return xmlrpc.client.Binary(os.urandom(rng.randrange(0, 40)))
    if kind == 5:
        return [xmlrpc_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    if kind == 6:
        return {value(rng)[:20] or "k": xmlrpc_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))}
    return xmlrpc.client.DateTime(time.localtime(rng.randrange(0, 2**31)))


METHODS = ["epquiosc.getEdicions", "epquiosc.getDarrersEdicio", "epquiosc.getEdicio", "epusuaris.registrar",
           "epusuaris.consumirDemo", "epusuaris.hashQuiosc", "epquiosc.cercar", "system.listMethods",
           "epquiosc.nope", ""]


def archive(rng):
    """Small uploads: random bytes, a tar or a ZIP with random names and sizes, or either damaged."""
    kind = rng.randrange(5)
    if kind == 0:
        return os.urandom(rng.randrange(0, 2000))
    buffer = io.BytesIO()
    if kind in (1, 2):
        with tarfile.open(fileobj=buffer, mode="w:gz" if kind == 2 else "w") as tar:
            for _ in range(rng.randrange(0, 4)):
                data = os.urandom(rng.randrange(0, 300))
                info = tarfile.TarInfo(rng.choice(["manifest.json", "1.pdf", "1.jpg", "../x", value(rng)[:90] or "f"]))
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    else:
        with zipfile.ZipFile(buffer, "w") as archive_file:
            for _ in range(rng.randrange(0, 4)):
                name = rng.choice(["manifest.json", "1.pdf", "1.jpg", "/abs", value(rng)[:90]])
                # zipfile cuts a name at a NUL and drops leading slashes; it refuses a name left empty.
                if not zipfile.ZipInfo(name).filename:
                    name = "f"
                archive_file.writestr(name, os.urandom(rng.randrange(0, 300)))
    data = bytearray(buffer.getvalue())
    if kind in (3, 4) or rng.random() < 0.3:
        for _ in range(rng.randrange(1, 8)):  # damage: flip bytes, some in the headers
            if data:
                position = rng.randrange(len(data))
                data[position] = rng.randrange(256)
        if kind == 4 and len(data) > 22:
            data[-22 + rng.randrange(22)] = 0xFF
    return bytes(data)


class Fuzzer:
    def __init__(self, options):
        self.options = options
        self.rng = random.Random(options.seed)
        self.connection = None
        self.failures = []
        self.counts = {}
        self.statuses = {}
        self.console_cookie = ""
        self.console_csrf = ""
        self.reader_cookie = ""
        self.reader_csrf = ""

    def basic(self, credentials):
        return "Basic " + base64.b64encode(credentials.encode()).decode() if credentials else None

    def connect(self):
        self.connection = http.client.HTTPConnection("127.0.0.1", self.options.port, timeout=60)

    def alive(self):
        try:
            os.kill(self.options.pid, 0)
            return True
        except ProcessLookupError:
            return False

    def send(self, family, method, path, body=None, headers=None, expect_status=None):
        # Header values go as UTF-8 bytes (http.client would insist on Latin-1); CR and LF never (they
        # would make a second request, which is not what is being tested).
        headers = {name: value.replace("\r", " ").replace("\n", " ").encode("utf-8")
                   for name, value in (headers or {}).items() if value is not None}
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.counts[family] = self.counts.get(family, 0) + 1
        for attempt in (0, 1):
            if self.connection is None:
                self.connect()
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                data = response.read()
                if response.getheader("connection", "").lower() == "close":
                    self.connection.close(); self.connection = None
                break
            except (http.client.HTTPException, ConnectionError, socket.timeout, OSError) as error:
                self.connection.close(); self.connection = None
                if not self.alive():
                    self.fail(family, method, path, f"the server process died ({error!r})")
                    raise SystemExit(self.report(1))
                if attempt == 1:
                    self.fail(family, method, path, f"no answer: {error!r}")
                    return None, b"", {}
        status = response.status
        self.statuses[status] = self.statuses.get(status, 0) + 1
        if status >= 500:
            self.fail(family, method, path, f"{status}: {data[:200]!r}")
        return status, data, dict(response.getheaders())

    def fail(self, family, method, path, what):
        self.failures.append({"family": family, "request": f"{method} {path[:300]}", "answer": what})

    # Sessions

    def sign_in_console(self):
        if not self.options.console:
            return
        username, password = self.options.console.split(":", 1)
        status, page, headers = self.send("console", "GET", "/admin/sign-in")
        nonce = headers.get("Set-Cookie", "").split(";")[0]
        token = re.search(rb'name="csrf" value="([^"]+)"', page).group(1).decode()
        form = urllib.parse.urlencode({"csrf": token, "username": username, "password": password})
        status, _, headers = self.send("console", "POST", "/admin/sign-in", form,
                                       {"Cookie": nonce, "Content-Type": "application/x-www-form-urlencoded"})
        if status != 303:
            raise SystemExit(f"console sign-in answered {status}")
        self.console_cookie = headers.get("Set-Cookie", "").split(";")[0] + "; " + nonce
        status, page, _ = self.send("console", "GET", "/admin", headers={"Cookie": self.console_cookie})
        self.console_csrf = re.search(rb'name="csrf" value="([^"]+)"', page).group(1).decode()

    def sign_in_reader(self):
        if not self.options.reader:
            return
        username, password = self.options.reader.split(":", 1)
        proxy = xmlrpc.client.ServerProxy(f"http://{self.options.api}@127.0.0.1:{self.options.port}/RPC2")
        link = proxy.epusuaris.hashQuiosc(self.options.app, username, password, "compte")
        status, _, headers = self.send("web", "GET", f"/web/{self.options.app}/compte?hash={urllib.parse.quote(link['hash'])}")
        self.reader_cookie = headers.get("Set-Cookie", "").split(";")[0]
        if not self.reader_cookie:
            raise SystemExit(f"reader sign-in answered {status} without a cookie")
        status, page, _ = self.send("web", "GET", f"/web/{self.options.app}/compte", headers={"Cookie": self.reader_cookie})
        found = re.search(rb'name="csrf" value="([^"]+)"', page)
        self.reader_csrf = found.group(1).decode() if found else ""

    # Route families

    def rpc(self):
        method = self.rng.choice(METHODS)
        params = tuple(xmlrpc_value(self.rng) for _ in range(self.rng.randrange(0, 9)))
        if self.rng.random() < 0.5 and method.startswith("ep"):
            params = (self.options.app,) + params[1:]
        body = xmlrpc.client.dumps(params, method, encoding="utf-8", allow_none=False) if method else "<methodCall/>"
        if self.rng.random() < 0.1:
            raw = bytearray(body.encode())
            for _ in range(self.rng.randrange(1, 5)):
                raw[self.rng.randrange(len(raw))] = self.rng.randrange(256)
            body = bytes(raw)
        path = self.rng.choice(["/RPC2", "/xmlrpc/index.php", "/xmlrpc", "/xmlrpc/"])
        self.send("rpc", "POST", path, body, {"Content-Type": "text/xml", "Authorization": self.basic(self.options.api)})

    def web(self):
        app = self.options.app if self.rng.random() < 0.8 else segment(self.rng)
        paths = [f"/web/{app}", f"/web/{app}/", f"/web/{app}/compte", f"/web/{app}/cerca?" + query(self.rng, ["q", "mes"]),
                 f"/web/{app}/edicio/{self.rng.choice(['1', '2', '8', segment(self.rng)])}?" + query(self.rng, ["mes"]),
                 f"/web/{app}/edicio/{self.rng.choice(['1', '8', segment(self.rng)])}/{segment(self.rng)}",
                 f"/web/{app}?" + query(self.rng, ["hash"]), f"//web/{app}?hash={segment(self.rng)}",
                 f"/web/{app}/compte?" + query(self.rng, ["hash"])]
        headers = {"Cookie": self.reader_cookie} if self.reader_cookie and self.rng.random() < 0.6 else {}
        if self.rng.random() < 0.1:
            headers["Accept-Language"] = value(self.rng)
        if self.rng.random() < 0.15:
            # A forged or missing token (the right one would end the fuzzer's own session).
            form = urllib.parse.urlencode({"csrf": value(self.rng)})
            self.send("web", "POST", f"/web/{app}/{self.rng.choice(['sortir', 'sortir-arreu', 'compte'])}",
                      form, {**headers, "Content-Type": "application/x-www-form-urlencoded"})
            return
        self.send("web", "GET", self.rng.choice(paths), headers=headers)

    def console(self):
        headers = {"Cookie": self.console_cookie} if self.console_cookie else {}
        edition, date = self.rng.choice(["1", "8", segment(self.rng)]), segment(self.rng)
        gets = ["/admin?" + query(self.rng, ["from", "to", "edition", "app"]), "/admin/apps",
                "/admin/issues?" + query(self.rng, ["edition", "date", "q", "mes", "from", "to"]),
                f"/admin/issues/{edition}/{date}", "/admin/readers?" + query(self.rng, ["q", "app", "device", "edition"]),
                "/admin/accounts", "/admin/audit?" + query(self.rng, ["from", "to", "q"]), "/admin/console.js",
                "/admin/sign-in"]
        if self.rng.random() < 0.75:
            self.send("console", "GET", self.rng.choice(gets), headers=headers)
            return
        # Forms: every field drawn at random, the token right most of the time. Never the forms that sign
        # this session out or end its sessions (the fuzzer would lose its way in).
        fields = {name: value(self.rng) for name in self.rng.sample(
            ["action", "app", "edition", "date", "username", "password", "role", "demos", "editions", "from", "to",
             "name", "publications", "every", "free", "subscriber", "expires", "catalogue", "email", "scope"],
            self.rng.randrange(1, 8))}
        fields["csrf"] = self.console_csrf if self.rng.random() < 0.9 else value(self.rng)
        if fields.get("username") == self.options.console.split(":")[0]:
            fields["username"] = "x"
        target = self.rng.choice([f"/admin/apps/{self.rng.choice([self.options.app, segment(self.rng)])}", "/admin/readers",
                                  "/admin/accounts", "/admin/catalogue", f"/admin/issues/{edition}/{date}/withdraw",
                                  f"/admin/issues/{edition}/{date}/restore"])
        self.send("console", "POST", target, urllib.parse.urlencode(fields),
                  {**headers, "Content-Type": "application/x-www-form-urlencoded"})

    def publish(self):
        edition = self.rng.choice(["1", "8", "3", segment(self.rng)])
        date = self.rng.choice(["2031-05-0%d" % self.rng.randrange(1, 10), segment(self.rng)])
        headers = {"Authorization": self.basic(self.options.publisher)}
        choice = self.rng.randrange(4)
        if choice == 0:
            self.send("publish", "DELETE", f"/publish/{edition}/{date}", headers=headers)
        elif choice == 1:
            self.send("publish", "POST", f"/publish/{edition}/{date}/restore", headers=headers)
        else:
            content = self.rng.choice(["application/x-tar", "application/zip", "application/gzip", "application/pdf", value(self.rng)])
            self.send("publish", "PUT", f"/publish/{edition}/{date}", archive(self.rng), {**headers, "Content-Type": content})

    def other(self):
        paths = ["/healthz", "/readyz", "/metrics", "/sso/verify?" + query(self.rng, ["hash"]),
                 "/files/" + "/".join(segment(self.rng) for _ in range(self.rng.randrange(1, 4))) + "?" + query(self.rng, ["e", "s", "md5", "expires"]),
                 "/" + segment(self.rng), "/%2e%2e/%2e%2e/etc/passwd", "/web/../admin"]
        headers = {}
        if self.rng.random() < 0.2:
            headers["Range"] = self.rng.choice(["bytes=0-", "bytes=-1", "bytes=99999999999999999999-", "bytes=5-1", value(self.rng)])
        self.send("other", self.rng.choice(["GET", "GET", "HEAD", "OPTIONS", "PATCH"]), self.rng.choice(paths), headers=headers)

    def run(self):
        self.sign_in_console()
        self.sign_in_reader()
        families = [self.rpc, self.web, self.web, self.other]
        if self.options.console:
            families += [self.console, self.console]
        if self.options.publisher:
            families += [self.publish]
        deadline = time.monotonic() + self.options.seconds
        while time.monotonic() < deadline:
            self.rng.choice(families)()
        status, _, _ = self.send("other", "GET", "/healthz")
        if status != 200 or not self.alive():
            self.fail("other", "GET", "/healthz", f"after the run: {status}, process alive: {self.alive()}")
        return self.report(0)

    def report(self, code):
        print(json.dumps({"requests": self.counts, "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                          "failures": self.failures[:50], "failure_count": len(self.failures)}, indent=1))
        return 1 if self.failures or code else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--app", default="quiosc")
    parser.add_argument("--api", default="kiosk:secret")
    parser.add_argument("--publisher", default="")
    parser.add_argument("--console", default="")
    parser.add_argument("--reader", default="")
    options = parser.parse_args()
    print(f"seed {options.seed}", file=sys.stderr)
    return Fuzzer(options).run()


if __name__ == "__main__":
    sys.exit(main())
