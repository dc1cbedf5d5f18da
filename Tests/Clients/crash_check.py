"""Invariants after a kill -9 (Python's sqlite3, hashlib and zipfile): prints a JSON report.

    crash_check.py DATABASE EDITIONS LOG IMPORT_SIZE [--clean]

- the database passes PRAGMA integrity_check;
- no demo counter exceeds its app's quota, and no device holds more grants than the quota;
- everything the clients were answered (LOG, see crash_load.py) is in the database: each device has
  at least as many grants and download rows as it was told about, and a spent grant for edition 1;
- every `user import` happened whole or not at all (IMPORT_SIZE users per round prefix, or none);
- every visible issue is complete: its page rows, and every page file on disk; a bundle, where its
  file exists, has the recorded size and SHA-256 and is a valid ZIP (never a partial file);
- with --clean (after a clean restart): every bundle exists, and no staging folder, temporary bundle or
  unrecorded revision folder is left.
"""
import collections
import hashlib
import json
import os
import sqlite3
import sys
import zipfile

database, editions, log, import_size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
clean = "--clean" in sys.argv
problems = []
db = sqlite3.connect(f"file:{database}?mode=ro", uri=True)

integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
if integrity != "ok":
    problems.append(f"integrity_check: {integrity}")

for app, device, consumed, quota in db.execute(
        "SELECT c.app_key, c.device_key, c.consumed, a.demo_quota FROM demo_counters c JOIN apps a ON a.key = c.app_key"):
    if consumed > quota:
        problems.append(f"demo counter {app}/{device} is {consumed}, quota {quota}")
grants = collections.Counter()
used = set()
for device, edition in db.execute("SELECT device_key, edition_id FROM demo_grants WHERE app_key = 'quiosc'"):
    grants[device] += 1
    if edition == 1:
        used.add(device)
quota = db.execute("SELECT demo_quota FROM apps WHERE key = 'quiosc'").fetchone()[0]
for device, count in grants.items():
    if count > quota:
        problems.append(f"{device} holds {count} grants, quota {quota}")
downloads = collections.Counter(device for (device,) in db.execute("SELECT device_key FROM downloads"))

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

for prefix, count in db.execute(
        "SELECT substr(username, 1, instr(username, '-user') - 1), COUNT(*) FROM users "
        "WHERE instr(username, '-user') > 0 GROUP BY 1"):
    if count != import_size:
        problems.append(f"import {prefix} is partial: {count} of {import_size} users")

recorded = set()
bundles = 0
for edition, date, revision, page_count, bundle_path, bundle_size, bundle_sha in db.execute(
        "SELECT edition_id, date, revision, page_count, bundle_path, bundle_size, bundle_sha256 FROM issues"):
    recorded.add(f"{edition}/{date}/r{revision}")
    pages = db.execute("SELECT pdf_path, jpg_path, jpga_path FROM pages WHERE edition_id = ? AND date = ?",
                       (edition, date)).fetchall()
    if len(pages) != page_count:
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
    if len(data) != bundle_size or hashlib.sha256(data).hexdigest() != bundle_sha:
        problems.append(f"bundle {bundle_path}: {len(data)} bytes, recorded {bundle_size}; sha256 differs or size does")
    else:
        with zipfile.ZipFile(full) as z:
            if z.testzip() is not None:
                problems.append(f"bundle {bundle_path} fails zipfile.testzip")

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

print(json.dumps({"problems": problems[:50], "issues": len(recorded), "bundles": bundles,
                  "grants": sum(grants.values()), "downloads": sum(downloads.values()),
                  "seen": {kind: sum(c.values()) for kind, c in seen.items()}}))
