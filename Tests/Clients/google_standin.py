#!/usr/bin/env python3
"""A local stand-in for the Google endpoints KioskPurchases calls, checking what Google checks.

- POST /token: Google's OAuth 2.0 token endpoint for the service-account JWT bearer grant. The assertion must
  be RS256 with the test service account's kid, verify with its PUBLIC key, and carry iss = client_email,
  scope = androidpublisher or firebase.messaging, aud = this token URL, iat not in the future, exp after now and
  at most an hour after iat. Answers an access token for those scopes with `expires_in` (--expires-in), or 400
  invalid_grant as Google does.
- The Play Developer API (purchases.subscriptionsv2.get, purchases.products.get, purchases.subscriptions
  .acknowledge, purchases.products.acknowledge/consume) under /androidpublisher/v3/applications/…: every call
  needs a bearer token issued here and not expired (401 otherwise); purchases come from DIR/purchases.json
  ({"packageName", "subscriptions": {token: purchase}, "products": {productId: {token: purchase}}}; a purchase
  with "_status": N is answered with that HTTP status, one with "_delay": S only after S seconds, one with
  "_settle_delay": S has its acknowledge or consume recorded at once and answered only after S seconds, so a test
  can look at what the caller had done by then); unknown tokens 404. Acknowledging or consuming twice is refused
  with 400 invalidPurchaseState.
- GET /oauth2/v3/certs: a JWKS of the published OIDC test keys.
- FCM HTTP v1, POST /v1/projects/{project}/messages:send: a bearer token issued here for the firebase.messaging
  scope (401 / 403 otherwise), the project of the service account (404 otherwise), and a message as FCM checks
  it: one `token`, `notification` with string title/body/image, `data` of strings only, `android.priority` NORMAL
  or HIGH, `android.ttl` as "Ns", `android.restricted_package_name` the package name, notification and data at
  most 4096 bytes (400 INVALID_ARGUMENT otherwise). Device tokens come from DIR/purchases.json's "fcm":
  {"unregistered": [token] (404 UNREGISTERED), "invalid": [token] (400 INVALID_ARGUMENT on message.token),
  "retry": {token: {"count": N, "status": 429 or 5xx, "retryAfter": S}} (the first N requests answered that
  status with Retry-After: S)}; any other token is accepted. Every message is kept in the state's "fcmMessages"
  (token, status, the time it came, the message).
- Test commands, one JSON object a line on stdin, each answered by one JSON line on stdout: {"op": "state"}
  (counts and recorded calls), {"op": "mint", "claims", "key", "kid", "alg"} (an OIDC token signed as asked),
  {"op": "publish", "kid"} (publish another test key in the JWKS), {"op": "put", "kind": "subscription" or
  "product", "token", "productId" (products only), "purchase"} (add or replace a purchase, as Google's own state
  changes after a refund; answers {}), {"op": "void", "purchaseToken", "orderId", "productType" (1 subscription, 2
  one-time), "voidedTimeMillis" (default now), "refundType"} (Google lists it as voided; answers {}).

HTTPS only, as Google serves: on start it makes a test certificate authority (DIR/ca.pem), a server certificate
for 127.0.0.1 (an IP subjectAltName, serverAuth) signed by it, and another authority that signed nothing
(DIR/other_ca.pem, for clients that must fail), and serves with Python's ssl module, TLS 1.2 or newer. Each
connection's handshake runs in its own thread; a failed one (the client distrusts the certificate, speaks plain
HTTP or an old TLS) is recorded in the state's "tlsFailures", the versions of the good ones in "tlsVersions".

It writes DIR/service_account.json and DIR/wrong_service_account.json (same email and key id, another private
key; token_uri is this stand-in's https URL), then prints its port on stdout. It exits when stdin closes or on
SIGTERM; exit status 1 if any request raised (the traceback goes to stderr and into the state's "errors").
"""
import argparse
import base64
import datetime
import ipaddress
import json
import os
import secrets
import signal
import ssl
import sys
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SCOPE = "https://www.googleapis.com/auth/androidpublisher"
FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
FCM_PREFIX = "/v1/projects/"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
API_PREFIX = "/androidpublisher/v3/applications/"


def b64url_uint(value):
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pkcs8(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def certificate(subject, key, issuer, issuer_key, *, ca, san=None):
    """A certificate valid from an hour ago for a day: a CA (keyCertSign, path length 0) or a TLS server."""
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    )
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False),
            critical=True)
    else:
        builder = (
            builder.add_extension(x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False),
                critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
        )
    return builder.sign(issuer_key, hashes.SHA256())


def write_pem(path, data):
    with open(path, "wb") as f:
        f.write(data)


def make_tls_context(directory):
    """Writes DIR/ca.pem, DIR/other_ca.pem and the server's certificate and key; the server's TLS context."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate("Kiosk Test CA", ca_key, "Kiosk Test CA", ca_key, ca=True)
    other_key = ec.generate_private_key(ec.SECP256R1())
    other = certificate("Kiosk Other Test CA", other_key, "Kiosk Other Test CA", other_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = certificate("127.0.0.1", server_key, "Kiosk Test CA", ca_key, ca=False,
                         san=[x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    write_pem(os.path.join(directory, "ca.pem"), ca.public_bytes(serialization.Encoding.PEM))
    write_pem(os.path.join(directory, "other_ca.pem"), other.public_bytes(serialization.Encoding.PEM))
    chain = os.path.join(directory, "server.pem")
    key = os.path.join(directory, "server-key.pem")
    write_pem(chain, server.public_bytes(serialization.Encoding.PEM))
    write_pem(key, server_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(chain, key)
    return context


class TLSServer(ThreadingHTTPServer):
    """ThreadingHTTPServer over TLS: the handshake runs in the connection's own thread, not in accept."""
    daemon_threads = True

    def __init__(self, address, handler, context, state):
        super().__init__(address, handler)
        self.context = context
        self.state = state

    def finish_request(self, request, client_address):
        try:
            connection = self.context.wrap_socket(request, server_side=True)
        except OSError as error:
            # The peer refused us or we refused it: an outcome the tests look at, not a stand-in failure.
            with self.state.lock:
                self.state.tls_failures.append(f"{type(error).__name__}: {error}")
            return
        with self.state.lock:
            self.state.tls_versions.append(connection.version())
        try:
            super().finish_request(connection, client_address)
        finally:
            self.shutdown_request(connection)


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.args = args
        self.client_email = args.client_email
        self.key_id = secrets.token_hex(20)
        self.account_key = new_key()
        self.wrong_key = new_key()
        self.oidc_keys = {"oidc-a": new_key(), "oidc-b": new_key(), "oidc-other": new_key()}
        self.published = ["oidc-a"]
        self.hmac_secret = secrets.token_bytes(32)
        self.access_tokens = {}  # token -> (expiry in epoch seconds, granted scopes)
        self.token_requests = 0
        self.token_refusals = []
        self.jwks_requests = 0
        self.api_calls = []
        self.acknowledged = []
        self.consumed = []
        self.errors = []
        self.tls_versions = []
        self.tls_failures = []
        path = os.path.join(args.dir, "purchases.json")
        seeded = {}
        if os.path.exists(path):
            with open(path) as f:
                seeded = json.load(f)
        self.package_name = seeded.get("packageName", args.package_name)
        self.subscriptions = seeded.get("subscriptions", {})
        self.products = seeded.get("products", {})
        self.voided = seeded.get("voided", [])
        self.fcm = seeded.get("fcm", {})
        self.fcm_retry = {token: dict(plan) for token, plan in self.fcm.get("retry", {}).items()}
        self.fcm_messages = []
        self.port = None

    def token_url(self):
        return f"https://127.0.0.1:{self.port}/token"

    def write_accounts(self):
        for name, key in (("service_account.json", self.account_key), ("wrong_service_account.json", self.wrong_key)):
            account = {
                "type": "service_account",
                "project_id": "kiosk-test",
                "private_key_id": self.key_id,
                "private_key": pkcs8(key),
                "client_email": self.client_email,
                "client_id": "1234567890",
                "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                "token_uri": self.token_url(),
            }
            with open(os.path.join(self.args.dir, name), "w") as f:
                json.dump(account, f)

    def jwks(self):
        keys = []
        for kid in self.published:
            numbers = self.oidc_keys[kid].public_key().public_numbers()
            keys.append({"kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
                         "n": b64url_uint(numbers.n), "e": b64url_uint(numbers.e)})
        return {"keys": keys}

    def mint(self, request):
        """An OIDC token with the claims, key (by name), kid and alg the test asks for."""
        claims = request["claims"]
        alg = request.get("alg", "RS256")
        key_name = request.get("key", "oidc-a")
        headers = {"kid": request.get("kid", key_name)}
        if alg == "RS256":
            return jwt.encode(claims, self.oidc_keys[key_name], algorithm="RS256", headers=headers)
        if alg == "HS256":
            return jwt.encode(claims, self.hmac_secret, algorithm="HS256", headers=headers)
        if alg == "none":
            return jwt.encode(claims, None, algorithm="none", headers=headers)
        raise ValueError("unknown alg " + alg)

    def command(self, request):
        """One test command read from stdin; its answer is one JSON line on stdout."""
        op = request["op"]
        if op == "state":
            with self.lock:
                return self.snapshot()
        if op == "mint":
            return {"token": self.mint(request)}
        if op == "publish":
            with self.lock:
                if request["kid"] not in self.published:
                    self.published.append(request["kid"])
            return {}
        if op == "put":
            with self.lock:
                if request["kind"] == "subscription":
                    self.subscriptions[request["token"]] = request["purchase"]
                elif request["kind"] == "product":
                    self.products.setdefault(request["productId"], {})[request["token"]] = request["purchase"]
                else:
                    raise ValueError("unknown kind " + str(request["kind"]))
            return {}
        if op == "void":
            entry = {
                "kind": "androidpublisher#voidedPurchase",
                "purchaseToken": request["purchaseToken"],
                "orderId": request["orderId"],
                "purchaseTimeMillis": str(request.get("purchaseTimeMillis", int(time.time() * 1000) - 86_400_000)),
                "voidedTimeMillis": str(request.get("voidedTimeMillis", int(time.time() * 1000))),
                "voidedSource": request.get("voidedSource", 0),
                "voidedReason": request.get("voidedReason", 1),
                "refundType": request.get("refundType", 1),
                "_productType": request.get("productType", 2),
            }
            with self.lock:
                self.voided.append(entry)
            return {}
        raise ValueError("unknown command " + op)

    def snapshot(self):
        return {
            "tokenRequests": self.token_requests,
            "tokenRefusals": self.token_refusals,
            "jwksRequests": self.jwks_requests,
            "apiCalls": self.api_calls,
            "acknowledged": self.acknowledged,
            "consumed": self.consumed,
            "errors": self.errors,
            "tlsVersions": self.tls_versions,
            "tlsFailures": self.tls_failures,
            "fcmMessages": self.fcm_messages,
        }


def google_error(status, reason, message):
    names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
             410: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
    return {"error": {"code": status, "message": message,
                      "errors": [{"message": message, "domain": "androidpublisher", "reason": reason}],
                      "status": names.get(status, "UNKNOWN")}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set before serving

    def log_message(self, format, *args):
        pass

    def reply(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def dispatch(self, method):
        self.settle_delay = 0
        headers = {}
        try:
            body = self.body()
            result = self.route(method, body)
            status, answer = result[0], result[1]
            headers = result[2] if len(result) > 2 else {}
            if isinstance(answer, dict) and "_delay" in answer:
                time.sleep(answer["_delay"])
            if self.settle_delay:
                time.sleep(self.settle_delay)
        except Exception:
            trace = traceback.format_exc()
            sys.stderr.write(trace)
            with self.state.lock:
                self.state.errors.append(trace)
            status, answer = 500, {"error": "the stand-in raised"}
        self.reply(status, answer, headers)

    def route(self, method, body):
        path = self.path.split("?", 1)[0]
        if method == "POST" and path == "/token":
            return self.token(body)
        if method == "GET" and path == "/oauth2/v3/certs":
            with self.state.lock:
                self.state.jwks_requests += 1
                return 200, self.state.jwks()
        if path.startswith(API_PREFIX):
            return self.api(method, path[len(API_PREFIX):], urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query))
        if method == "POST" and path.startswith(FCM_PREFIX) and path.endswith("/messages:send"):
            return self.fcm_send(path[len(FCM_PREFIX):-len("/messages:send")], body)
        return 404, {"error": "no such endpoint"}

    # The token endpoint.

    def refuse_grant(self, why, description="Invalid JWT Signature."):
        with self.state.lock:
            self.state.token_refusals.append(why)
        return 400, {"error": "invalid_grant", "error_description": description}

    def token(self, body):
        state = self.state
        with state.lock:
            state.token_requests += 1
        if not (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
            return 400, {"error": "invalid_request", "error_description": "form body expected"}
        form = urllib.parse.parse_qs(body.decode(), strict_parsing=True)
        if form.get("grant_type") != [JWT_BEARER]:
            return 400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type"}
        assertion = form.get("assertion", [""])[0]
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.InvalidTokenError:
            return self.refuse_grant("unreadable assertion", "Invalid JWT.")
        if header.get("alg") != "RS256":
            return self.refuse_grant("alg " + str(header.get("alg")))
        if header.get("kid") != state.key_id:
            return self.refuse_grant("kid")
        try:
            claims = jwt.decode(
                assertion, state.account_key.public_key(), algorithms=["RS256"], audience=state.token_url(),
                issuer=state.client_email, leeway=0,
                options={"require": ["iss", "aud", "exp", "iat", "scope"], "verify_iat": False})
        except jwt.InvalidSignatureError:
            return self.refuse_grant("signature")
        except jwt.InvalidTokenError as error:
            return self.refuse_grant(type(error).__name__, "Invalid JWT: " + type(error).__name__)
        now = time.time()
        scopes = set(str(claims["scope"]).split())
        if not scopes & {SCOPE, FCM_SCOPE}:
            return self.refuse_grant("scope", "Invalid OAuth scope or ID token audience provided.")
        if claims["iat"] > now + 60:
            return self.refuse_grant("iat in the future", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
        if claims["exp"] - claims["iat"] > 3600:
            return self.refuse_grant("lifetime", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
        token = "ya29.test-" + secrets.token_urlsafe(24)
        with state.lock:
            state.access_tokens[token] = (now + state.args.expires_in, scopes)
        return 200, {"access_token": token, "expires_in": state.args.expires_in, "token_type": "Bearer"}

    # The Play Developer API.

    def api(self, method, rest, query):
        state = self.state
        raw = rest.split("/")
        action = None
        if method == "POST" and ":" in raw[-1]:
            raw[-1], action = raw[-1].rsplit(":", 1)
        segments = [urllib.parse.unquote(s) for s in raw]
        with state.lock:
            state.api_calls.append({"method": method, "segments": segments, "action": action})
        authorization = self.headers.get("Authorization") or ""
        token = authorization[7:] if authorization.startswith("Bearer ") else None
        with state.lock:
            expiry, scopes = state.access_tokens.get(token, (None, set()))
        if expiry is None or expiry < time.time():
            return 401, google_error(401, "authError", "Request had invalid authentication credentials.")
        if SCOPE not in scopes:
            return 403, google_error(403, "insufficientPermissions", "Request had insufficient authentication scopes.")
        if len(segments) < 2 or segments[0] != state.package_name or segments[1] != "purchases":
            return 404, google_error(404, "applicationNotFound", "No application was found for the given package name.")
        route = segments[2:]
        if method == "GET" and route == ["voidedpurchases"] and action is None:
            return self.voided_list(query)
        with state.lock:
            if method == "GET" and len(route) == 3 and route[0] == "subscriptionsv2" and route[1] == "tokens":
                return self.answer(state.subscriptions.get(route[2]))
            if len(route) == 4 and route[0] == "products" and route[2] == "tokens":
                purchase = state.products.get(route[1], {}).get(route[3])
                if method == "GET" and action is None:
                    return self.answer(purchase)
                if method == "POST" and action in ("acknowledge", "consume"):
                    return self.settle_product(purchase, action, route[1], route[3])
            if (method == "POST" and action == "acknowledge" and len(route) == 4 and route[0] == "subscriptions"
                    and route[2] == "tokens"):
                purchase = state.subscriptions.get(route[3])
                if purchase is not None and route[1] not in [i.get("productId") for i in purchase.get("lineItems", [])]:
                    purchase = None
                return self.settle_subscription(purchase, route[1], route[3])
        return 404, google_error(404, "notFound", "Not found.")

    # Firebase Cloud Messaging, HTTP v1.

    @staticmethod
    def fcm_error(status, message, error_code=None, field=None):
        names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        details = []
        if error_code:
            details.append({"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": error_code})
        if field:
            details.append({"@type": "type.googleapis.com/google.rpc.BadRequest",
                            "fieldViolations": [{"field": field, "description": message}]})
        error = {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}
        if details:
            error["details"] = details
        return {"error": error}

    def fcm_send(self, project, body):
        state = self.state
        authorization = self.headers.get("Authorization") or ""
        token = authorization[7:] if authorization.startswith("Bearer ") else None
        with state.lock:
            expiry, scopes = state.access_tokens.get(token, (None, set()))
        if expiry is None or expiry < time.time():
            return 401, self.fcm_error(401, "Request had invalid authentication credentials.")
        if FCM_SCOPE not in scopes:
            return 403, self.fcm_error(403, "Request had insufficient authentication scopes.")
        if project != "kiosk-test":
            return 404, self.fcm_error(404, "Requested entity was not found.")
        try:
            message = json.loads(body)["message"]
        except (ValueError, KeyError, TypeError):
            return 400, self.fcm_error(400, "Invalid JSON payload received.")
        invalid = self.fcm_invalid(message)
        if invalid:
            return 400, self.fcm_error(400, invalid[1], "INVALID_ARGUMENT", invalid[0])
        device = message["token"]
        status, answer, headers = 200, {"name": f"projects/{project}/messages/{secrets.token_hex(8)}"}, {}
        with state.lock:
            plan = state.fcm_retry.get(device)
            if device in state.fcm.get("unregistered", []):
                status, answer = 404, self.fcm_error(404, "Requested entity was not found.", "UNREGISTERED")
            elif device in state.fcm.get("invalid", []):
                status, answer = 400, self.fcm_error(400, "The registration token is not a valid FCM registration token",
                                                     "INVALID_ARGUMENT", "message.token")
            elif plan and plan["count"] > 0:
                plan["count"] -= 1
                status = plan.get("status", 429)
                answer = self.fcm_error(status, "Quota exceeded." if status == 429 else "The service is unavailable.",
                                        "QUOTA_EXCEEDED" if status == 429 else "UNAVAILABLE")
                headers = {"Retry-After": str(plan.get("retryAfter", 1))}
            state.fcm_messages.append({"token": device, "status": status, "time": time.time(), "message": message})
        return status, answer, headers

    def fcm_invalid(self, message):
        """(field, description) of the first thing FCM would refuse in `message`, or None."""
        if not isinstance(message, dict):
            return "message", "Invalid value"
        targets = [k for k in ("token", "topic", "condition") if k in message]
        if targets != ["token"] or not isinstance(message["token"], str) or not message["token"]:
            return "message.token", "Exactly one of token, topic or condition, a non-empty token here"
        notification = message.get("notification", {})
        if not isinstance(notification, dict) or any(
                k not in ("title", "body", "image") or not isinstance(v, str) for k, v in notification.items()):
            return "message.notification", "Invalid notification"
        data = message.get("data", {})
        if not isinstance(data, dict) or any(not isinstance(v, str) for v in data.values()):
            return "message.data", "Invalid value: data values must be strings"
        android = message.get("android", {})
        if not isinstance(android, dict):
            return "message.android", "Invalid value"
        if android.get("priority", "NORMAL") not in ("NORMAL", "HIGH"):
            return "message.android.priority", "Invalid value"
        ttl = android.get("ttl", "0s")
        if not isinstance(ttl, str) or not ttl.endswith("s") or not ttl[:-1].replace(".", "", 1).isdigit():
            return "message.android.ttl", "Invalid duration"
        if "collapse_key" in android and not isinstance(android["collapse_key"], str):
            return "message.android.collapse_key", "Invalid value"
        if android.get("restricted_package_name", self.state.package_name) != self.state.package_name:
            return "message.android.restricted_package_name", "Invalid package name"
        if len(json.dumps({"notification": notification, "data": data}).encode()) > 4096:
            return "message", "Message is too big"
        return None

    def voided_list(self, query):
        def one(name, default):
            values = query.get(name)
            return values[-1] if values else default
        now = int(time.time() * 1000)
        try:
            start = int(one("startTime", now - 30 * 86_400_000))
            kind = int(one("type", 0))
            size = int(one("maxResults", 1000))
            offset = int(one("token", "0") or "0")
        except ValueError:
            return 400, google_error(400, "invalid", "Invalid value.")
        if start < now - 30 * 86_400_000 - 60_000 or kind not in (0, 1) or not 1 <= size <= 1000 or offset < 0:
            return 400, google_error(400, "invalid", "Invalid value.")
        with self.state.lock:
            listed = [v for v in self.state.voided
                      if int(v["voidedTimeMillis"]) >= start and (kind == 1 or v["_productType"] == 2)]
        listed.sort(key=lambda v: int(v["voidedTimeMillis"]))
        page = [{k: v for k, v in entry.items() if not k.startswith("_")} for entry in listed[offset:offset + size]]
        body = {"voidedPurchases": page} if page else {}
        body["pageInfo"] = {"totalResults": len(listed), "resultPerPage": size, "startIndex": offset}
        if offset + size < len(listed):
            body["tokenPagination"] = {"nextPageToken": str(offset + size)}
        return 200, body

    @staticmethod
    def answer(purchase):
        if purchase is None:
            return 404, google_error(404, "purchaseTokenNotFound", "The purchase token was not found.")
        if "_delay" in purchase:
            return 200, purchase
        if "_status" in purchase:
            status = purchase["_status"]
            return status, google_error(status, "backendError" if status >= 500 else "purchaseTokenNoLongerValid",
                                        "Seeded answer.")
        return 200, purchase

    def settle_subscription(self, purchase, subscription_id, token):
        status, answer = self.answer(purchase)
        if status != 200:
            return status, answer
        if purchase.get("acknowledgementState") == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED":
            return 400, google_error(400, "invalidPurchaseState",
                                     "The purchase is not in a valid state to perform the desired operation.")
        purchase["acknowledgementState"] = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
        self.settle_delay = purchase.get("_settle_delay", 0)
        self.state.acknowledged.append({"kind": "subscription", "id": subscription_id, "token": token})
        return 200, {}

    def settle_product(self, purchase, action, product_id, token):
        status, answer = self.answer(purchase)
        if status != 200:
            return status, answer
        field = "acknowledgementState" if action == "acknowledge" else "consumptionState"
        if purchase.get(field, 0) == 1:
            return 400, google_error(400, "invalidPurchaseState",
                                     "The purchase is not in a valid state to perform the desired operation.")
        purchase[field] = 1
        self.settle_delay = purchase.get("_settle_delay", 0)
        record = {"kind": "product", "id": product_id, "token": token}
        (self.state.acknowledged if action == "acknowledge" else self.state.consumed).append(record)
        return 200, {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="where the purchases are read and the key files written")
    parser.add_argument("--package-name", default="com.example.kiosk")
    parser.add_argument("--client-email", default="kiosk-server@kiosk-test.iam.gserviceaccount.com")
    parser.add_argument("--expires-in", type=int, default=3599)
    args = parser.parse_args()

    state = State(args)
    Handler.state = state
    server = TLSServer(("127.0.0.1", 0), Handler, make_tls_context(args.dir), state)
    state.port = server.server_address[1]
    state.write_accounts()

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    def watch_stdin():
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                answer = state.command(json.loads(line))
            except Exception:
                trace = traceback.format_exc()
                sys.stderr.write(trace)
                with state.lock:
                    state.errors.append(trace)
                answer = {"error": "the command raised"}
            print(json.dumps(answer), flush=True)
        stop()

    signal.signal(signal.SIGTERM, stop)
    threading.Thread(target=watch_stdin, daemon=True).start()
    print(state.port, flush=True)
    server.serve_forever()
    server.server_close()
    sys.exit(1 if state.errors else 0)


if __name__ == "__main__":
    main()
