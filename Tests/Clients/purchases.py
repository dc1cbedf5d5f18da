#!/usr/bin/env python3
"""A reader app buying through the App Store and Google Play, against the real KioskServer binary.

    purchases.py BINARY WORKDIR DATABASE [--instances 2] [--scenarios NAME ...]

BINARY    the KioskServer executable.
WORKDIR   created if missing; gets the configuration, the editions directory, the test Apple certificate
          authority (apple/), the Google stand-in's folder (google/), the instances' logs (instance-N.log) and
          answers.log (crash_check.py's LOG: "notice STORE:ID" for each notification answered 200, "purchase
          STORE:ORIGINAL_ID" for each purchase an app was answered for).
DATABASE  a SQLite file, or a `postgres://user@host:port/db` URL of an existing, empty database. The
          instances share it; KIOSK_SECRET is set for them.

Set-up: a test Apple certificate authority made with `cryptography` (a root, written as DER for
stores.apple.root_certificates; an intermediate with Apple's OID 1.2.840.113635.100.6.2.1; a leaf with
1.2.840.113635.100.6.11.1; P-256) signs StoreKit 2 transactions, renewal info and App Store Server
Notifications V2 (PyJWT, ES256, x5c [leaf, intermediate, root]); each kind is checked once with Apple's own
`SignedDataVerifier` (appstoreserverlibrary, offline, with that root), so the payloads are ones Apple's
library accepts. Tests/Clients/google_standin.py stands in for Google (token endpoint, Play Developer API,
OIDC keys) over HTTPS in google/; stores.google points at it. App `quiosc` sells an issue, a pack of 2, a
`period` subscription of its subscriber lines and an `all` subscription of edition 2, in both stores; app
`presencia` sells in the App Store, Production only. stores.anonymous_device_limit is 2. The instances
publish the Samples at first start (subscriber editions 1 and 2 of quiosc, free 8).

Scenarios (each asserts the answers and their effect on getEdicio, fault 5 or a zip link, on every
instance, and on the `edicions`/`fins` of registrar's answer):
  products   getProductes: the products, and `compte`, the same for a reader on two devices, different
             for two anonymous devices.
  issue      an Apple issue purchase opens exactly the issue named; registering it again (5 times, on
             every instance) answers the same and grants nothing more; no issue named: -32602, nothing kept.
  pack       a Google pack of 2 (the stand-in's purchases.json): two credits open two issues, the third is
             fault 5, an issue already opened costs nothing; the stand-in was asked to consume it once, when the
             purchase was already in the database; a pack bought for another account is fault 9 and is not consumed.
  renewals   an Apple `period` subscription through SUBSCRIBED, DID_FAIL_TO_RENEW (GRACE_PERIOD),
             GRACE_PERIOD_EXPIRED, DID_RENEW, EXPIRED, SUBSCRIBED (RESUBSCRIBE), REFUND and REFUND_REVERSED
             posted to /store/apple/quiosc: after each, what opens and registrarCompra's estat/fins.
  duplicates the same notification 5 times (one applied, the rest duplicate), another 10 times at once
             on every instance (one applied), and notifications delivered in reverse order (the final
             state is the in-order one).
  refused    forged, alg none/HS256, a chain of 2, a leaf without Apple's OID, a foreign root, another
             bundle, Sandbox where only Production is accepted, a future signedDate, too large: fault 8;
             notifications forged the same ways or with a forged inner transaction, bodies over the limits,
             Pub/Sub pushes with a missing or wrong bearer: HTTP 400; nothing changes.
  whose      another reader's account token: fault 9; an anonymous purchase restored on a second device,
             refused on a third (limit 2); the buyer's device signs in and the purchase is the reader's (it
             opens on a new device of the reader); the same for a device the purchase was restored on.
  google     a Google `period` subscription through Pub/Sub: SUBSCRIPTION_PURCHASED is acknowledged once it
             is stored; the reader registers it; a voidedPurchaseNotification revokes it, and a restore once
             Google says expired does not bring it back. An `all` subscription of edition 2 opens while paid
             and nothing once SUBSCRIPTION_EXPIRED.
  race       two readers registering one Apple transaction at the same moment on two instances: exactly one
             holds it; one reader on two devices at once: both succeed.
  kill       kill -9 of instance 0, three times, once in each third of 0.3-1.5 s into a load of 8 threads: DID_RENEW
             notifications of fresh subscriptions (three each, distinct notificationUUIDs and transactions) and
             registrarCompra of their first transactions and of issue purchases, three in four to instance 0, the
             rest to instance 1. Requests must be in flight on it (counted), instance 1 answers all of them. Once it
             is started again: crash_check finds nothing (answers.log; the full check, PRAGMA integrity_check
             included, on SQLite; purchase_problems on PostgreSQL); every notification answered 200, posted again,
             is duplicate; those the kill cut off, again, 200 applied or duplicate, and registrarCompra succeeds
             (a refused connection or one never sent: applied); then each subscription is paid to its last
             renewal's day and opens its paid issues (registrarCompra, getEdicio on both instances), and the
             database holds its 4 payments and 3 notices.

Prints one JSON report on standard output; each violated expectation is also printed on standard error,
and the exit status is 1 when there is one (2 for a usage or set-up error). Everything started (the
instances, the stand-in) is stopped on exit; WORKDIR is left for inspection.
"""
import argparse
import base64
import collections
import datetime
import hashlib
import hmac
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import crash_check  # noqa: E402  (Tests/Clients/crash_check.py)
from cluster import Client, SetupError, describe, finish_report, outcome  # noqa: E402

SECRET = "purchases-test-secret-" + "p" * 24
APP = "quiosc"
BUNDLE = "cat.elpunt.quiosc"
APPLE_ID = 1234567890
PACKAGE = "cat.elpunt.quiosc"
ISSUE = "cat.elpunt.quiosc.exemplar"
PACK = "cat.elpunt.quiosc.pack2"
MONTHLY = "cat.elpunt.quiosc.mensual"
ALL2 = "cat.elpunt.quiosc.tot2"
OTHER_APP = "presencia"
OTHER_BUNDLE = "cat.elpunt.presencia"
OTHER_APPLE_ID = 987654321
OTHER_ISSUE = "cat.elpunt.presencia.exemplar"
PUSH_AUDIENCE = "https://kiosk.test/store/google/quiosc"
PUSH_ACCOUNT = "play-push@kiosk-test.iam.gserviceaccount.com"
DEVICE_LIMIT = 2
PASSWORD = "llegir-" + "x" * 10
USERS = [f"lector{n}" for n in range(1, 13)]

# The Samples: editions 1 and 2 are quiosc's subscriber lines, 8 is free.
I1A = (1, "2025-06-01")
I1B = (1, "2025-06-02")
I2 = (2, "2025-06-02")
F8 = (8, "2025-05-24")
PAID = (I1A, I1B, I2)
APPLE_OID_INTERMEDIATE = "1.2.840.113635.100.6.2.1"
APPLE_OID_LEAF = "1.2.840.113635.100.6.11.1"
UTC = datetime.timezone.utc


def at(text):
    """Unix seconds of an ISO time in UTC."""
    return datetime.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def day(seconds):
    return datetime.datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")


def rfc3339(seconds):
    return datetime.datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(seconds * 1000) % 1000:03d}Z"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def issue_name(issue):
    return f"{issue[0]}/{issue[1]}"


# MARK: - A test Apple certificate authority and the JWS it signs

def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Kiosk Test"),
                      x509.NameAttribute(NameOID.COUNTRY_NAME, "ES")])


def _certificate(subject, key, issuer, issuer_key, *, ca, path_length=None, marker=None):
    now = datetime.datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(datetime.datetime(2024, 1, 1, tzinfo=UTC))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=path_length), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=not ca, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=ca, crl_sign=ca, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    )
    if marker:
        # Apple's marker extensions hold an ASN.1 NULL.
        builder = builder.add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier(marker), b"\x05\x00"),
                                        critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


class AppleAuthority:
    """A root, an intermediate with Apple's intermediate OID and a leaf with Apple's leaf OID, all P-256."""

    def __init__(self, label):
        self.label = label
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        self.root_name = f"{label} Root CA - G3"
        self.root = _certificate(self.root_name, self.root_key, self.root_name, self.root_key, ca=True)
        self.leaf_key, self.leaf, self.intermediate = self.chain(True, True)

    def chain(self, intermediate_marker, leaf_marker):
        """A new intermediate under the root and a leaf under it, with or without Apple's marker OIDs:
        (the leaf's key, the leaf, the intermediate)."""
        intermediate_key = ec.generate_private_key(ec.SECP256R1())
        leaf_key = ec.generate_private_key(ec.SECP256R1())
        intermediate_name = f"{self.label} WWDR CA G6"
        intermediate = _certificate(intermediate_name, intermediate_key, self.root_name, self.root_key, ca=True,
                                    path_length=0, marker=APPLE_OID_INTERMEDIATE if intermediate_marker else None)
        leaf = _certificate(f"{self.label} Prod ECC Receipt Signing", leaf_key, intermediate_name, intermediate_key,
                            ca=False, marker=APPLE_OID_LEAF if leaf_marker else None)
        return leaf_key, leaf, intermediate

    def sign_with_chain(self, payload, chain):
        """`payload` signed by the leaf of `chain` (from `chain()`), x5c that leaf, its intermediate and the root."""
        key, leaf, intermediate = chain
        x5c = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in (leaf, intermediate, self.root)]
        return jwt.encode(payload, key, algorithm="ES256", headers={"x5c": x5c})

    @property
    def root_der(self):
        return self.root.public_bytes(serialization.Encoding.DER)

    @property
    def x5c(self):
        return [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode()
                for c in (self.leaf, self.intermediate, self.root)]

    def sign(self, payload, x5c=None, key=None):
        return jwt.encode(payload, key or self.leaf_key, algorithm="ES256", headers={"x5c": x5c or self.x5c})


def raw_jws(header, payload, signature=b""):
    """A JWS put together by hand (for algorithms PyJWT will not sign with)."""
    encode = lambda value: b64url(json.dumps(value, separators=(",", ":")).encode())  # noqa: E731
    return f"{encode(header)}.{encode(payload)}.{b64url(signature)}"


class SignedDates:
    """Apple's signedDate, in milliseconds: increasing, never in the future (the store signs in order)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.next_ms = int((time.time() - 3 * 3600) * 1000)

    def take(self):
        with self.lock:
            self.next_ms += 1000
            return min(self.next_ms, int(time.time() * 1000) - 1000)


class AppleStore:
    """Makes what the App Store signs for an app: transactions, renewal info, notifications."""

    def __init__(self, authority, dates, bundle=BUNDLE, apple_id=APPLE_ID):
        self.authority, self.dates, self.bundle, self.apple_id = authority, dates, bundle, apple_id

    def transaction_payload(self, *, tid, otid, product, purchase, expires=None, token=None, environment="Production",
                            bundle=None, revoked=None, original_purchase=None, signed=None):
        payload = {
            "transactionId": tid, "originalTransactionId": otid, "bundleId": bundle or self.bundle,
            "productId": product, "purchaseDate": int(purchase * 1000),
            "originalPurchaseDate": int((original_purchase or purchase) * 1000), "quantity": 1,
            "type": "Auto-Renewable Subscription" if expires else "Consumable", "inAppOwnershipType": "PURCHASED",
            "signedDate": signed or self.dates.take(), "environment": environment,
            "transactionReason": "RENEWAL" if original_purchase and original_purchase != purchase else "PURCHASE",
            "storefront": "ESP", "storefrontId": "143454", "price": 4990 if expires else 1990, "currency": "EUR",
            "appTransactionId": "704289572311579" + otid[-3:].rjust(3, "0") if otid[-3:].isdigit() else "704289572311579001",
        }
        if expires:
            payload["expiresDate"] = int(expires * 1000)
            payload["webOrderLineItemId"] = "w" + tid
            payload["subscriptionGroupIdentifier"] = "21000001"
        if token:
            payload["appAccountToken"] = token
        if revoked:
            payload["revocationDate"] = int(revoked * 1000)
            payload["revocationReason"] = 0
        return payload

    def transaction(self, **fields):
        return self.authority.sign(self.transaction_payload(**fields))

    def renewal_payload(self, *, otid, product, grace_until=None, auto_renew=True, retrying=False, token=None,
                        environment="Production", signed=None):
        payload = {"originalTransactionId": otid, "autoRenewProductId": product, "productId": product,
                   "autoRenewStatus": 1 if auto_renew else 0, "signedDate": signed or self.dates.take(),
                   "environment": environment, "recentSubscriptionStartDate": int(at("2025-05-01T00:00:00") * 1000)}
        if not auto_renew:
            payload["expirationIntent"] = 1
        if retrying:
            payload["isInBillingRetryPeriod"] = True
        if grace_until:
            payload["gracePeriodExpiresDate"] = int(grace_until * 1000)
        if token:
            payload["appAccountToken"] = token
        return payload

    def renewal(self, **fields):
        return self.authority.sign(self.renewal_payload(**fields))

    def notification_payload(self, kind, subtype, transaction, renewal=None, environment="Production", bundle=None,
                             apple_id=None, signed=None, uuid_=None):
        data = {"appAppleId": apple_id if apple_id is not None else self.apple_id, "bundleId": bundle or self.bundle,
                "bundleVersion": "42", "environment": environment, "signedTransactionInfo": transaction, "status": 1}
        if renewal:
            data["signedRenewalInfo"] = renewal
        payload = {"notificationType": kind, "notificationUUID": uuid_ or str(uuid.uuid4()), "version": "2.0",
                   "signedDate": signed or self.dates.take(), "data": data}
        if subtype:
            payload["subtype"] = subtype
        return payload

    def notification(self, kind, subtype, transaction, renewal=None, **fields):
        return self.authority.sign(self.notification_payload(kind, subtype, transaction, renewal, **fields))


def apple_library_verdict(kind, jws, root_der, environment="Production", bundle=BUNDLE, apple_id=APPLE_ID):
    """What Apple's own SignedDataVerifier says: "accepted" or the refusal's status name."""
    import apple_verify  # Tests/Clients/apple_verify.py: imports appstoreserverlibrary
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
    verifier = SignedDataVerifier(root_certificates=[root_der], enable_online_checks=False,
                                  environment=Environment(environment), bundle_id=bundle, app_apple_id=apple_id)
    try:
        apple_verify.verify(verifier, kind, jws)
        return "accepted"
    except VerificationException as refusal:
        return refusal.status.name


# MARK: - The Google stand-in

class GoogleStandIn:
    """Tests/Clients/google_standin.py as a subprocess in its own folder; commands over its stdin."""

    def __init__(self, directory, seeded):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "purchases.json"), "w") as f:
            json.dump(seeded, f, indent=1)
        self.errors = open(os.path.join(directory, "standin.err"), "w")
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "google_standin.py"), "--dir", directory, "--package-name", PACKAGE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True, bufsize=1)
        self.lock = threading.Lock()
        line = self.process.stdout.readline()
        if not line.strip().isdigit():
            raise SetupError(f"google_standin.py printed {line!r} instead of its port; see {directory}/standin.err")
        self.port = int(line)

    @property
    def url(self):
        return f"https://127.0.0.1:{self.port}"

    def command(self, request):
        with self.lock:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        if not line:
            raise SetupError("google_standin.py stopped answering")
        answer = json.loads(line)
        if "error" in answer:
            raise SetupError(f"google_standin.py refused {request.get('op')}: {answer}")
        return answer

    def state(self):
        return self.command({"op": "state"})

    def mint(self, **overrides):
        """An OIDC token of the push subscription, with `overrides` of its claims (None removes one)."""
        now = int(time.time())
        claims = {"iss": "https://accounts.google.com", "aud": PUSH_AUDIENCE, "email": PUSH_ACCOUNT,
                  "email_verified": True, "sub": "109876543210987654321", "azp": "109876543210987654321",
                  "iat": now - 10, "exp": now + 3590}
        request = {"op": "mint"}
        for name in ("key", "kid", "alg"):
            if name in overrides:
                request[name] = overrides.pop(name)
        for name, value in overrides.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        request["claims"] = claims
        return self.command(request)["token"]

    def put_subscription(self, token, purchase):
        self.command({"op": "put", "kind": "subscription", "token": token, "purchase": purchase})

    def put_product(self, product_id, token, purchase):
        self.command({"op": "put", "kind": "product", "productId": product_id, "token": token, "purchase": purchase})

    def void(self, token, order, product_type):
        """Google takes the purchase back: its Voided Purchases API lists it from now on."""
        self.command({"op": "void", "purchaseToken": token, "orderId": order, "productType": product_type})

    def stop(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.terminate()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        self.errors.close()


def google_product(order, when, account=None):
    purchase = {"kind": "androidpublisher#productPurchase", "purchaseTimeMillis": str(int(when * 1000)),
                "purchaseState": 0, "consumptionState": 0, "developerPayload": "", "orderId": order,
                "acknowledgementState": 0, "regionCode": "ES", "quantity": 1}
    if account:
        purchase["obfuscatedExternalAccountId"] = account
    return purchase


def google_subscription(product, order, start, expiry, account=None, state="SUBSCRIPTION_STATE_ACTIVE",
                        acknowledged=False):
    purchase = {"kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "ES", "startTime": rfc3339(start),
                "subscriptionState": state, "latestOrderId": order,
                "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" if acknowledged
                else "ACKNOWLEDGEMENT_STATE_PENDING",
                "lineItems": [{"productId": product, "expiryTime": rfc3339(expiry),
                               "autoRenewingPlan": {"autoRenewEnabled": state == "SUBSCRIPTION_STATE_ACTIVE",
                                                    "recurringPrice": {"currencyCode": "EUR", "units": "4", "nanos": 990000000}},
                               "offerDetails": {"basePlanId": "mensual"}}]}
    if account:
        purchase["externalAccountIdentifiers"] = {"obfuscatedExternalAccountId": account}
    return purchase


def push_body(notification, message_id=None):
    return json.dumps({
        "message": {"data": base64.b64encode(json.dumps(notification).encode()).decode(),
                    "messageId": message_id or str(int(time.time() * 1e6)) + uuid.uuid4().hex[:6],
                    "publishTime": rfc3339(time.time())},
        "subscription": "projects/kiosk-test/subscriptions/play-notifications"}).encode()


def developer_notification(kind, body):
    return {"version": "1.0", "packageName": PACKAGE, "eventTimeMillis": str(int(time.time() * 1000)), kind: body}


# MARK: - The instances

class Instance:
    def __init__(self, index, log):
        self.index, self.log, self.process, self.port, self.offset = index, log, None, None, 0


class Kiosk:
    def __init__(self, binary, workdir, database, count):
        self.binary = os.path.abspath(binary)
        self.workdir = os.path.abspath(workdir)
        self.postgres = crash_check.is_postgres(database)
        self.database = database if self.postgres else os.path.abspath(database)
        self.editions = os.path.join(self.workdir, "Editions")
        self.config = os.path.join(self.workdir, "kiosk.yaml")
        self.instances = [Instance(i, os.path.join(self.workdir, f"instance-{i}.log")) for i in range(count)]
        self.environment = {**os.environ, "KIOSK_SECRET": SECRET}
        self.clients = {}
        self.lock = threading.Lock()
        # What the stores and apps were answered for, for crash_check.purchase_problems: "notice" STORE:ID answered
        # 200, "purchase" STORE:ORIGINAL_ID answered to an app; also written, one "kind value" a line, to
        # answers.log (crash_check.py's LOG), as each answer arrives.
        self.seen = {"notice": set(), "purchase": set()}
        self.answers = os.path.join(self.workdir, "answers.log")
        open(self.answers, "w").close()

    def note(self, kind, name):
        with self.lock:
            self.seen[kind].add(name)
            with open(self.answers, "a") as f:
                f.write(f"{kind} {name}\n")

    def write_configuration(self, apple_root, google):
        """Config/kiosk.yaml with this run's database, editions and Samples, the stores and what the apps sell
        (edited as text, values in YAML's JSON flow style, as cluster.py does: no YAML package needed)."""
        with open(os.path.join(ROOT, "Config", "kiosk.yaml")) as f:
            text = f.read()
        for name, value in (("database", self.database), ("editions", self.editions),
                            ("samples", os.path.join(ROOT, "Samples")), ("purchase_checks_per_minute", 0)):
            text, count = re.subn(rf"(?m)^(\s*){name}: .*$", lambda m: f"{m.group(1)}{name}: {json.dumps(value)}", text,
                                  count=1)
            if count != 1:
                raise SetupError(f"Config/kiosk.yaml no longer has {name}: update purchases.py")
        stores = {
            "anonymous_device_limit": DEVICE_LIMIT,
            "apple": {"root_certificates": [apple_root]},
            "google": {"service_account_file": os.path.join(google.directory, "service_account.json"),
                       "api_base_url": google.url, "token_url": google.url + "/token",
                       "signing_keys_url": google.url + "/oauth2/v3/certs", "push_audience": PUSH_AUDIENCE,
                       "push_service_account": PUSH_ACCOUNT,
                       "ca_certificates": os.path.join(google.directory, "ca.pem")},
        }
        sells = {
            APP: {"store": {"apple": {"bundle_id": BUNDLE, "app_apple_id": APPLE_ID, "environments": ["Production", "Sandbox"]},
                            "google": {"package_name": PACKAGE}},
                  "products": [{"id": ISSUE, "kind": "issue"},
                               {"id": PACK, "kind": "credits", "credits": 2},
                               {"id": MONTHLY, "kind": "subscription", "scope": "period"},
                               {"id": ALL2, "kind": "subscription", "scope": "all", "editions": [2]}]},
            OTHER_APP: {"store": {"apple": {"bundle_id": OTHER_BUNDLE, "app_apple_id": OTHER_APPLE_ID,
                                            "environments": ["Production"]}},
                        "products": [{"id": OTHER_ISSUE, "kind": "issue"}]},
        }
        if re.search(r"(?m)^stores:", text):
            raise SetupError("Config/kiosk.yaml has a stores section now: update purchases.py's write_configuration")
        for key, entries in sells.items():
            match = re.search(rf"(?m)^(\s*)- key: {re.escape(key)}\b.*$", text)
            if not match:
                raise SetupError(f"Config/kiosk.yaml no longer has the app {key}: update purchases.py")
            indent = match.group(1) + "  "
            text = text[:match.end()] + "".join(f"\n{indent}{name}: {json.dumps(value)}" for name, value in entries.items()) \
                + text[match.end():]
        text += "\nstores: " + json.dumps(stores) + "\n"
        with open(self.config, "w") as f:
            f.write(text)

    def start(self):
        os.makedirs(self.editions, exist_ok=True)
        first, rest = self.instances[0], self.instances[1:]
        self.launch(first)
        self.wait_listening(first)
        for instance in rest:
            self.launch(instance)
        for instance in rest:
            self.wait_listening(instance)
        for instance in self.instances:
            deadline = time.time() + 60
            while True:
                answer = outcome(lambda: self.client(instance.index).call("epquiosc.getEdicions", APP, ""))
                if answer[0] != "ok":
                    raise SetupError(f"instance {instance.index} answered its first call with {describe(answer)}")
                listed = {int(e["id"]) for e in answer[1]}
                if {1, 2, 8} <= listed:
                    break
                if time.time() > deadline:
                    raise SetupError(f"instance {instance.index} lists editions {sorted(listed)}: the Samples were not published")
                time.sleep(0.2)

    def launch(self, instance):
        with open(instance.log, "a") as log:
            log.write(f"\n==== purchases.py: starting instance {instance.index} at {time.time():.3f}\n")
            instance.offset = log.tell()
            instance.process = subprocess.Popen(
                [self.binary, "serve", "--config", self.config, "--database", self.database, "--editions", self.editions,
                 "--host", "127.0.0.1", "--port", "0"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.environment, cwd=self.workdir,
                start_new_session=True)   # its own process group: a crash's swift-backtrace is stopped with it

    def wait_listening(self, instance, timeout=90):
        deadline = time.time() + timeout
        pattern = re.compile(r"rpc=https?://[^ ]+:(\d+)/RPC2")
        while time.time() < deadline:
            with open(instance.log, errors="replace") as f:
                f.seek(instance.offset)
                match = pattern.search(f.read())
            if match:
                instance.port = int(match.group(1))
                return
            if instance.process.poll() is not None:
                with open(instance.log, errors="replace") as f:
                    tail = "".join(f.readlines()[-15:])
                raise SetupError(f"instance {instance.index} exited with {instance.process.returncode} before listening; "
                                 f"its log ends: {tail}")
            time.sleep(0.05)
        raise SetupError(f"instance {instance.index} did not listen within {timeout} s; see {instance.log}")

    def kill(self, index):
        """kill -9 of instance `index` (its process group: a crash's backtracer too); its exit status."""
        instance = self.instances[index]
        os.killpg(instance.process.pid, signal.SIGKILL)
        instance.process.wait(timeout=30)
        return instance.process.returncode

    def restart(self, index, timeout=90):
        """Starts instance `index` again (a new port) and waits until it answers getEdicions; the kept
        connections to it (to its old port) are dropped."""
        instance = self.instances[index]
        with self.lock:
            for key in [key for key in self.clients if key[1] == instance.index]:
                self.clients.pop(key)[0].close()
        self.launch(instance)
        self.wait_listening(instance, timeout)
        deadline = time.time() + timeout
        while True:
            client = Client(instance.port, timeout=30)
            answer = outcome(lambda: client.call("epquiosc.getEdicions", APP, ""))
            client.close()
            if answer[0] == "ok" and {1, 2, 8} <= {int(e["id"]) for e in answer[1]}:
                return
            if time.time() > deadline:
                raise SetupError(f"instance {index} restarted but answers getEdicions with "
                                 f"{describe(answer) if answer[0] != 'ok' else answer[1]}; see {instance.log}")
            time.sleep(0.1)

    def cli(self, *arguments, stdin=None):
        result = subprocess.run([self.binary, *arguments[:2], "--config", self.config, "--database", self.database,
                                 "--editions", self.editions, *arguments[2:]],
                                input=stdin, capture_output=True, text=True, timeout=120, env=self.environment,
                                cwd=self.workdir)
        if result.returncode != 0:
            raise SetupError(f"KioskServer {' '.join(arguments[:2])} failed ({result.returncode}): {result.stderr.strip()[-1500:]}")
        return result.stdout

    def client(self, index):
        """The kept connection of this thread to instance `index` (modulo the count); one idle for a while is
        closed first (the server closes idle connections: server.idle_timeout_seconds)."""
        instance = self.instances[index % len(self.instances)]
        key = (threading.get_ident(), instance.index)
        with self.lock:
            kept = self.clients.get(key)
            if kept and time.monotonic() - kept[1] > 15:
                kept[0].close()
                kept = None
            if not kept:
                kept = (Client(instance.port, timeout=60), 0)
            self.clients[key] = (kept[0], time.monotonic())
            return kept[0]

    def rpc(self, index, method, *params):
        return outcome(lambda: self.client(index).call(method, *params))

    def post(self, index, path, body, headers=None, answer_headers=None):
        """(status, body text) of a POST without the API's credentials, as the stores send it; or
        ("network", text) when the connection failed. `answer_headers`, a dict, gets the answer's headers."""
        instance = self.instances[index % len(self.instances)]
        client = Client(instance.port, timeout=60, auth=None)
        try:
            status, received, data = client.request("POST", path, body,
                                                    {"Content-Type": "application/json", **(headers or {})}, auth=False)
            if answer_headers is not None:
                answer_headers.update({k.lower(): v for k, v in received.items()})
            return status, data.decode(errors="replace").strip()
        except OSError as error:
            return "network", f"{type(error).__name__}: {error}"
        finally:
            client.close()

    def stop(self):
        """Stops the instances (SIGTERM); what went wrong doing so, e.g. an instance that crashed on its way out."""
        problems = []
        for client, _ in self.clients.values():
            client.close()
        running = [i for i in self.instances if i.process and i.process.poll() is None]
        for instance in self.instances:
            if instance.process and instance not in running:
                problems.append(f"instance {instance.index} had already exited with {instance.process.returncode}; "
                                f"see {instance.log}")
        for instance in running:
            instance.process.send_signal(signal.SIGTERM)
        for instance in running:
            try:
                instance.process.wait(timeout=15)
                outcome_ = f"exited with {instance.process.returncode}" if instance.process.returncode != 0 else None
            except subprocess.TimeoutExpired:
                instance.process.kill()
                instance.process.wait()
                outcome_ = "did not stop within 15 s"
            if outcome_:
                with open(instance.log, errors="replace") as f:
                    f.seek(instance.offset)
                    fatal = [line.strip() for line in f if "Fatal error" in line][:1]
                problems.append(f"instance {instance.index} {outcome_} on SIGTERM, expected a clean stop (exit 0)"
                                f"{': ' + fatal[0] if fatal else ''}; see {instance.log}")
        for instance in self.instances:
            if instance.process:
                try:
                    os.killpg(instance.process.pid, signal.SIGKILL)   # what it left behind (a crash's backtracer)
                except (ProcessLookupError, PermissionError):
                    pass
        return problems


# MARK: - Reading the database

class Session(crash_check.Database):
    """crash_check.Database, with PostgreSQL read through one psql session instead of one psql per query
    (crash_check.purchase_problems reads each purchase's payments and devices: hundreds of psql runs)."""

    def __init__(self, database):
        super().__init__(database)
        if self.postgres:
            self.errors = tempfile.TemporaryFile("w+")
            self.psql = subprocess.Popen(
                ["psql", "-X", "-A", "-t", "-q", "-P", "null=\\N", "-F", "|", "-d", database],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True, bufsize=1,
                env={**os.environ, "PGCONNECT_TIMEOUT": os.environ.get("PGCONNECT_TIMEOUT", "10")})

    def rows(self, sql):
        if not self.postgres:
            return super().rows(sql)
        marker = f"--end-{uuid.uuid4().hex}--"
        try:
            self.psql.stdin.write(sql.strip().rstrip(";") + ";\n\\echo " + marker + " :ERROR\n")
            self.psql.stdin.flush()
        except OSError as error:
            raise RuntimeError(f"psql stopped: {error}") from error
        lines = []
        for line in self.psql.stdout:
            line = line.rstrip("\n")
            if line.startswith(marker):
                if line != marker + " false":
                    self.errors.seek(0)
                    said = self.errors.read().strip()[-500:]
                    self.errors.seek(0)
                    self.errors.truncate()
                    raise RuntimeError(f"psql failed on {sql!r}: {said}")
                return [tuple(None if value == "\\N" else value for value in line.split("|")) for line in lines if line]
            lines.append(line)
        raise RuntimeError(f"psql ended while reading {sql!r}")

    def close(self):
        if not self.postgres:
            return super().close()
        try:
            self.psql.stdin.close()
            self.psql.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.psql.kill()
            self.psql.wait()
        self.errors.close()


def answers_seen(path):
    """The answers log as crash_check.check reads it: a Counter per kind."""
    seen = collections.defaultdict(collections.Counter)
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                seen[parts[0]][parts[1]] += 1
    return seen


# MARK: - The reader's app

class Device:
    """One device of the app: its key, its identity key once registered, the reader signed in on it."""

    def __init__(self, kiosk, key, app=APP, instance=0):
        self.kiosk, self.key, self.app, self.instance = kiosk, key, app, instance
        self.iden = None
        self.user = ""

    def register(self, user="", instance=None):
        result = self.kiosk.rpc(self.instance if instance is None else instance, "epusuaris.registrar", self.app, self.key,
                                user, PASSWORD if user else "", {"model": "iPhone15,2", "os": "18.1"}, "ios")
        if result[0] != "ok":
            raise SetupError(f"registrar of {self.key} ({user or 'anonymous'}) answered {describe(result)}")
        self.iden, self.user = result[1]["iden_key"], user
        return result[1]

    def products(self, instance=None):
        return self.kiosk.rpc(self.instance if instance is None else instance, "epquiosc.getProductes", self.app, self.iden)

    def compte(self):
        result = self.products()
        if result[0] != "ok":
            raise SetupError(f"getProductes for {self.key} answered {describe(result)}")
        return result[1]["compte"]

    def buy(self, store, compra, issue=None, instance=None):
        edition, date = issue if issue else (0, "")
        result = self.kiosk.rpc(self.instance if instance is None else instance, "epusuaris.registrarCompra", self.app,
                                self.key, self.iden, store, compra, edition, date)
        if result[0] == "ok":
            self.kiosk.note("purchase", purchase_name(store, compra))
        return result

    def restore(self, store, compres, instance=None):
        result = self.kiosk.rpc(self.instance if instance is None else instance, "epusuaris.restaurarCompres", self.app,
                                self.key, self.iden, store, compres)
        if result[0] == "ok" and len(result[1].get("compres", [])) == len(compres):
            for compra in compres:
                self.kiosk.note("purchase", purchase_name(store, compra))
        return result

    def spend(self, issue, instance=None):
        return self.kiosk.rpc(self.instance if instance is None else instance, "epusuaris.bescanviarCredit", self.app,
                              self.key, self.iden, issue[0], issue[1])

    def open(self, issue, instance=None):
        return self.kiosk.rpc(self.instance if instance is None else instance, "epquiosc.getEdicio", self.app, self.iden,
                              issue[0], issue[1], "0", "ios")

    def registration(self, instance=None):
        """registrar's answer for this device as it is signed in now."""
        return self.register(self.user, instance)


def purchase_name(store, compra):
    """STORE:ORIGINAL_ID of what an app sends: Apple's originalTransactionId, Google's purchase token."""
    if store == "google":
        return f"google:{compra['token']}"
    return "apple:" + jwt.decode(compra, options={"verify_signature": False})["originalTransactionId"]


def editions_of(answer):
    """registrar's `edicions` as {edition id: fins}."""
    listed = answer.get("edicions", {}) if isinstance(answer, dict) else {}
    return {int(key): value.get("fins", "") for key, value in listed.items()}


def compra_of(result):
    return result[1].get("compra") if result[0] == "ok" and isinstance(result[1], dict) else None


# MARK: - Scenarios

class Scenario:
    def __init__(self, name):
        self.name = name
        self.report = {}
        self.violations = []

    def expect(self, condition, message):
        if not condition:
            self.violations.append(f"{self.name}: {message}")
        return condition


class Driver:
    def __init__(self, kiosk, google, apple, foreign, dates):
        self.kiosk, self.google, self.apple_ca, self.foreign = kiosk, google, apple, foreign
        self.unmarked_leaf = apple.chain(True, False)
        self.unmarked_intermediate = apple.chain(False, True)
        self.dates = dates
        self.apple = AppleStore(apple, dates)
        self.other_apple = AppleStore(apple, dates, bundle=OTHER_BUNDLE, apple_id=OTHER_APPLE_ID)
        self.now = time.time()
        self.serial = 0
        self.lock = threading.Lock()

    @property
    def count(self):
        return len(self.kiosk.instances)

    def ids(self, prefix):
        with self.lock:
            self.serial += 1
            return f"{prefix}{2000000000000 + self.serial}"

    def device(self, key, user="", instance=0, app=APP):
        device = Device(self.kiosk, key, app=app, instance=instance)
        device.register(user)
        return device

    # Expectations shared by the scenarios

    def expect_access(self, s, device, expected, when):
        """getEdicio on every instance: True, a zip link; False, fault 5."""
        seen = {}
        for issue, allowed in expected.items():
            for index in range(self.count):
                result = device.open(issue, instance=index)
                if result[0] == "ok" and str(result[1].get("zip", "")).startswith("http"):
                    got = True
                elif result == ("fault", 5):
                    got = False
                else:
                    s.expect(False, f"{when}: getEdicio {issue_name(issue)} for {device.key} on instance {index} answered "
                                    f"{describe(result)}, expected {'a zip link' if allowed else 'fault 5'}")
                    continue
                seen[f"{issue_name(issue)}@{index}"] = got
                s.expect(got == allowed, f"{when}: getEdicio {issue_name(issue)} for {device.key} on instance {index} "
                                         f"{'opens' if got else 'is fault 5'}, expected "
                                         f"{'it to open' if allowed else 'fault 5'}")
        return seen

    def expect_editions(self, s, answer, expected, when):
        got = editions_of(answer)
        s.expect(got == expected, f"{when}: registrar's edicions/fins are {got}, expected {expected}")
        return got

    def expect_ok(self, s, result, when):
        s.expect(result[0] == "ok", f"{when}: answered {describe(result)}, expected success")
        return result[0] == "ok"

    def expect_fault(self, s, result, code, when):
        s.expect(result == ("fault", code), f"{when}: answered "
                                            f"{describe(result) if result[0] != 'ok' else 'success'}, expected fault {code}")

    def expect_compra(self, s, compra, when, **fields):
        if not s.expect(isinstance(compra, dict), f"{when}: no compra in the answer ({compra!r})"):
            return
        for name, value in fields.items():
            s.expect(compra.get(name) == value, f"{when}: compra.{name} is {compra.get(name)!r}, expected {value!r}")

    def post_apple(self, index, jws, app=APP):
        answer = self.kiosk.post(index, f"/store/apple/{app}", json.dumps({"signedPayload": jws}).encode())
        if answer[0] == 200:
            self.kiosk.note("notice", "apple:" + jwt.decode(jws, options={"verify_signature": False})["notificationUUID"])
        return answer

    def post_google(self, index, notification, token="mint", message_id=None, body=None, answer_headers=None):
        headers = {}
        if token == "mint":
            token = self.google.mint()
        if token is not None:
            headers["Authorization"] = "Bearer " + token
        body = body or push_body(notification, message_id)
        answer = self.kiosk.post(index, f"/store/google/{APP}", body, headers, answer_headers)
        if answer[0] == 200:
            message = json.loads(body)["message"]
            # Kiosk keeps a Pub/Sub notice under its message id and a digest of its data.
            digest = hashlib.sha256(base64.b64decode(message.get("data", ""))).digest()[:9]
            self.kiosk.note("notice", "google:" + message["messageId"] + "." + base64.urlsafe_b64encode(digest).decode())
        return answer

    def all_at_once(self, calls):
        """Runs each call in its own thread, released together: (their results in order, whether all of them
        were in flight at one moment)."""
        barrier = threading.Barrier(len(calls))
        results = [None] * len(calls)
        spans = [(0.0, 0.0)] * len(calls)

        def run(i, call):
            try:
                barrier.wait(timeout=30)
                started = time.monotonic()
                results[i] = call()
                spans[i] = (started, time.monotonic())
            except Exception as error:  # noqa: BLE001 - reported as the result
                results[i] = ("error", f"{type(error).__name__}: {error}")
        threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        return results, max(start for start, _ in spans) < min(end for _, end in spans)

    def stored(self, original_id):
        """Whether the database holds the purchase (read directly, as an operator would)."""
        db = crash_check.Database(self.kiosk.database)
        try:
            return int(db.one(f"SELECT count(*) FROM store_purchases WHERE original_id = '{original_id}'")) > 0
        finally:
            db.close()

    def expect_stored_before_settled(self, s, call, token, action, what):
        """Runs `call`; once the stand-in is asked to `action` the purchase `token` (it then waits before it
        answers: `_settle_delay`), the purchase must already be in the database: Google is told of a grant only
        once the grant is committed. Returns the call's result."""
        result = {}
        thread = threading.Thread(target=lambda: result.update(value=call()))
        thread.start()
        seen = None
        deadline = time.time() + 20
        while seen is None and time.time() < deadline and thread.is_alive():
            if any(c["action"] == action and c["segments"][-1] == token for c in self.google.state()["apiCalls"]):
                seen = self.stored(token)
            else:
                time.sleep(0.005)
        thread.join(timeout=60)
        s.expect(seen is not None, f"{what}: the stand-in was not asked to {action} the purchase while the call ran")
        s.expect(seen is not False, f"{what}: when the stand-in was asked to {action} the purchase, the database did not "
                                    f"hold it yet: the store must be told only once the grant is committed")
        return result.get("value", ("error", "the call did not finish"))

    # 0. The payloads are Apple's

    def apple_sanity(self, s):
        """Each kind of JWS this driver signs, as Apple's own library sees it."""
        now = time.time()
        t = self.apple.transaction(tid="1000000000000001", otid="1000000000000001", product=MONTHLY,
                                   purchase=now - 86400, expires=now + 86400, token=str(uuid.uuid4()))
        consumable = self.apple.transaction(tid="1000000000000002", otid="1000000000000002", product=ISSUE,
                                            purchase=now - 60)
        sandbox = self.apple.transaction(tid="1000000000000003", otid="1000000000000003", product=ISSUE,
                                         purchase=now - 60, environment="Sandbox")
        r = self.apple.renewal(otid="1000000000000001", product=MONTHLY, grace_until=now + 86400, retrying=True)
        n = self.apple.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", t, r)
        refund = self.apple.notification("REFUND", None, self.apple.transaction(
            tid="1000000000000001", otid="1000000000000001", product=MONTHLY, purchase=now - 86400, expires=now + 86400,
            revoked=now - 30))
        root = self.apple_ca.root_der
        verdicts = {
            "transaction": apple_library_verdict("transaction", t, root),
            "consumable": apple_library_verdict("transaction", consumable, root),
            "sandbox transaction": apple_library_verdict("transaction", sandbox, root, environment="Sandbox"),
            "renewal info": apple_library_verdict("renewalInfo", r, root),
            "notification": apple_library_verdict("notification", n, root),
            "refund notification": apple_library_verdict("notification", refund, root),
        }
        for name, verdict in verdicts.items():
            s.expect(verdict == "accepted", f"Apple's SignedDataVerifier refuses this driver's {name} ({verdict}): "
                                            f"the test certificate authority or payload is not what Apple signs")
        # And refuses what Kiosk must refuse.
        payload = self.apple.transaction_payload(tid="1000000000000004", otid="1000000000000004", product=ISSUE,
                                                 purchase=now - 60)
        forged = self.apple_ca.sign(payload, key=ec.generate_private_key(ec.SECP256R1()))
        refusals = {
            "forged signature": apple_library_verdict("transaction", forged, root),
            "chain of 2": apple_library_verdict("transaction", self.apple_ca.sign(payload, x5c=self.apple_ca.x5c[:2]), root),
            "foreign root": apple_library_verdict("transaction", self.foreign.sign(payload), root),
            "leaf without Apple's OID": apple_library_verdict(
                "transaction", self.apple_ca.sign_with_chain(payload, self.unmarked_leaf), root),
            "intermediate without Apple's OID": apple_library_verdict(
                "transaction", self.apple_ca.sign_with_chain(payload, self.unmarked_intermediate), root),
            "alg none": apple_library_verdict("transaction", raw_jws({"alg": "none", "x5c": self.apple_ca.x5c}, payload), root),
            "another bundle": apple_library_verdict("transaction", self.apple.transaction(
                tid="1000000000000005", otid="1000000000000005", product=ISSUE, purchase=now - 60, bundle="cat.other.app"), root),
        }
        for name, verdict in refusals.items():
            s.expect(verdict != "accepted", f"Apple's SignedDataVerifier accepts the {name} case, which the test "
                                            f"expects Kiosk to refuse: the case does not test what it says")
        s.report["apple_library"] = {"accepted": verdicts, "refused": refusals}

    # 1. getProductes

    def scenario_products(self, s):
        self.apple_sanity(s)
        reader_ios = self.device("s1-ios", USERS[0], instance=0)
        reader_android = self.device("s1-android", USERS[0], instance=1)
        anon_a, anon_b = self.device("s1-anon-a", instance=0), self.device("s1-anon-b", instance=1)
        answers = {d.key: d.products(instance=i) for i, d in enumerate([reader_ios, reader_android, anon_a, anon_b])}
        for key, result in answers.items():
            self.expect_ok(s, result, f"getProductes for {key}")
        if not all(r[0] == "ok" for r in answers.values()):
            return
        comptes = {key: r[1].get("compte") for key, r in answers.items()}
        s.report["comptes"] = comptes
        for key, compte in comptes.items():
            valid = False
            try:
                valid = str(uuid.UUID(compte)) == compte
            except (ValueError, TypeError, AttributeError):
                pass
            s.expect(valid, f"compte of {key} is {compte!r}, expected a lowercase UUID")
        s.expect(comptes["s1-ios"] == comptes["s1-android"],
                 f"the reader's compte differs between devices: {comptes['s1-ios']} and {comptes['s1-android']}")
        s.expect(comptes["s1-anon-a"] != comptes["s1-anon-b"], "two anonymous devices have the same compte")
        s.expect(comptes["s1-ios"] not in (comptes["s1-anon-a"], comptes["s1-anon-b"]),
                 "the reader's compte is an anonymous device's")
        again = anon_a.products(instance=1)
        s.expect(again[0] == "ok" and again[1].get("compte") == comptes["s1-anon-a"],
                 f"an anonymous device's compte changed between calls / instances: {again}")
        expected = [
            {"id": ISSUE, "id_apple": ISSUE, "id_google": ISSUE, "tipus": "issue", "edicions": [], "credits": "0", "abast": ""},
            {"id": PACK, "id_apple": PACK, "id_google": PACK, "tipus": "credits", "edicions": [], "credits": "2", "abast": ""},
            {"id": MONTHLY, "id_apple": MONTHLY, "id_google": MONTHLY, "tipus": "subscription", "edicions": ["1", "2"],
             "credits": "0", "abast": "period"},
            {"id": ALL2, "id_apple": ALL2, "id_google": ALL2, "tipus": "subscription", "edicions": ["2"], "credits": "0",
             "abast": "all"},
        ]
        for key, result in answers.items():
            s.expect(result[1].get("productes") == expected,
                     f"getProductes for {key} lists {result[1].get('productes')}, expected {expected}")
        self.expect_fault(s, self.kiosk.rpc(0, "epquiosc.getProductes", APP, "not-a-key"), 2, "getProductes with a forged key")
        self.expect_fault(s, self.kiosk.rpc(0, "epquiosc.getProductes", "nosuchapp", reader_ios.iden), 1,
                          "getProductes of an unknown app")
        self.expect_fault(s, self.kiosk.rpc(0, "epquiosc.getProductes", OTHER_APP, reader_ios.iden), 2,
                          "getProductes of another app with quiosc's key")

    # 2. An issue

    def scenario_issue(self, s):
        reader = self.device("s2-ios", USERS[1], instance=0)
        compte = reader.compte()
        before = self.expect_access(s, reader, {I1A: False, I1B: False, I2: False, F8: True}, "before buying")
        tid = self.ids("2")
        jws = self.apple.transaction(tid=tid, otid=tid, product=ISSUE, purchase=time.time() - 120, token=compte)
        # An issue product must name its issue; refused whole, nothing kept.
        self.expect_fault(s, reader.buy("apple", jws), -32602, "registrarCompra of an issue product without edicio_id/data")
        self.expect_fault(s, reader.buy("apple", jws, (1, "2024-01-01")), 4, "registrarCompra naming an unpublished issue")
        self.expect_fault(s, reader.buy("apple", jws, (5, "2025-06-01")), 3, "registrarCompra naming an edition the app does not offer")
        first = reader.buy("apple", jws, I1A, instance=1)
        if not self.expect_ok(s, first, "registrarCompra of the issue purchase"):
            return
        expected_compra = {"producte": ISSUE, "tipus": "issue", "estat": "activa", "fins": "", "credits": "0",
                           "exemplars": [{"edicio_id": "1", "data": I1A[1]}]}
        self.expect_compra(s, compra_of(first), "the issue purchase", **expected_compra)
        self.expect_editions(s, first[1], {8: ""}, "after buying an issue")
        access = self.expect_access(s, reader, {I1A: True, I1B: False, I2: False}, "after buying 1/2025-06-01")
        again = []
        for n in range(5):
            # The same transaction again, naming another issue: ignored once the purchase has its issue.
            result = reader.buy("apple", jws, I1B if n % 2 else I1A, instance=n)
            again.append(describe(result) if result[0] != "ok" else "ok")
            s.expect(result[0] == "ok" and result[1] == first[1],
                     f"registering the issue purchase again (#{n + 2}, instance {n % self.count}) answered "
                     f"{result[1] if result[0] == 'ok' else describe(result)}, expected the first answer {first[1]}")
        other_device = self.device("s2-android", USERS[1], instance=1)
        self.expect_access(s, other_device, {I1A: True, I1B: False, I2: False}, "the reader's other device")
        self.expect_access(s, reader, {I1A: True, I1B: False, I2: False}, "after registering it 6 times")
        # A device of another reader does not open it.
        stranger = self.device("s2-stranger", USERS[2], instance=0)
        self.expect_access(s, stranger, {I1A: False}, "another reader")
        s.report.update({"before": before, "after": access, "again": again})

    # 3. A pack of 2, in Google Play

    def scenario_pack(self, s):
        device = self.device("s3-android", instance=1)
        token = "gpack-s3-purchase-token-0001"
        state0 = self.google.state()
        first = self.expect_stored_before_settled(
            s, lambda: device.buy("google", {"producte": PACK, "token": token}, instance=0), token, "consume",
            "registrarCompra of the Google pack")
        if not self.expect_ok(s, first, "registrarCompra of the Google pack"):
            return
        self.expect_compra(s, compra_of(first), "the pack", producte=PACK, tipus="credits", estat="activa", fins="",
                           credits="2", exemplars=[])
        state1 = self.google.state()
        calls = state1["apiCalls"][len(state0["apiCalls"]):]
        gets = [i for i, c in enumerate(calls) if c["method"] == "GET" and c["segments"][-1] == token]
        consumes = [i for i, c in enumerate(calls) if c["action"] == "consume" and c["segments"][-1] == token]
        s.expect(gets and consumes and consumes[0] > gets[0],
                 f"the Play Developer API calls for the pack were {calls}: expected the purchase read, then consumed")
        consumed = [c for c in state1["consumed"] if c["token"] == token]
        s.expect(len(consumed) == 1, f"the stand-in recorded {len(consumed)} consumptions of the pack once registered, expected 1")
        self.expect_access(s, device, {I1A: False, I1B: False, I2: False}, "a pack with no credit spent")
        spent = []
        for n, issue in enumerate((I1A, I2)):
            result = device.spend(issue, instance=n)
            spent.append(describe(result) if result[0] != "ok" else compra_of(result))
            if self.expect_ok(s, result, f"bescanviarCredit {issue_name(issue)} (credit {n + 1} of 2)"):
                self.expect_compra(s, compra_of(result), f"after spending credit {n + 1}", producte=PACK, credits=str(1 - n))
        self.expect_access(s, device, {I1A: True, I2: True, I1B: False}, "after spending both credits")
        third = device.spend(I1B, instance=0)
        self.expect_fault(s, third, 5, "bescanviarCredit with no credit left")
        again = device.spend(I1A, instance=1)
        if self.expect_ok(s, again, "bescanviarCredit on an issue the pack already opened"):
            self.expect_compra(s, compra_of(again), "spending again on an opened issue", credits="0",
                               exemplars=[{"edicio_id": "1", "data": I1A[1]}, {"edicio_id": "2", "data": I2[1]}])
        free = device.spend(F8, instance=0)
        if self.expect_ok(s, free, "bescanviarCredit on a free issue"):
            self.expect_compra(s, compra_of(free), "spending on a free issue", credits="0")
        self.expect_access(s, device, {I1A: True, I2: True, I1B: False}, "after the refused third credit")
        # Registered again on every instance: the same pack, nothing consumed twice, no credit back.
        for index in range(self.count):
            result = device.buy("google", {"producte": PACK, "token": token}, instance=index)
            if self.expect_ok(s, result, f"registering the pack again on instance {index}"):
                self.expect_compra(s, compra_of(result), f"the pack registered again on instance {index}", credits="0",
                                   exemplars=[{"edicio_id": "1", "data": I1A[1]}, {"edicio_id": "2", "data": I2[1]}])
        consumed = [c for c in self.google.state()["consumed"] if c["token"] == token]
        s.expect(len(consumed) == 1, f"the stand-in recorded {len(consumed)} consumptions of the pack, expected 1")
        # A pack bought for another account: fault 9, and Google is not told it was granted.
        foreign_token = "gpack-s3-foreign-token-0002"
        self.google.put_product(PACK, foreign_token, google_product("GPA.3300-0000-0003-00002", time.time() - 60,
                                                                    account=str(uuid.uuid4())))
        self.expect_fault(s, device.buy("google", {"producte": PACK, "token": foreign_token}), 9,
                          "registrarCompra of a pack bought for another account")
        self.expect_fault(s, device.buy("google", {"producte": PACK, "token": "gpack-unknown-token"}), 8,
                          "registrarCompra of a purchase token Google does not know")
        self.expect_fault(s, device.buy("google", {"producte": "cat.elpunt.quiosc.nosuch", "token": token}), 8,
                          "registrarCompra of a product the app does not sell")
        state2 = self.google.state()
        s.expect(not [c for c in state2["consumed"] if c["token"] == foreign_token],
                 "the pack bought for another account was consumed although it was refused")
        # No pack at all: fault 5.
        packless = self.device("s3-packless", instance=0)
        self.expect_fault(s, packless.spend(I1A), 5, "bescanviarCredit without any pack")
        # Google unavailable (5xx, 429): fault 10 and HTTP 503 with Retry-After, never a refusal; nothing kept.
        for status in (503, 429, 500):
            busy = f"gpack-s3-busy-{status}"
            self.google.put_product(PACK, busy, dict(google_product(f"GPA.3300-0000-0003-{status}", time.time() - 60),
                                                     _status=status))
            self.expect_fault(s, device.buy("google", {"producte": PACK, "token": busy}), 10,
                              f"registrarCompra while Google answers {status}")
            subscription = f"gsub-s3-busy-{status}"
            self.google.put_subscription(subscription, {"_status": status})
            headers = {}
            answer = self.post_google(status % self.count, developer_notification("subscriptionNotification", {
                "version": "1.0", "notificationType": 2, "purchaseToken": subscription}), answer_headers=headers)
            s.expect(answer[0] == 503 and headers.get("retry-after"),
                     f"a push while Google answers {status} was answered {answer} with Retry-After "
                     f"{headers.get('retry-after')!r}, expected 503 with Retry-After (Pub/Sub sends it again)")
            s.expect(not self.stored(busy) and not self.stored(subscription),
                     f"a purchase Google could not be asked about ({status}) was stored")
        s.report.update({"spent": spent, "consumed": consumed, "api_calls": len(state2["apiCalls"])})

    # 4. A subscription and its renewals

    def scenario_renewals(self, s):
        ios = self.device("s4-ios", USERS[3], instance=0)
        android = self.device("s4-android", USERS[3], instance=1)
        compte = ios.compte()
        otid = self.ids("4")
        p1, e1 = at("2025-05-01T00:00:00"), at("2025-06-01T12:00:00")
        p2, e2 = e1, at("2025-06-02T12:00:00")
        now = time.time()
        grace = now + 2 * 86400
        p3, e3 = now - 86400, now + 30 * 86400
        t1_id, t2_id, t3_id = otid, self.ids("4"), self.ids("4")
        t1 = dict(tid=t1_id, otid=otid, product=MONTHLY, purchase=p1, expires=e1, token=compte)
        t2 = dict(tid=t2_id, otid=otid, product=MONTHLY, purchase=p2, expires=e2, token=compte, original_purchase=p1)
        t3 = dict(tid=t3_id, otid=otid, product=MONTHLY, purchase=p3, expires=e3, token=compte, original_purchase=p1)
        first_jws = self.apple.transaction(**t1)
        registered = ios.buy("apple", first_jws, instance=1)
        steps = []

        def check(when, estat, fins, access, outcome_=None):
            answer = ios.buy("apple", first_jws, instance=len(steps))
            record = {"step": when, "notification": outcome_}
            if self.expect_ok(s, answer, f"{when}: registrarCompra (reading the subscription)"):
                self.expect_compra(s, compra_of(answer), when, producte=MONTHLY, tipus="subscription", estat=estat,
                                   **({"fins": fins} if fins is not None else {}))
                record["compra"] = {k: compra_of(answer).get(k) for k in ("estat", "fins")}
                covered = {1: fins, 2: fins, 8: ""} if estat != "revocada" else {8: ""}
                self.expect_editions(s, answer[1], covered, when)
            expected = dict(zip(PAID, access))
            record["ios"] = self.expect_access(s, ios, expected, when)
            record["android"] = self.expect_access(s, android, {I1A: access[0], I1B: access[1]}, when + " (other device)")
            steps.append(record)

        if not self.expect_ok(s, registered, "registrarCompra of the subscription's first transaction"):
            return
        self.expect_compra(s, compra_of(registered), "the first transaction", producte=MONTHLY, tipus="subscription",
                           estat="caducada", fins="2025-06-01", credits="0", exemplars=[])
        check("registered (2025-05-01 to 2025-06-01 12:00)", "caducada", "2025-06-01", (True, False, False))

        def notify(kind, subtype, transaction, renewal, expect_applied=True):
            jws = self.apple.notification(kind, subtype, self.apple.transaction(**transaction),
                                          self.apple.renewal(**renewal) if renewal else None)
            status, body = self.post_apple(len(steps), jws)
            allowed = ("applied",) if expect_applied else ("applied", "recorded")
            s.expect(status == 200 and body in allowed,
                     f"{kind} {subtype or ''} answered {status} {body!r}, expected 200 {' or '.join(allowed)}")
            return f"{status} {body}"

        base = dict(otid=otid, product=MONTHLY, token=compte)
        o = notify("SUBSCRIBED", "INITIAL_BUY", t1, dict(base), expect_applied=False)
        check("SUBSCRIBED", "caducada", "2025-06-01", (True, False, False), o)
        o = notify("DID_FAIL_TO_RENEW", "GRACE_PERIOD", t1, dict(base, grace_until=grace, retrying=True))
        check("DID_FAIL_TO_RENEW GRACE_PERIOD (grace for 2 days from now)", "activa", day(grace - 1), (True, True, True), o)
        o = notify("GRACE_PERIOD_EXPIRED", None, t1, dict(base, retrying=True))
        check("GRACE_PERIOD_EXPIRED", "caducada", "2025-06-01", (True, False, False), o)
        o = notify("DID_RENEW", "BILLING_RECOVERY", t2, dict(base))
        check("DID_RENEW (paid to 2025-06-02 12:00)", "caducada", "2025-06-02", (True, True, True), o)
        o = notify("EXPIRED", "VOLUNTARY", t2, dict(base, auto_renew=False), expect_applied=False)
        check("EXPIRED: a period subscription keeps the issues paid", "caducada", "2025-06-02", (True, True, True), o)
        o = notify("SUBSCRIBED", "RESUBSCRIBE", t3, dict(base))
        check("SUBSCRIBED RESUBSCRIBE (paid until 30 days from now)", "activa", day(e3 - 1), (True, True, True), o)
        refunded_at = time.time() - 5
        o = notify("REFUND", None, dict(t3, revoked=refunded_at), dict(base, auto_renew=False))
        check("REFUND of the latest payment", "revocada", None, (False, False, False), o)
        o = notify("REFUND_REVERSED", None, t3, dict(base))
        check("REFUND_REVERSED", "activa", day(e3 - 1), (True, True, True), o)
        s.report["steps"] = steps

    # 5. Duplicates and order

    def scenario_duplicates(self, s):
        x = self.device("s5-x", USERS[4], instance=0)
        y = self.device("s5-y", USERS[5], instance=1)
        p1, e1 = at("2025-05-01T00:00:00"), at("2025-06-01T12:00:00")
        e2 = at("2025-06-02T12:00:00")
        grace = time.time() + 2 * 86400
        plans = {}
        for device in (x, y):
            compte = device.compte()
            otid = self.ids("5")
            t1 = dict(tid=otid, otid=otid, product=MONTHLY, purchase=p1, expires=e1, token=compte)
            t2 = dict(tid=self.ids("5"), otid=otid, product=MONTHLY, purchase=e1, expires=e2, token=compte,
                      original_purchase=p1)
            registered = device.buy("apple", self.apple.transaction(**t1))
            self.expect_ok(s, registered, f"registrarCompra of {device.key}'s subscription")
            base = dict(otid=otid, product=MONTHLY, token=compte)
            # Signed in this order: the grace, the renewal that ends it, the expiry.
            grace_n = self.apple.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", self.apple.transaction(**t1),
                                              self.apple.renewal(**base, grace_until=grace, retrying=True))
            renew_n = self.apple.notification("DID_RENEW", "BILLING_RECOVERY", self.apple.transaction(**t2),
                                              self.apple.renewal(**base))
            expire_n = self.apple.notification("EXPIRED", "VOLUNTARY", self.apple.transaction(**t2),
                                               self.apple.renewal(**base, auto_renew=False))
            plans[device.key] = (grace_n, renew_n, expire_n)
        grace_n, renew_n, expire_n = plans["s5-x"]
        # The same notification 5 times, one instance after the other.
        answers = [self.post_apple(n, grace_n) for n in range(5)]
        s.expect(answers[0] == (200, "applied") and all(a == (200, "duplicate") for a in answers[1:]),
                 f"the same notification 5 times answered {answers}, expected 200 applied then 4 times 200 duplicate")
        self.expect_access(s, x, {I1B: True}, "in grace")
        # Another, 10 times at once on every instance.
        together, overlapped = self.all_at_once([lambda n=n: self.post_apple(n, renew_n) for n in range(10)])
        s.report["together_overlapped"] = overlapped
        applied = sum(1 for a in together if a == (200, "applied"))
        duplicates = sum(1 for a in together if a == (200, "duplicate"))
        s.expect(applied == 1 and duplicates == 9,
                 f"the same notification 10 times at once answered {together}: expected one applied, 9 duplicate")
        last = self.post_apple(1, expire_n)
        s.expect(last[0] == 200 and last[1] in ("applied", "recorded"), f"EXPIRED answered {last}")
        # Y's, delivered newest first.
        grace_y, renew_y, expire_y = plans["s5-y"]
        reversed_answers = []
        for n, jws in enumerate((expire_y, renew_y, grace_y)):
            reversed_answers.append(self.post_apple(n, jws))
            if n == 0:
                self.expect_access(s, y, {I1B: True}, "EXPIRED (with its payment) delivered before its DID_RENEW")
        s.expect(all(a[0] == 200 and a[1] in ("applied", "recorded") for a in reversed_answers),
                 f"the notifications in reverse order answered {reversed_answers}, expected 200 applied/recorded")
        finals = {}
        for device in (x, y):
            registration = device.registration(instance=1)
            finals[device.key] = editions_of(registration)
            self.expect_editions(s, registration, {1: "2025-06-02", 2: "2025-06-02", 8: ""},
                                 f"{device.key} after the grace, renewal and expiry")
            self.expect_access(s, device, {I1A: True, I1B: True, I2: True}, f"{device.key} at the end")
        s.expect(finals["s5-x"] == finals["s5-y"],
                 f"in order and in reverse order end differently: {finals}: the later signed word must win")
        s.report.update({"sequential": answers, "together": together, "reversed": reversed_answers, "finals": finals})

    # 6. Refused

    def scenario_refused(self, s):
        device = self.device("s6-ios", instance=0)
        compte = device.compte()
        now = time.time()
        tid = self.ids("6")
        good = self.apple.transaction_payload(tid=tid, otid=tid, product=ISSUE, purchase=now - 60, token=compte)
        forged_key = ec.generate_private_key(ec.SECP256R1())
        leaf_public = self.apple_ca.leaf.public_key().public_bytes(serialization.Encoding.PEM,
                                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
        hs_header = {"alg": "HS256", "x5c": self.apple_ca.x5c}
        hs_input = f"{b64url(json.dumps(hs_header).encode())}.{b64url(json.dumps(good).encode())}"
        hs256 = hs_input + "." + b64url(hmac.new(leaf_public, hs_input.encode(), hashlib.sha256).digest())
        future = dict(good, signedDate=int((now + 3600) * 1000))
        cases = {
            "a forged signature": self.apple_ca.sign(good, key=forged_key),
            "a payload changed after signing": (lambda p: ".".join([p[0], b64url(json.dumps(
                dict(good, productId=MONTHLY, expiresDate=int((now + 86400 * 365) * 1000))).encode()), p[2]]))(
                self.apple_ca.sign(good).split(".")),
            "alg none": raw_jws({"alg": "none", "x5c": self.apple_ca.x5c}, good),
            "HS256 keyed with the leaf's public key": hs256,
            "a chain of 2": self.apple_ca.sign(good, x5c=self.apple_ca.x5c[:2]),
            "a chain of 4": self.apple_ca.sign(good, x5c=self.apple_ca.x5c + [self.apple_ca.x5c[2]]),
            "a foreign root": self.foreign.sign(good),
            "a leaf without Apple's OID": self.apple_ca.sign_with_chain(good, self.unmarked_leaf),
            "an intermediate without Apple's OID": self.apple_ca.sign_with_chain(good, self.unmarked_intermediate),
            "another bundle id": self.apple_ca.sign(dict(good, bundleId="cat.other.app")),
            "a signedDate an hour in the future": self.apple_ca.sign(future),
            "a product the app does not sell": self.apple_ca.sign(dict(good, productId="cat.elpunt.quiosc.nosuch")),
            "a transaction over 64 KiB": self.apple_ca.sign(dict(good, padding="x" * 70000)),
            "not a JWS": "not-a-jws",
        }
        refused = {}
        for n, (name, jws) in enumerate(cases.items()):
            result = device.buy("apple", jws, I1A, instance=n)
            refused[name] = describe(result) if result[0] != "ok" else "accepted"
            self.expect_fault(s, result, 8, f"registrarCompra of {name}")
        # Sandbox for an app that accepts Production only.
        other = self.device("s6-presencia", app=OTHER_APP, instance=1)
        sandbox_tid = self.ids("6")
        sandbox = self.other_apple.transaction(tid=sandbox_tid, otid=sandbox_tid, product=OTHER_ISSUE, purchase=now - 60,
                                               environment="Sandbox")
        result = other.buy("apple", sandbox, (8, "2025-05-24"))
        refused["Sandbox where only Production is accepted"] = describe(result) if result[0] != "ok" else "accepted"
        self.expect_fault(s, result, 8, "registrarCompra of a Sandbox transaction for an app accepting Production only")
        # quiosc accepts Sandbox (App Review): the same kind of transaction is accepted there.
        sandbox_quiosc_tid = self.ids("6")
        sandbox_ok = device.buy("apple", self.apple.transaction(tid=sandbox_quiosc_tid, otid=sandbox_quiosc_tid,
                                                                product=ISSUE, purchase=now - 60, environment="Sandbox"), I1B)
        self.expect_ok(s, sandbox_ok, "registrarCompra of a Sandbox transaction for quiosc, which accepts Sandbox")
        self.expect_access(s, device, {I1A: False, I1B: True, I2: False}, "after the refused transactions")
        # The genuine one, which the notifications below would take back if any were accepted.
        accepted = device.buy("apple", self.apple_ca.sign(good), I1A)
        self.expect_ok(s, accepted, "registrarCompra of the genuine transaction after the refused ones")
        self.expect_access(s, device, {I1A: True}, "after the genuine transaction")
        refund_t = self.apple.transaction_payload(tid=tid, otid=tid, product=ISSUE, purchase=now - 60, token=compte,
                                                  revoked=time.time() - 10)
        refund = self.apple.notification_payload("REFUND", None, self.apple_ca.sign(refund_t))
        inner_forged = self.apple.notification_payload("REFUND", None, self.apple_ca.sign(refund_t, key=forged_key))
        inner_other_bundle = self.apple.notification_payload(
            "REFUND", None, self.apple_ca.sign(dict(refund_t, bundleId="cat.other.app")))
        inner_foreign = self.apple.notification_payload("REFUND", None, self.foreign.sign(refund_t))
        inner_sandbox = self.apple.notification_payload(
            "REFUND", None, self.apple_ca.sign(dict(refund_t, environment="Sandbox")))
        notices = {
            "a forged signature": self.apple_ca.sign(refund, key=forged_key),
            "alg none": raw_jws({"alg": "none", "x5c": self.apple_ca.x5c}, refund),
            "a chain of 2": self.apple_ca.sign(refund, x5c=self.apple_ca.x5c[:2]),
            "a foreign root": self.foreign.sign(refund),
            "another bundle id": self.apple_ca.sign(dict(refund, data=dict(refund["data"], bundleId="cat.other.app"))),
            "another app Apple ID in Production": self.apple_ca.sign(dict(refund, data=dict(refund["data"], appAppleId=1))),
            "no app Apple ID in Production": self.apple_ca.sign(
                dict(refund, data={k: v for k, v in refund["data"].items() if k != "appAppleId"})),
            "a forged inner transaction": self.apple_ca.sign(inner_forged),
            "an inner transaction of another bundle": self.apple_ca.sign(inner_other_bundle),
            "an inner transaction under a foreign root": self.apple_ca.sign(inner_foreign),
            "a Sandbox inner transaction in a Production notification": self.apple_ca.sign(inner_sandbox),
        }
        apple_answers = {}
        for n, (name, jws) in enumerate(notices.items()):
            answer = self.post_apple(n, jws)
            apple_answers[name] = answer
            s.expect(answer[0] == 400, f"a notification with {name} answered {answer}, expected HTTP 400")
        sandbox_notice = self.other_apple.notification(
            "REFUND", None, self.other_apple.transaction(tid=sandbox_tid, otid=sandbox_tid, product=OTHER_ISSUE,
                                                         purchase=now - 60, environment="Sandbox", revoked=time.time()),
            environment="Sandbox")
        apple_answers["Sandbox to an app accepting Production only"] = answer = self.post_apple(0, sandbox_notice, app=OTHER_APP)
        s.expect(answer[0] == 400, f"a Sandbox notification to {OTHER_APP} answered {answer}, expected HTTP 400")
        apple_answers["an unknown app"] = answer = self.post_apple(1, self.apple_ca.sign(refund), app="nosuchapp")
        s.expect(answer[0] == 404, f"a notification to an unknown app answered {answer}, expected HTTP 404")
        for name, body in (("not JSON", b"{signedPayload"), ("no signedPayload", b'{"payload": "x"}'),
                           ("a body over 64 KiB", json.dumps({"signedPayload": self.apple_ca.sign(refund),
                                                              "padding": "x" * 70000}).encode()),
                           ("a body over limits.max_body_bytes", b'{"signedPayload": "' + b"x" * (1_100_000) + b'"}')):
            answer = self.kiosk.post(0, f"/store/apple/{APP}", body)
            apple_answers[name] = answer
            s.expect(answer[0] == 400, f"a notification that is {name} answered {answer}, expected HTTP 400")
        self.expect_access(s, device, {I1A: True, I1B: True}, "after the refused notifications")
        registered = device.buy("apple", self.apple_ca.sign(good), I1A, instance=1)
        if self.expect_ok(s, registered, "registrarCompra after the refused notifications"):
            self.expect_compra(s, compra_of(registered), "the purchase after the refused notifications", estat="activa")
        # Google: a pack of the device's, and pushes that would void it.
        gtoken = "gpack-s6-purchase-token-0001"
        order = "GPA.3300-0000-0006-00001"
        self.google.put_product(PACK, gtoken, google_product(order, time.time() - 60, account=compte))
        registered = device.buy("google", {"producte": PACK, "token": gtoken})
        if self.expect_ok(s, registered, "registrarCompra of a Google pack"):
            self.expect_compra(s, compra_of(registered), "the Google pack", credits="2", estat="activa")
        self.expect_ok(s, device.spend(I2), "bescanviarCredit with the Google pack")
        voided = developer_notification("voidedPurchaseNotification", {
            "purchaseToken": gtoken, "orderId": order, "productType": 2, "refundType": 1})
        pushes = {
            "no bearer": None,
            "a bearer that is not a JWT": "not.a.jwt",
            "another audience": self.google.mint(aud="https://elsewhere.example/push"),
            "another service account": self.google.mint(email="someone@kiosk-test.iam.gserviceaccount.com"),
            "an unverified email": self.google.mint(email_verified=False),
            "another issuer": self.google.mint(iss="https://accounts.example.com"),
            "an expired token": self.google.mint(iat=int(time.time()) - 7200, exp=int(time.time()) - 3600),
            "HS256": self.google.mint(alg="HS256"),
            "alg none": self.google.mint(alg="none"),
            "a key Google did not publish": self.google.mint(key="oidc-other", kid="oidc-other"),
        }
        google_answers = {}
        for n, (name, token) in enumerate(pushes.items()):
            answer = self.post_google(n, voided, token=token)
            google_answers[name] = answer
            s.expect(answer[0] == 400, f"a Pub/Sub push with {name} answered {answer}, expected HTTP 400")
        other_package = dict(voided, packageName="cat.other.app")
        google_answers["another package"] = answer = self.post_google(0, other_package)
        s.expect(answer[0] == 400, f"a push for another package answered {answer}, expected HTTP 400")
        # A genuine bearer replayed with a voided notice Google does not list: Google is asked, nothing changes.
        google_answers["a voided purchase Google does not list"] = answer = self.post_google(0, voided)
        s.expect(answer[0] == 400 and "lists no voided purchase" in answer[1],
                 f"a push voiding a purchase Google does not list answered {answer}, expected HTTP 400")
        self.expect_access(s, device, {I2: True, I1A: True}, "after the refused pushes")
        registered = device.buy("google", {"producte": PACK, "token": gtoken})
        if self.expect_ok(s, registered, "the Google pack registered again"):
            self.expect_compra(s, compra_of(registered), "the Google pack after the refused pushes", credits="1",
                               estat="activa")
        self.expect_fault(s, device.buy("amazon", self.apple_ca.sign(good), I1A), -32602, "registrarCompra with botiga amazon")
        self.expect_fault(s, device.buy("google", self.apple_ca.sign(good), I1A), -32602,
                          "registrarCompra with botiga google and a JWS")
        # A restore of one genuine and two refused: only the genuine one comes back.
        mixed = device.restore("apple", [cases["a forged signature"], self.apple_ca.sign(good), cases["a foreign root"]],
                               instance=1)
        if self.expect_ok(s, mixed, "restaurarCompres of one genuine purchase among refused ones"):
            s.expect([c.get("producte") for c in mixed[1].get("compres", [])] == [ISSUE],
                     f"restaurarCompres of one genuine purchase among refused ones answered {mixed[1].get('compres')}")
        self.expect_fault(s, device.restore("apple", [cases["a forged signature"], cases["a chain of 2"]]), 8,
                          "restaurarCompres of refused purchases only")
        # Apple's TEST notification: stored, changes nothing.
        test_notice = self.apple_ca.sign({"notificationType": "TEST", "notificationUUID": str(uuid.uuid4()), "version": "2.0",
                                          "signedDate": self.dates.take(),
                                          "data": {"appAppleId": APPLE_ID, "bundleId": BUNDLE, "environment": "Production"}})
        answer = self.post_apple(0, test_notice)
        s.expect(answer == (200, "recorded"), f"a TEST notification answered {answer}, expected 200 recorded")
        s.report.update({"transactions": refused, "apple_notifications": apple_answers, "google_pushes": google_answers})

    # 7. Whose

    def scenario_whose(self, s):
        now = time.time()
        anonymous = self.device("s7-e1", instance=0)
        reader = self.device("s7-e2", USERS[6], instance=1)
        tid = self.ids("7")
        for_reader = self.apple.transaction(tid=tid, otid=tid, product=ISSUE, purchase=now - 60, token=reader.compte())
        self.expect_fault(s, anonymous.buy("apple", for_reader, I1A), 9,
                          "an anonymous device registering a transaction made for a reader's account token")
        self.expect_access(s, anonymous, {I1A: False}, "after the refused registration")
        registered = reader.buy("apple", for_reader, I1A)
        self.expect_ok(s, registered, "the reader registering the transaction made for them")
        self.expect_access(s, reader, {I1A: True}, "the reader's own purchase")
        self.expect_fault(s, anonymous.restore("apple", [for_reader]), 9, "restoring another reader's purchase")

        self.expect_fault(s, reader.restore("apple", [for_reader] * 201), -32602, "restaurarCompres of 201 purchases")
        # An anonymous purchase, restored on a second device, refused on a third.
        a1 = self.device("s7-a1", instance=0)
        tid = self.ids("7")
        anon_jws = self.apple.transaction(tid=tid, otid=tid, product=ISSUE, purchase=now - 60, token=a1.compte())
        self.expect_ok(s, a1.buy("apple", anon_jws, I1B), "an anonymous purchase")
        self.expect_access(s, a1, {I1B: True, I1A: False}, "the anonymous buyer's device")
        a2, a3 = self.device("s7-a2", instance=1), self.device("s7-a3", instance=0)
        restored = a2.restore("apple", [anon_jws])
        if self.expect_ok(s, restored, "restaurarCompres on a second device"):
            compres = restored[1].get("compres", [])
            s.expect(len(compres) == 1 and compres[0].get("exemplars") == [{"edicio_id": "1", "data": I1B[1]}],
                     f"restaurarCompres answered compres {compres}, expected the issue purchase of {issue_name(I1B)}")
        self.expect_access(s, a2, {I1B: True}, "the second device")
        self.expect_fault(s, a3.restore("apple", [anon_jws]), 9, f"restaurarCompres on a third device (limit {DEVICE_LIMIT})")
        self.expect_fault(s, a3.buy("apple", anon_jws, I1B), 9, "registrarCompra on a third device")
        self.expect_access(s, a3, {I1B: False}, "the third device")
        # The buyer's device signs in: the purchase is the reader's.
        signed_in = a1.register(USERS[7], instance=1)
        self.expect_editions(s, signed_in, {8: ""}, "the buyer's device signed in")
        self.expect_access(s, a1, {I1B: True}, "the buyer's device, signed in")
        a4 = self.device("s7-a4", USERS[7], instance=0)
        self.expect_access(s, a4, {I1B: True}, "a new device of the reader the purchase moved to")
        result = a4.restore("apple", [anon_jws])
        self.expect_ok(s, result, "the reader restoring their purchase on a new device")
        self.expect_fault(s, a3.restore("apple", [anon_jws]), 9, "the third anonymous device once the purchase is a reader's")
        a2_now = a2.open(I1B)
        s.report["second_device_after_sign_in"] = describe(a2_now) if a2_now[0] != "ok" else "opens"

        # Restored on a second device, which signs in: the purchase stays its buyer's (HeldPurchase.claim), so
        # whoever restored a copy of the transaction cannot take it from the buyer by signing in.
        b1 = self.device("s7-b1", instance=0)
        tid = self.ids("7")
        b_jws = self.apple.transaction(tid=tid, otid=tid, product=ISSUE, purchase=now - 60, token=b1.compte())
        self.expect_ok(s, b1.buy("apple", b_jws, I2), "an anonymous purchase (b)")
        b2 = self.device("s7-b2", instance=1)
        self.expect_ok(s, b2.restore("apple", [b_jws]), "restaurarCompres of (b) on a second device")
        b2.register(USERS[8], instance=0)
        self.expect_access(s, b2, {I2: True}, "the device (b) was restored on, signed in (it opens as a device)")
        b3 = self.device("s7-b3", USERS[8], instance=1)
        self.expect_access(s, b3, {I2: False}, "a new device of the reader who signed in where (b) was restored: "
                                               "the purchase stays its buyer's device's")
        self.expect_fault(s, b3.restore("apple", [b_jws]), 9,
                          f"restaurarCompres of (b) on a third device (limit {DEVICE_LIMIT}), signed in elsewhere")
        self.expect_ok(s, b2.restore("apple", [b_jws]), "the signed-in device (b) restoring the purchase again")
        self.expect_access(s, b3, {I2: False}, "the reader's new device once the signed-in device (b) restored it")
        self.expect_access(s, b1, {I2: True}, "the buyer's device (b) still")

    # 8. Google Play subscription through Pub/Sub

    def scenario_google(self, s):
        android = self.device("s8-android", USERS[9], instance=1)
        compte = android.compte()
        token = "gsub-s8-purchase-token-0001"
        order = "GPA.3300-0000-0008-00001"
        now = time.time()
        start, expiry = at("2025-05-15T08:00:00"), now + 30 * 86400
        fins = day(expiry - 1)
        self.google.put_subscription(token, dict(google_subscription(MONTHLY, order, start, expiry, account=compte),
                                                 _settle_delay=1))
        state0 = self.google.state()
        message_id = "8" + str(int(now * 1000))
        purchased = developer_notification("subscriptionNotification", {
            "version": "1.0", "notificationType": 4, "purchaseToken": token})
        answer = self.expect_stored_before_settled(s, lambda: self.post_google(0, purchased, message_id=message_id), token,
                                                   "acknowledge", "SUBSCRIPTION_PURCHASED pushed")
        s.expect(answer == (200, "applied"), f"SUBSCRIPTION_PURCHASED answered {answer}, expected 200 applied")
        state1 = self.google.state()
        calls = state1["apiCalls"][len(state0["apiCalls"]):]
        reads = [i for i, c in enumerate(calls) if c["method"] == "GET" and c["segments"][-1] == token]
        acks = [i for i, c in enumerate(calls) if c["action"] == "acknowledge" and c["segments"][-1] == token]
        s.expect(reads and acks and acks[0] > reads[0],
                 f"the Play Developer API calls for the push were {calls}: expected the subscription read, then acknowledged")
        acknowledged = [a for a in state1["acknowledged"] if a["token"] == token]
        s.expect(acknowledged == [{"kind": "subscription", "id": MONTHLY, "token": token}],
                 f"the stand-in recorded acknowledgements {acknowledged}, expected one of the subscription")
        again = self.post_google(1, purchased, message_id=message_id)
        s.expect(again == (200, "duplicate"), f"the same Pub/Sub message again answered {again}, expected 200 duplicate")
        self.expect_access(s, android, {I1A: False}, "pushed but not registered by the app yet (unclaimed)")
        registered = android.buy("google", {"producte": MONTHLY, "token": token}, instance=0)
        if self.expect_ok(s, registered, "registrarCompra of the Google subscription"):
            self.expect_compra(s, compra_of(registered), "the Google subscription", producte=MONTHLY, tipus="subscription",
                               estat="activa", fins=fins)
            self.expect_editions(s, registered[1], {1: fins, 2: fins, 8: ""}, "the Google subscription")
        self.expect_access(s, android, {I1A: True, I1B: True, I2: True}, "the registered Google subscription")
        stranger = self.device("s8-stranger", USERS[10], instance=0)
        self.expect_fault(s, stranger.buy("google", {"producte": MONTHLY, "token": token}), 9,
                          "another reader registering the Google subscription")
        acknowledged = [a for a in self.google.state()["acknowledged"] if a["token"] == token]
        s.expect(len(acknowledged) == 1, f"the subscription was acknowledged {len(acknowledged)} times, expected once")
        voided = developer_notification("voidedPurchaseNotification", {
            "purchaseToken": token, "orderId": order, "productType": 1, "refundType": 1})
        self.google.void(token, order, 1)
        # A genuine bearer replayed with a test notice under the id Pub/Sub will give the voided one: the voided
        # one is still applied, not taken for a duplicate.
        squatted = "9" + str(int(time.time() * 1000))
        answer = self.post_google(0, developer_notification("testNotification", {"version": "1.0"}), message_id=squatted)
        s.expect(answer == (200, "recorded"), f"a test notice answered {answer}, expected 200 recorded")
        answer = self.post_google(1, voided, message_id=squatted)
        s.expect(answer == (200, "applied"), f"voidedPurchaseNotification answered {answer}, expected 200 applied")
        self.expect_access(s, android, {I1A: False, I1B: False, I2: False}, "the voided subscription")
        registration = android.registration(instance=0)
        self.expect_editions(s, registration, {8: ""}, "the voided subscription")
        # Google's own state after a refund that revokes: expired at the refund, the same order. A restore (what a
        # new device's "Restore purchases" sends) must not bring it back.
        self.google.put_subscription(token, google_subscription(MONTHLY, order, start, time.time() - 1, account=compte,
                                                                state="SUBSCRIPTION_STATE_EXPIRED", acknowledged=True))
        tablet = self.device("s8-tablet", USERS[9], instance=1)
        restored = tablet.restore("google", [{"producte": MONTHLY, "token": token}])
        s.report["restore_after_void"] = ((restored[1].get("compres") or [None])[0] if restored[0] == "ok"
                                          else describe(restored))
        self.expect_access(s, tablet, {I1A: False, I1B: False, I2: False}, "restored after the refund (Google: expired)")
        # An `all` subscription of edition 2: opens every issue of edition 2 while paid, nothing once it lapses.
        all_token, all_order = "gsub-s8-purchase-token-0002", "GPA.3300-0000-0008-00002"
        all_expiry = now + 7 * 86400
        self.google.put_subscription(all_token, google_subscription(ALL2, all_order, now - 86400, all_expiry, account=compte))
        registered = tablet.buy("google", {"producte": ALL2, "token": all_token})
        if self.expect_ok(s, registered, "registrarCompra of the Google `all` subscription"):
            self.expect_compra(s, compra_of(registered), "the `all` subscription", producte=ALL2, estat="activa",
                               fins=day(all_expiry - 1))
            self.expect_editions(s, registered[1], {2: day(all_expiry - 1), 8: ""}, "the `all` subscription of edition 2")
        self.expect_access(s, android, {I2: True, I1A: False}, "the `all` subscription of edition 2 (paid from yesterday)")
        self.google.put_subscription(all_token, google_subscription(ALL2, all_order, now - 86400, time.time() - 1,
                                                                    account=compte, state="SUBSCRIPTION_STATE_EXPIRED",
                                                                    acknowledged=True))
        expired = developer_notification("subscriptionNotification", {
            "version": "1.0", "notificationType": 13, "purchaseToken": all_token})
        answer = self.post_google(0, expired)
        s.expect(answer == (200, "applied"), f"SUBSCRIPTION_EXPIRED answered {answer}, expected 200 applied")
        self.expect_access(s, android, {I2: False}, "the lapsed `all` subscription")
        self.expect_editions(s, android.registration(instance=1), {8: ""}, "the lapsed `all` subscription")
        acknowledged = [a for a in self.google.state()["acknowledged"] if a["token"] == all_token]
        s.expect(len(acknowledged) == 1, f"the `all` subscription was acknowledged {len(acknowledged)} times, expected once")

    # 9. Two devices at the same moment

    def scenario_race(self, s):
        first = self.device("s9-a", USERS[11], instance=0)
        second = self.device("s9-b", USERS[0], instance=1 % self.count)
        same_reader = self.device("s9-c", USERS[11], instance=1 % self.count)
        rounds = []
        for n in range(6):
            tid = self.ids("9")
            jws = self.apple.transaction(tid=tid, otid=tid, product=ISSUE, purchase=time.time() - 60)
            results, overlapped = self.all_at_once([lambda: first.buy("apple", jws, I1A, instance=0),
                                                    lambda: second.buy("apple", jws, I1A, instance=1)])
            kinds = sorted(describe(r) if r[0] != "ok" else "ok" for r in results)
            rounds.append(kinds + (["in flight together"] if overlapped else []))
            s.expect(kinds == ["fault 9", "ok"], f"round {n + 1}: two readers registering one transaction at once answered "
                                                 f"{kinds}, expected one success and fault 9")
            if kinds == ["fault 9", "ok"]:
                # One binding: the winner registers it again, the loser is refused again, on either instance.
                winner, loser = (first, second) if results[0][0] == "ok" else (second, first)
                self.expect_ok(s, winner.buy("apple", jws, I1A, instance=1), f"round {n + 1}: the winner registering again")
                self.expect_fault(s, loser.buy("apple", jws, I1A, instance=0), 9, f"round {n + 1}: the loser registering again")
        s.report["two_readers"] = rounds
        same = []
        for n in range(3):
            tid = self.ids("9")
            jws = self.apple.transaction(tid=tid, otid=tid, product=ISSUE, purchase=time.time() - 60)
            results, overlapped = self.all_at_once([lambda: first.buy("apple", jws, I1B, instance=0),
                                                    lambda: same_reader.buy("apple", jws, I1B, instance=1)])
            kinds = [describe(r) if r[0] != "ok" else "ok" for r in results]
            same.append(kinds + (["in flight together"] if overlapped else []))
            s.expect(kinds == ["ok", "ok"], f"round {n + 1}: one reader's two devices registering one transaction at once "
                                            f"answered {kinds}, expected both to succeed")
            if kinds == ["ok", "ok"]:
                s.expect(results[0][1]["compra"] == results[1][1]["compra"],
                         f"round {n + 1}: the two devices were answered different purchases: {results}")
        s.report["one_reader"] = same

    # 10. kill -9 under load

    def scenario_kill(self, s):
        if not s.expect(self.count >= 2, "needs 2 instances or more (one is killed, another keeps answering): "
                                         "run with --instances 2"):
            return
        buyers = [self.device(f"s10-buyer-{n}", instance=1) for n in range(4)]
        for buyer in buyers:
            buyer.account = buyer.compte()
        # Three kills at different moments: one in each third of 0.3-1.5 s of load, in a random order.
        moments = [random.uniform(0.3 + 0.4 * n, 0.7 + 0.4 * n) for n in range(3)]
        random.shuffle(moments)
        s.report["rounds"] = []
        for number, moment in enumerate(moments):
            s.report["rounds"].append(KillRound(self, s, number + 1, buyers).run(moment))
            if "restart_failed" in s.report["rounds"][-1]:
                break


class KillRound:
    """One kill of the `kill` scenario. Producer threads make the work ahead: per subscription, a fresh anonymous
    device on the surviving instance, its first transaction to register (registrarCompra) and three DID_RENEW
    notifications (distinct notificationUUIDs and transactions: 2025-06-01 12:00 to 06-02 12:00, which opens
    1/2025-06-02 and 2/2025-06-02; to 07-02 12:00; from yesterday to a day of its own in the future, its `fins`),
    and an issue purchase by one of the buyers. WORKERS threads take the items in a random order and send each to
    instance 0 (three in four) or to instance 1, recording when each request started, ended and what it was
    answered. Instance 0 is killed (SIGKILL) `moment` seconds into the load, then started again; then:
    crash_check (the answers log, PRAGMA integrity_check), every notification answered 200 posted again is
    `duplicate`, every request the kill left unanswered sent again succeeds (what was never sent, too), and each
    subscription is what its four payments make it, through registrarCompra, getEdicio and the database."""

    WORKERS = 8
    MAKERS = 2
    AHEAD = 40            # items made ahead of the workers
    SHARE_KILLED = 0.75   # of the items, those sent to instance 0, the one killed
    P1, E1 = int(at("2025-05-01T00:00:00")), int(at("2025-06-01T12:00:00"))
    E2, E3 = int(at("2025-06-02T12:00:00")), int(at("2025-07-02T12:00:00"))

    def __init__(self, driver, s, number, buyers):
        self.d, self.s, self.number, self.buyers = driver, s, number, buyers
        self.kiosk = driver.kiosk
        self.lock = threading.Lock()
        self.pending = []
        self.items = []
        self.subscriptions = []
        self.issue_purchases = []
        self.made = 0
        self.idle = 0             # times a worker found no work ready
        self.stop = threading.Event()
        self.failures = []

    def item(self, kind, **fields):
        return dict(kind=kind, instance=0 if random.random() < self.SHARE_KILLED else 1, started=None, ended=None,
                    result=None, **fields)

    def make(self):
        """One subscription's items and an issue purchase's, put among the pending ones at random places."""
        d = self.d
        with self.lock:
            n = self.made
            self.made += 1
        device = d.device(f"s10-k{self.number}-{n}", instance=1)
        compte = device.compte()
        otid = d.ids("10")
        now = int(time.time())
        ends = now + (2 + n % 300) * 86400 + 3600
        base = dict(otid=otid, product=MONTHLY, token=compte)
        renewals = [dict(base, tid=d.ids("10"), purchase=self.E1, expires=self.E2, original_purchase=self.P1),
                    dict(base, tid=d.ids("10"), purchase=self.E2, expires=self.E3, original_purchase=self.P1),
                    dict(base, tid=d.ids("10"), purchase=now - 86400, expires=ends, original_purchase=self.P1)]
        sub = {"device": device, "otid": otid, "ends": ends, "notices": set(),
               "first": d.apple.transaction(**base, tid=otid, purchase=self.P1, expires=self.E1),
               "payments": {otid} | {r["tid"] for r in renewals}}
        items = [self.item("register", jws=sub["first"], device=device, issue=None)]
        for renewal in renewals:
            notice_id = str(uuid.uuid4())
            sub["notices"].add(notice_id)
            items.append(self.item("notice", id=notice_id, jws=d.apple.notification(
                "DID_RENEW", None, d.apple.transaction(**renewal), d.apple.renewal(**base), uuid_=notice_id)))
        buyer = random.choice(self.buyers)
        tid = d.ids("10")
        bought = {"device": buyer, "tid": tid, "issue": random.choice(PAID),
                  "jws": d.apple.transaction(tid=tid, otid=tid, product=ISSUE, purchase=now - 60, token=buyer.account)}
        items.append(self.item("buy", jws=bought["jws"], device=buyer, issue=bought["issue"]))
        with self.lock:
            self.subscriptions.append(sub)
            self.issue_purchases.append(bought)
            self.items += items
            for item in items:
                self.pending.insert(random.randint(0, len(self.pending)), item)

    def produce(self, until_stopped=True):
        try:
            while not self.stop.is_set():
                with self.lock:
                    short = len(self.pending) < self.AHEAD
                if short:
                    self.make()
                elif until_stopped:
                    time.sleep(0.005)
                else:
                    return
        except Exception as error:  # noqa: BLE001 - reported as a violation
            self.failures.append(f"making the work: {type(error).__name__}: {error}")

    def send(self, item, instance=None):
        instance = item["instance"] if instance is None else instance
        if item["kind"] == "notice":
            return self.d.post_apple(instance, item["jws"])
        return item["device"].buy("apple", item["jws"], item["issue"], instance=instance)

    def work(self):
        while not self.stop.is_set():
            with self.lock:
                item = self.pending.pop() if self.pending else None
                if item:
                    item["started"] = time.monotonic()
                else:
                    self.idle += 1
            if item is None:
                time.sleep(0.002)
                continue
            try:
                result = self.send(item)
            except Exception as error:  # noqa: BLE001 - an unanswered request
                result = ("error", f"{type(error).__name__}: {error}")
            with self.lock:
                item["ended"], item["result"] = time.monotonic(), result

    @staticmethod
    def answered(result):
        return result is not None and (isinstance(result[0], int) or result[0] in ("ok", "fault", "http"))

    @staticmethod
    def as_expected(item, result, outcomes=("applied",)):
        """Whether `result` is what `item` is answered when all is well."""
        if item["kind"] == "notice":
            return result[0] == 200 and result[1] in outcomes
        compra = compra_of(result)
        if item["kind"] == "register":
            return isinstance(compra, dict) and compra.get("producte") == MONTHLY
        return isinstance(compra, dict) and compra.get("producte") == ISSUE and compra.get("estat") == "activa" and \
            compra.get("exemplars") == [{"edicio_id": str(item["issue"][0]), "data": item["issue"][1]}]

    @staticmethod
    def shown(items, limit=4):
        return [f"{i['kind']} {i.get('id', '')} to instance {i['instance']}: "
                f"{describe(i['result']) if i['result'] and not isinstance(i['result'][0], int) else i['result']}"
                for i in items[:limit]]

    def run(self, moment):
        s, kiosk, n = self.s, self.kiosk, self.number
        count = len(kiosk.instances)
        what = f"kill {n} ({moment:.2f} s into the load)"
        makers = [threading.Thread(target=self.produce, args=(False,)) for _ in range(4)]
        for thread in makers:
            thread.start()
        for thread in makers:
            thread.join()
        made_ahead = len(self.items)
        threads = [threading.Thread(target=self.produce) for _ in range(self.MAKERS)] + \
                  [threading.Thread(target=self.work) for _ in range(self.WORKERS)]
        load_started = time.monotonic()
        for thread in threads:
            thread.start()
        time.sleep(moment)
        # On a loaded machine the workers may all be between requests at that moment: wait (at most 15 s) until
        # at least two are in flight on instance 0, so that the kill cuts something.
        deadline = time.monotonic() + 15
        while True:
            with self.lock:
                in_flight = [i for i in self.items if i["instance"] == 0 and i["started"] and i["ended"] is None]
                if len(in_flight) >= 2 or time.monotonic() > deadline:
                    killed_at = time.monotonic()
                    self.stop.set()   # no new request from here (those in flight on instance 1 finish)
                    break
            time.sleep(0.002)
        status = kiosk.kill(0)
        for thread in threads:
            thread.join(timeout=120)
        load_seconds = killed_at - load_started
        s.expect(not any(t.is_alive() for t in threads), f"{what}: a load thread did not finish within 120 s")
        s.expect(not self.failures, f"{what}: {self.failures[:3]}")
        s.expect(status == -signal.SIGKILL, f"{what}: instance 0 exited with {status}, expected to die of SIGKILL")

        sent = [i for i in self.items if i["result"] is not None]
        unsent = [i for i in self.items if i["started"] is None]
        unanswered = [i for i in sent if not self.answered(i["result"])]
        cut = [i for i in in_flight if not self.answered(i["result"])]
        wrong = [i for i in sent if self.answered(i["result"]) and not self.as_expected(i, i["result"])]
        early = [i for i in unanswered if i["instance"] == 0 and i["ended"] < killed_at]
        survivor = [i for i in unanswered if i["instance"] != 0]
        s.expect(not wrong, f"{what}: {len(wrong)} requests were answered, but not as expected: {self.shown(wrong)}")
        s.expect(not early, f"{what}: {len(early)} requests to instance 0 failed before it was killed: {self.shown(early)}")
        s.expect(not survivor, f"{what}: {len(survivor)} requests to instance 1, which was not killed, got no answer: "
                               f"{self.shown(survivor)}")
        # Those in flight may still finish between the snapshot and the signal; none in flight at all proves nothing.
        s.expect(cut or in_flight, f"{what}: no request in flight on instance 0 was cut by the kill ({len(in_flight)} were in flight "
                      f"at the moment); the kill proves little")
        notices_answered = [i for i in sent if i["kind"] == "notice" and i["result"][0] == 200]
        round_report = {
            "moment_seconds": round(moment, 2), "load_seconds": round(load_seconds, 2), "made_ahead": made_ahead,
            "subscriptions": len(self.subscriptions), "issue_purchases": len(self.issue_purchases),
            "notifications_posted": len([i for i in sent if i["kind"] == "notice"]),
            "notifications_answered_200": len(notices_answered),
            "registrations_sent": len([i for i in sent if i["kind"] != "notice"]),
            "registrations_answered": len([i for i in sent if i["kind"] != "notice" and i["result"][0] == "ok"]),
            "sent_to_instance_0": len([i for i in sent if i["instance"] == 0]),
            "in_flight_at_kill": {"total": len(in_flight),
                                  "notifications": len([i for i in in_flight if i["kind"] == "notice"]),
                                  "registrations": len([i for i in in_flight if i["kind"] != "notice"]),
                                  "cut": len(cut), "answered_anyway": len(in_flight) - len(cut)},
            "unanswered": len(unanswered), "unanswered_kinds": dict(collections.Counter(
                describe(i["result"]).split(":")[0] for i in unanswered)),
            "never_sent": len(unsent), "workers_idle": self.idle, "killed_exit": status,
        }

        restarting = time.monotonic()
        try:
            kiosk.restart(0)
        except SetupError as error:   # not the driver's set-up: the server's own start after a crash
            s.expect(False, f"{what}: instance 0 did not start again: {error}")
            round_report["restart_failed"] = str(error)
            return round_report
        round_report["restart_seconds"] = round(time.monotonic() - restarting, 2)
        # Nothing answered is lost, every row agrees with itself, the file is sound (crash_check.check over the
        # answers log: PRAGMA integrity_check, purchase_problems, the issues).
        checking = time.monotonic()
        if kiosk.postgres:
            # crash_check.check runs one psql per query; its purchase_problems alone, over one psql session.
            db = Session(kiosk.database)
            try:
                problems = crash_check.purchase_problems(db, answers_seen(kiosk.answers))
            finally:
                db.close()
            checked = {"problems": problems}
        else:
            checked = crash_check.check(kiosk.database, kiosk.editions, kiosk.answers, 0)
        seen = answers_seen(kiosk.answers)
        round_report["crash_check"] = dict(checked, notices=len(seen["notice"]), purchases=len(seen["purchase"]),
                                           seconds=round(time.monotonic() - checking, 2))
        s.expect(not checked["problems"], f"{what}: after the restart crash_check finds {checked['problems'][:10]}")
        if not kiosk.postgres:
            db = crash_check.Database(kiosk.database)
            try:
                integrity = db.one("PRAGMA integrity_check")
            finally:
                db.close()
            round_report["integrity_check"] = integrity
            s.expect(integrity == "ok", f"{what}: PRAGMA integrity_check after the restart answers {integrity!r}")

        # Every notification answered 200, again: duplicate, on either instance.
        again = [(i, self.send(i, instance=k % count)) for k, i in enumerate(notices_answered)]
        not_duplicate = [dict(i, result=r) for i, r in again if r != (200, "duplicate")]
        s.expect(not not_duplicate, f"{what}: {len(not_duplicate)} of {len(again)} notifications answered 200 before "
                                    f"the kill, posted again, were not 200 duplicate: {self.shown(not_duplicate)}")
        # What the kill left unanswered, again: 200 (applied when the kill came before the commit, duplicate when
        # after it), registrarCompra succeeds; what never reached a server (never sent, a connection refused): applied.
        resent = collections.Counter()
        retried_wrong = []
        for k, item in enumerate(unanswered + unsent):
            result = self.send(item, instance=k % count)
            first_time = item["started"] is None or "ConnectionRefusedError" in str(item["result"][1])
            if item["kind"] == "notice":
                how = "never sent" if item["started"] is None else "refused" if first_time else "cut"
                resent[f"{how}: {result[0]} {result[1]}"] += 1
            ok = self.answered(result) and self.as_expected(
                item, result, ("applied",) if first_time else ("applied", "duplicate"))
            if not ok:
                retried_wrong.append(dict(item, result=result))
        round_report["sent_again"] = dict(resent)
        s.expect(not retried_wrong, f"{what}: {len(retried_wrong)} requests the kill left unanswered or never sent, sent "
                                    f"after the restart, were not answered as expected: {self.shown(retried_wrong)}")

        round_report["resend_seconds"] = round(time.monotonic() - checking, 2)
        checking = time.monotonic()
        # Each subscription: its four payments (the first transaction, three renewals): paid to its own day, every
        # paid issue open, on both instances; the database has those payments and those three notifications.
        for k, sub in enumerate(self.subscriptions):
            fins = day(sub["ends"] - 1)
            when = f"{what}: subscription {sub['otid']} once every notification was delivered"
            answer = sub["device"].buy("apple", sub["first"], instance=k % count)
            if self.d.expect_ok(s, answer, f"{when}: registrarCompra"):
                self.d.expect_compra(s, compra_of(answer), when, producte=MONTHLY, tipus="subscription", estat="activa",
                                     fins=fins)
                self.d.expect_editions(s, answer[1], {1: fins, 2: fins, 8: ""}, when)
            self.d.expect_access(s, sub["device"], {I1A: True, I1B: True, I2: True}, when)
        for k, bought in enumerate(self.issue_purchases):
            answer = bought["device"].buy("apple", bought["jws"], bought["issue"], instance=k % count)
            s.expect(self.answered(answer) and self.as_expected({"kind": "buy", "issue": bought["issue"]}, answer),
                     f"{what}: the issue purchase {bought['tid']} registered again answered "
                     f"{compra_of(answer) or describe(answer)}, expected the issue {issue_name(bought['issue'])}")
        self.check_database(s, what, round_report)
        round_report["state_check_seconds"] = round(time.monotonic() - checking, 2)
        return round_report

    def check_database(self, s, what, round_report):
        """The database's own rows: each purchase's payments, notices, access end and revocation."""
        names = [sub["otid"] for sub in self.subscriptions] + [b["tid"] for b in self.issue_purchases]
        listed = ", ".join(f"'{name}'" for name in names)
        db = Session(self.kiosk.database)
        try:
            payments = collections.defaultdict(set)
            for original, payment in db.rows(f"SELECT p.original_id, s.id FROM store_payments s JOIN store_purchases p "
                                             f"ON p.id = s.purchase_id WHERE p.original_id IN ({listed})"):
                payments[original].add(payment)
            notices = collections.defaultdict(set)
            for original, notice in db.rows(f"SELECT original_id, id FROM store_notices WHERE original_id IN ({listed})"):
                notices[original].add(notice)
            rows = {original: (int(end), str(revoked)) for original, end, revoked in db.rows(
                f"SELECT original_id, access_end, revoked FROM store_purchases WHERE original_id IN ({listed})")}
        finally:
            db.close()
        wrong = []
        for sub in self.subscriptions:
            otid = sub["otid"]
            if payments[otid] != sub["payments"]:
                wrong.append(f"{otid}: payments {sorted(payments[otid])}, expected {sorted(sub['payments'])}")
            if notices[otid] != sub["notices"]:
                wrong.append(f"{otid}: notices {sorted(notices[otid])}, expected {sorted(sub['notices'])}")
            if rows.get(otid) not in ((sub["ends"], "0"), (sub["ends"], "f"), (sub["ends"], "false")):
                wrong.append(f"{otid}: access_end and revoked {rows.get(otid)}, expected {sub['ends']} and not revoked")
        for bought in self.issue_purchases:
            if payments[bought["tid"]] != {bought["tid"]}:
                wrong.append(f"issue purchase {bought['tid']}: payments {sorted(payments[bought['tid']])}")
        round_report["database_rows_checked"] = len(names)
        s.expect(not wrong, f"{what}: {len(wrong)} purchases in the database are not what was delivered: {wrong[:5]}")


SCENARIOS = ["products", "issue", "pack", "renewals", "duplicates", "refused", "whose", "google", "race", "kill"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("workdir")
    parser.add_argument("database")
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=SCENARIOS)
    args = parser.parse_args()
    if args.instances < 1:
        print("--instances must be at least 1", file=sys.stderr)
        return 2
    postgres = crash_check.is_postgres(args.database)
    if postgres and not shutil.which("psql"):
        print("psql is needed for a postgres:// DATABASE (apt-get install postgresql-client)", file=sys.stderr)
        return 2

    workdir = os.path.abspath(args.workdir)
    os.makedirs(workdir, exist_ok=True)
    kiosk = Kiosk(args.binary, workdir, args.database, args.instances)
    report = {"binary": kiosk.binary, "database": "postgresql" if postgres else "sqlite", "workdir": workdir,
              "instances": args.instances, "scenarios": {}, "violations": []}
    started = time.time()
    status = 0
    google = None

    def terminate(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    try:
        apple = AppleAuthority("Kiosk Test Apple")
        foreign = AppleAuthority("Someone Else")
        apple_dir = os.path.join(workdir, "apple")
        os.makedirs(apple_dir, exist_ok=True)
        root_path = os.path.join(apple_dir, "AppleRootCA-G3-test.cer")
        with open(root_path, "wb") as f:
            f.write(apple.root_der)
        google = GoogleStandIn(os.path.join(workdir, "google"), {
            "packageName": PACKAGE, "subscriptions": {},
            "products": {PACK: {"gpack-s3-purchase-token-0001": dict(
                google_product("GPA.3300-0000-0003-00001", time.time() - 300), _settle_delay=1)}},
        })
        kiosk.write_configuration(root_path, google)
        kiosk.start()
        # The reader an anonymous device signs in as (whose) with `user add`, the others in one `user import`.
        kiosk.cli("user", "add", "--username", USERS[7], "--name", "Lector 8", "--password-stdin", stdin=PASSWORD + "\n")
        users_csv = os.path.join(workdir, "users.csv")
        with open(users_csv, "w") as f:
            f.write("username,name,email,password\n")
            f.writelines(f"{user},Lector {user[6:]},{user}@example.cat,{PASSWORD}\n" for user in USERS if user != USERS[7])
        kiosk.cli("user", "import", users_csv)
        report["ports"] = [i.port for i in kiosk.instances]
        report["standin_port"] = google.port
        report["setup_seconds"] = round(time.time() - started, 2)
        driver = Driver(kiosk, google, apple, foreign, SignedDates())
        for name in args.scenarios:
            s = Scenario(name)
            t0 = time.time()
            try:
                getattr(driver, f"scenario_{name}")(s)
            except SetupError:
                raise
            except Exception as error:  # a crash of the scenario itself is a violation, with where it happened
                s.violations.append(f"{name}: the scenario stopped with {type(error).__name__}: {error}\n"
                                    f"{traceback.format_exc(limit=4)}")
            s.report["seconds"] = round(time.time() - t0, 2)
            s.report["violations"] = s.violations
            report["scenarios"][name] = s.report
            report["violations"] += s.violations
        db = Session(kiosk.database)
        try:
            stored = crash_check.purchase_problems(db, kiosk.seen)
        finally:
            db.close()
        report["stored"] = {"notices": len(kiosk.seen["notice"]), "purchases": len(kiosk.seen["purchase"]),
                            "problems": stored}
        report["violations"] += [f"database: {problem}" for problem in stored]
        state = google.state()
        report["standin"] = {"tokenRequests": state["tokenRequests"], "apiCalls": len(state["apiCalls"]),
                             "acknowledged": state["acknowledged"], "consumed": state["consumed"],
                             "errors": state["errors"], "tlsFailures": state["tlsFailures"][:5]}
        if state["errors"]:
            report["violations"].append(f"the Google stand-in raised: {state['errors'][:2]}")
        status = 1 if report["violations"] else 0
    except SetupError as error:
        report["setup_error"] = str(error)
        report["violations"].append(f"set-up: {error}")
        status = 2
    except KeyboardInterrupt:
        report["violations"].append("interrupted")
        status = 2
    finally:
        stopped = kiosk.stop()
        if google:
            google.stop()
    return finish_report(report, started, status, stopped)


if __name__ == "__main__":
    sys.exit(main())
