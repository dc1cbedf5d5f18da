"""Invariants after a kill -9 (Python's sqlite3, hashlib and zipfile; psql for PostgreSQL): prints a JSON report.

    crash_check.py DATABASE EDITIONS LOG IMPORT_SIZE [--clean]

DATABASE is a SQLite file, or a `postgres://` (`postgresql://`) URL read through `psql -At` (a
subprocess: no Python package needed; the password, if any, in the URL or in PGPASSWORD/~/.pgpass).

- the database passes PRAGMA integrity_check (SQLite only: PostgreSQL has no equivalent worth a
  test, its own WAL replay is what a crash exercises);
- no demo counter exceeds its app's quota, and no device holds more grants than the quota;
- everything the clients were answered (LOG, see crash_load.py) is in the database: each device has
  at least as many grants and download rows as it was told about, and a spent grant for edition 1;
  every issue a publisher was answered `201` for ("published EDITION/DATE") is visible;
- every `user import` happened whole or not at all (IMPORT_SIZE users per round prefix, or none);
- store purchases: every notification answered `200` ("notice STORE:ID") is stored, every purchase a
  client was answered for ("purchase STORE:ORIGINAL_ID") is there, and each purchase row agrees with
  its own JSON (readable; the same payments in store_payments, the same devices in
  store_purchase_devices, its revoked column);
- every visible issue is complete: its page rows, and every page file on disk; a bundle, where its
  file exists, has the recorded size and SHA-256 and is a valid ZIP (never a partial file);
- with --clean (after a clean restart): every bundle exists, and no staging folder, temporary bundle or
  unrecorded revision folder is left.

`check(database, editions, log, import_size, clean)` does the same for a caller that imports this file
(Tests/Clients/cluster.py).
"""
import collections
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import zipfile


def is_postgres(database):
    return database.startswith("postgres://") or database.startswith("postgresql://")


class Database:
    """Read-only queries on either store. Rows come back as tuples; PostgreSQL values are strings
    (NULL as None), so callers convert with int() where they compare numbers."""

    def __init__(self, database):
        self.database = database
        self.postgres = is_postgres(database)
        if not self.postgres:
            self.sqlite = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)

    def rows(self, sql):
        if not self.postgres:
            return self.sqlite.execute(sql).fetchall()
        # -X: no ~/.psqlrc; -A -t: unaligned, tuples only; NULL printed as a marker no value contains.
        result = subprocess.run(
            ["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-P", "null=\\N", "-F", "|",
             "-d", self.database, "-c", sql],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "PGCONNECT_TIMEOUT": os.environ.get("PGCONNECT_TIMEOUT", "10")})
        if result.returncode != 0:
            raise RuntimeError(f"psql failed ({result.returncode}) on {sql!r}: {result.stderr.strip()}")
        return [tuple(None if value == "\\N" else value for value in line.split("|"))
                for line in result.stdout.splitlines() if line]

    def one(self, sql):
        rows = self.rows(sql)
        return rows[0][0] if rows else None

    def close(self):
        if not self.postgres:
            self.sqlite.close()


def check(database, editions, log, import_size, clean=False):
    problems = []
    db = Database(database)

    if not db.postgres:
        integrity = db.one("PRAGMA integrity_check")
        if integrity != "ok":
            problems.append(f"integrity_check: {integrity}")

    for app, device, consumed, quota in db.rows(
            "SELECT c.app_key, c.device_key, c.consumed, a.demo_quota FROM demo_counters c JOIN apps a ON a.key = c.app_key"):
        if int(consumed) > int(quota):
            problems.append(f"demo counter {app}/{device} is {consumed}, quota {quota}")
    grants = collections.Counter()
    used = set()
    for device, edition in db.rows("SELECT device_key, edition_id FROM demo_grants WHERE app_key = 'quiosc'"):
        grants[device] += 1
        if edition is not None and int(edition) == 1:
            used.add(device)
    quota = int(db.one("SELECT demo_quota FROM apps WHERE key = 'quiosc'"))
    for device, count in grants.items():
        if count > quota:
            problems.append(f"{device} holds {count} grants, quota {quota}")
    downloads = collections.Counter(device for (device,) in db.rows("SELECT device_key FROM downloads"))

    seen = collections.defaultdict(collections.Counter)
    if os.path.exists(log):
        with open(log) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    seen[parts[0]][parts[1]] += 1
    for device, count in seen["grant"].items():
        if grants[device] < count:
            problems.append(f"{device} was granted {count} demos, the database has {grants[device]}")
    for device, count in seen["download"].items():
        if downloads[device] < count:
            problems.append(f"{device} was served {count} downloads, the database records {downloads[device]}")
    for device in seen["used"]:
        if device not in used:
            problems.append(f"{device} spent a demo on edition 1, the database has no such grant")

    # Portable (no instr/strpos): the prefix is what comes before "-user".
    imported = collections.Counter(username.split("-user", 1)[0]
                                   for (username,) in db.rows("SELECT username FROM users WHERE username LIKE '%-user%'"))
    for prefix, count in imported.items():
        if count != import_size:
            problems.append(f"import {prefix} is partial: {count} of {import_size} users")

    problems += purchase_problems(db, seen)
    problems += outbox_problems(db)

    pages_by_issue = collections.defaultdict(list)
    for edition, date, pdf, jpg, jpga in db.rows("SELECT edition_id, date, pdf_path, jpg_path, jpga_path FROM pages"):
        pages_by_issue[(str(edition), str(date))].append((pdf, jpg, jpga))
    recorded = set()
    visible = set()
    bundles = 0
    for edition, date, revision, page_count, bundle_path, bundle_size, bundle_sha, withdrawn in db.rows(
            "SELECT edition_id, date, revision, page_count, bundle_path, bundle_size, bundle_sha256, withdrawn_at FROM issues"):
        edition, date = str(edition), str(date)
        recorded.add(f"{edition}/{date}/r{revision}")
        if withdrawn is None:
            visible.add(f"{edition}/{date}")
        pages = pages_by_issue[(edition, date)]
        if len(pages) != int(page_count):
            problems.append(f"issue {edition}/{date} has {len(pages)} page rows of {page_count}")
        for row in pages:
            for path in row:
                if not os.path.isfile(os.path.join(editions, path)):
                    problems.append(f"issue {edition}/{date}: {path} missing")
        if not bundle_path:
            problems.append(f"issue {edition}/{date} has no bundle recorded")
            continue
        full = os.path.join(editions, bundle_path)
        if not os.path.exists(full):
            if clean:
                problems.append(f"issue {edition}/{date}: bundle {bundle_path} missing after a clean start and a request")
            continue
        bundles += 1
        with open(full, "rb") as f:
            data = f.read()
        if len(data) != int(bundle_size) or hashlib.sha256(data).hexdigest() != bundle_sha:
            problems.append(f"bundle {bundle_path}: {len(data)} bytes, recorded {bundle_size}; sha256 differs or size does")
        else:
            with zipfile.ZipFile(full) as z:
                if z.testzip() is not None:
                    problems.append(f"bundle {bundle_path} fails zipfile.testzip")
    for issue in seen["published"]:
        if issue not in visible:
            problems.append(f"issue {issue} was acknowledged as published (201), the database has no visible issue")

    if clean:
        for root, folders, files in os.walk(editions):
            relative = os.path.relpath(root, editions)
            if relative.startswith(".staging") and (folders or files):
                problems.append(f"left in staging: {relative} {folders + files}")
            for name in files:
                if ".tmp-" in name:
                    problems.append(f"temporary file left: {os.path.join(relative, name)}")
            parts = relative.split(os.sep)
            if len(parts) == 3 and parts[2].startswith("r") and relative not in recorded:
                problems.append(f"revision folder not in the database: {relative}")
    db.close()
    return {"problems": problems[:50], "issues": len(recorded), "bundles": bundles,
            "grants": sum(grants.values()), "downloads": sum(downloads.values()),
            "seen": {kind: sum(c.values()) for kind, c in seen.items()}}


def outbox_problems(db):
    """Every change the outbox reports came with its event (they share a transaction): each visible issue
    has an event putting its revision live, each purchase that grants an event granting or restoring it.
    Nothing to check on a database from before the outbox."""
    try:
        rows = db.rows("SELECT type, body FROM outbox_events")
    except Exception as error:  # noqa: BLE001 - only a missing table is expected; anything else is reported
        if "outbox_events" in str(error):
            return []
        raise
    problems = []
    live, granted = set(), set()
    for kind, body in rows:
        data = json.loads(body)
        if kind in ("issue.published", "issue.republished", "issue.restored"):
            live.add((str(data.get("edition")), str(data.get("date")), str(data.get("revision"))))
        elif kind in ("purchase.granted", "purchase.restored"):
            granted.add(f"{data.get('store')}:{data.get('purchase')}")
    for edition, date, revision in db.rows("SELECT edition_id, date, revision FROM issues WHERE withdrawn_at IS NULL"):
        if (str(edition), str(date), str(revision)) not in live:
            problems.append(f"issue {edition}/{date} r{revision} is live with no event saying so")
    # A purchase first held while revoked (a refund heard before its registration) is granted by no event
    # until a reversal restores it.
    for store, original in db.rows(
            "SELECT store, original_id FROM store_purchases WHERE NOT revoked AND (user_id <> 0 OR device_key <> '')"):
        if f"{store}:{original}" not in granted:
            problems.append(f"purchase {store}:{original} grants with no purchase.granted or purchase.restored event")
    return problems


def purchase_problems(db, seen):
    """The store purchase invariants (nothing to check on a database from before them)."""
    problems = []
    try:
        notices = {f"{store}:{id}" for store, id in db.rows("SELECT store, id FROM store_notices")}
    except (sqlite3.Error, RuntimeError) as error:
        if "store_notices" in str(error):
            return []
        raise
    for notice in seen["notice"]:
        if notice not in notices:
            problems.append(f"notification {notice} was answered 200, the database does not have it")
    purchases = {}
    for row in db.rows("SELECT id, store, original_id, user_id, device_key, revoked, details FROM store_purchases"):
        purchase_id, store, original, user, device, revoked, details = row
        purchases[f"{store}:{original}"] = str(purchase_id)
        try:
            state = json.loads(details)
        except ValueError:
            problems.append(f"purchase {store}:{original}: its details are not JSON")
            continue
        payments = {p["id"] for p in state.get("payments", [])}
        stored = {id for (id,) in db.rows(f"SELECT id FROM store_payments WHERE purchase_id = {int(purchase_id)}")}
        if payments != stored:
            problems.append(f"purchase {store}:{original}: payments {sorted(payments)} but store_payments {sorted(stored)}")
        devices = set(state.get("devices", [])) if int(user) == 0 and device else set()
        bound = {d for (d,) in db.rows(f"SELECT device_key FROM store_purchase_devices WHERE purchase_id = {int(purchase_id)}")}
        if devices != bound:
            problems.append(f"purchase {store}:{original}: devices {sorted(devices)} but store_purchase_devices {sorted(bound)}")
        if str(revoked) in ("t", "true", "1") and not (state.get("revokedByOperator") or state.get("payments")):
            problems.append(f"purchase {store}:{original} is revoked with no payment and no operator's revocation")
    for purchase in seen["purchase"]:
        if purchase not in purchases:
            problems.append(f"purchase {purchase} was answered to its app, the database does not have it")
    return problems


if __name__ == "__main__":
    database, editions, log, import_size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    print(json.dumps(check(database, editions, log, import_size, clean="--clean" in sys.argv)))
