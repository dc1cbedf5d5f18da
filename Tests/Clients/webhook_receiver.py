#!/usr/bin/env python3
"""A webhook endpoint for tests: verifies every delivery with the Standard Webhooks reference library
(PyPI `standardwebhooks`) and answers as the path says.

- POST /answer/STATUS answers STATUS. Query parameters: `retry_after=V` adds `Retry-After: V`;
  `location=URL` adds `Location: URL` (for 3xx); `body_bytes=N` answers a body of N bytes (`x` repeated;
  otherwise a short text); `delay=S` waits S seconds (a float) before answering: a slow endpoint that
  still answers, so that tries are in flight for a while. Other parameters are ignored (and recorded):
  several endpoints can share the receiver, each with its own query, e.g. `?endpoint=slow`.
- POST /hang records the delivery, then answers nothing for `seconds` (query, default 60) and closes.
- Anything else: 404.

Each POST is recorded, verified once per secret given with --secret (in order): "verified" lists the
indexes of the secrets that verify it; "errors" the library's message for each that does not. Also kept:
path, query, the webhook-id, webhook-timestamp and webhook-signature headers, host, user-agent,
content-type, the body, the time it arrived (Unix seconds, float), and for /answer the time its answer was
written ("answered"; null until then) or why writing it failed ("answer_error", e.g. the sender closed the
connection or was killed meanwhile; the time is then in "answered" too). A delivery's time span at the
receiver is [arrived, answered].

Test commands, one JSON object a line on stdin, each answered by one JSON line on stdout:
{"op": "state"} answers {"deliveries": [...], "errors": [...]}.

--tls makes a test certificate authority (DIR/ca.pem, with --dir) and serves HTTPS with a certificate for
localhost, receiver.example and 127.0.0.1 signed by it (needs the PyPI package `cryptography`).

It prints its port on stdout, then serves on 127.0.0.1 until stdin closes or SIGTERM. Exit status 1 if a
request handler raised (the traceback goes to stderr and into the state's "errors"); verification failures
are recorded, not raised.
"""
import argparse
import datetime
import ipaddress
import json
import os
import signal
import ssl
import sys
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

LOCK = threading.Lock()
DELIVERIES = []
HANDLER_ERRORS = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    secrets = []

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        try:
            self.handle_post()
        except Exception:
            text = traceback.format_exc()
            sys.stderr.write(text)
            with LOCK:
                HANDLER_ERRORS.append(text)
            raise

    def handle_post(self):
        arrived = time.time()
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        headers = {name.lower(): value for name, value in self.headers.items()}
        verified, errors = [], {}
        for index, secret in enumerate(self.secrets):
            try:
                Webhook(secret).verify(body, headers)
                verified.append(index)
            except WebhookVerificationError as error:
                errors[str(index)] = str(error)
        record = {
            "path": url.path,
            "query": query,
            "id": headers.get("webhook-id"),
            "timestamp": headers.get("webhook-timestamp"),
            "signature": headers.get("webhook-signature"),
            "host": headers.get("host"),
            "userAgent": headers.get("user-agent"),
            "contentType": headers.get("content-type"),
            "body": body.decode("utf-8"),
            "arrived": arrived,
            "verified": verified,
            "errors": errors,
            "answered": None,
            "answer_error": None,
        }
        with LOCK:
            DELIVERIES.append(record)

        if url.path == "/hang":
            time.sleep(float(query.get("seconds", "60")))
            self.close_connection = True
            return
        parts = url.path.strip("/").split("/")
        if len(parts) != 2 or parts[0] != "answer" or not parts[1].isdigit():
            self.answer(404, b"no such path\n", {})
            return
        status = int(parts[1])
        extra = {}
        if "retry_after" in query:
            extra["Retry-After"] = query["retry_after"]
        if "location" in query:
            extra["Location"] = query["location"]
        if "body_bytes" in query:
            payload = b"x" * int(query["body_bytes"])
        else:
            payload = ("answered %d\n" % status).encode()
        if "delay" in query:
            time.sleep(float(query["delay"]))
        failure = None
        try:
            self.answer(status, payload, extra)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as error:
            # The sender gave up or died while this answer waited: recorded, not a handler error.
            failure = "%s: %s" % (type(error).__name__, error)
            self.close_connection = True
        with LOCK:
            record["answered"] = time.time()
            record["answer_error"] = failure

    def answer(self, status, payload, extra):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


def make_tls(directory):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Kiosk webhook test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.DNSName("receiver.example"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "receiver.example")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    with open(os.path.join(directory, "ca.pem"), "wb") as out:
        out.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(os.path.join(directory, "server.pem"), "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
        out.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(os.path.join(directory, "server.key"), "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server.key"))
    return context


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", action="append", default=[], help="a whsec_ secret to verify with (repeatable)")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--dir", help="where --tls writes ca.pem")
    args = parser.parse_args()
    if args.tls and not args.dir:
        parser.error("--tls needs --dir")
    Handler.secrets = args.secret

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if args.tls:
        context = make_tls(args.dir)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: sys.stdin.close())

    print(server.server_address[1], flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command.get("op") == "state":
            with LOCK:
                answer = {"deliveries": list(DELIVERIES), "errors": list(HANDLER_ERRORS)}
        else:
            answer = {"error": "unknown op %r" % command.get("op")}
        print(json.dumps(answer), flush=True)
    server.shutdown()
    with LOCK:
        failed = bool(HANDLER_ERRORS)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
