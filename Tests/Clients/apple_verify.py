#!/usr/bin/env python3
"""Apple's own verifier on a corpus Kiosk's tests write: one JSON verdict a case, on standard output.

Usage: apple_verify.py CORPUS.json

CORPUS.json is {"cases": [{"name", "kind" (transaction, renewalInfo or notification), "jws", "root"
(base64 DER of the one trusted root certificate), "environment" (Production or Sandbox), "bundleId",
"appAppleId"}]}.
Each verdict is {"name", "verdict": "accepted"} or {"name", "verdict": "refused", "status": the
VerificationException's status}. Only a VerificationException is a verdict: anything else (a missing
package, a bad corpus, a library bug) ends the script with a traceback and a non-zero exit, so the
Swift test that runs it fails.

Needs PyPI app-store-server-library (3.1.2), which brings cryptography, pyOpenSSL and PyJWT.
"""
import base64
import json
import sys

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def verify(verifier, kind, jws):
    if kind == "transaction":
        verifier.verify_and_decode_signed_transaction(jws)
    elif kind == "renewalInfo":
        verifier.verify_and_decode_renewal_info(jws)
    elif kind == "notification":
        notification = verifier.verify_and_decode_notification(jws)
        # The library verifies the notification's own signature and app only; the signed transaction and
        # renewal info inside are left to the caller, who verifies them with the same verifier (Apple's
        # documented use). Done here, as an app using the library must, to compare with Kiosk, which
        # verifies them as part of the notification.
        data = notification.data
        if data is not None and data.signedTransactionInfo is not None:
            verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
        if data is not None and data.signedRenewalInfo is not None:
            verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
    else:
        raise ValueError(f"unknown kind {kind!r}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: apple_verify.py CORPUS.json")
    with open(sys.argv[1], encoding="utf-8") as corpus_file:
        corpus = json.load(corpus_file)
    for case in corpus["cases"]:
        verifier = SignedDataVerifier(
            root_certificates=[base64.b64decode(case["root"], validate=True)],
            enable_online_checks=False,
            environment=Environment(case["environment"]),
            bundle_id=case["bundleId"],
            app_apple_id=case.get("appAppleId"),
        )
        try:
            verify(verifier, case["kind"], case["jws"])
            verdict = {"name": case["name"], "verdict": "accepted"}
        except VerificationException as refusal:
            verdict = {"name": case["name"], "verdict": "refused", "status": refusal.status.name}
        print(json.dumps(verdict), flush=True)


if __name__ == "__main__":
    main()
