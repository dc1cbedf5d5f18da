#!/usr/bin/env python3
"""Fills a Kiosk database (created and migrated by the binary) with a year of generated activity:
N downloads (default one million) over 365 days, plus demo grants, identities, users and
subscriptions, so that `KioskServer stats` has realistic work. Deterministic (fixed seed).

    python3 Benchmarks/stats_bench_data.py DATABASE [ROWS]
"""
import random
import sqlite3
import sys
import time

DAY = 86400
START = 1717200000            # 2024-06-01 00:00:00 UTC
EDITIONS = [1, 1, 1, 2, 2, 8]  # weighted
APPS = ["quiosc"] * 4 + ["presencia"]
OSES = ["iOS"] * 5 + ["Android"] * 4 + ["iPadOS", ""]
DEVICES = 60000


def day_text(days):
    return time.strftime("%Y-%m-%d", time.gmtime(days * DAY))


def main():
    path = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    random.seed(2012)
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous = OFF")
    started = time.monotonic()

    def downloads():
        for i in range(rows):
            t = START + (i * 365 * DAY) // rows + random.randrange(60)
            issue_day = t // DAY - random.choice([0, 0, 0, 0, 1, 1, 2, 7])
            device = random.randrange(DEVICES)
            app = "presencia" if device % 5 == 0 else "quiosc"
            edition = 8 if app == "presencia" else random.choice(EDITIONS)
            user = device // 3 if device % 3 == 0 else 0
            yield (edition, day_text(issue_day), app, "key-%d" % device, user, str(user),
                   "device-%d" % device, OSES[device % len(OSES)], t)

    with db:
        db.executemany("""INSERT INTO downloads (edition_id, date, app_key, identity_key, user_id,
                          claimed_user_id, device_key, os, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""", downloads())
    inserted = time.monotonic()

    with db:
        # Users 1..20000, a third of them subscribed.
        db.executemany("INSERT OR IGNORE INTO users (id, username, name, email, password_hash, created_at) VALUES (?, ?, '', '', 'x', 0)",
                       ((u, "bench-user-%d" % u) for u in range(1, 20001)))
        db.executemany("INSERT OR IGNORE INTO subscriptions (user_id, edition_id, until) VALUES (?, ?, '2026-12-31')",
                       ((u, random.choice([1, 2, 8])) for u in range(1, 20001, 3)))
        # Demos: every fourth device takes 1-3 demos somewhere in the year; some sign in later.
        grants, identities = [], []
        for device in range(0, DEVICES, 4):
            app = "presencia" if device % 5 == 0 else "quiosc"
            first = START + random.randrange(360 * DAY)
            taken = random.randint(1, 3)
            for n in range(taken):
                at = first + n * DAY
                used = random.random() < 0.8
                grants.append((app, "device-%d" % device, at, random.choice([1, 2]) if used else None,
                               day_text(at // DAY) if used else None, at + 60 if used else None))
            db.execute("INSERT OR REPLACE INTO demo_counters (app_key, device_key, consumed) VALUES (?, ?, ?)",
                       (app, "device-%d" % device, taken))
            if random.random() < 0.3:
                user = random.randint(1, 20000)
                identities.append(("id-%d" % device, app, "device-%d" % device, user, "{}", "iOS",
                                   first + 5 * DAY, first + 5 * DAY))
        db.executemany("INSERT INTO demo_grants (app_key, device_key, granted_at, edition_id, date, used_at) VALUES (?, ?, ?, ?, ?, ?)", grants)
        db.executemany("INSERT OR REPLACE INTO identities (key, app_key, device_key, user_id, device_info, os, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", identities)
    counts = db.execute("SELECT COUNT(*) FROM download_counts").fetchone()[0]
    print("generated %d downloads in %.1f s (per-day counts: %d rows), %d demo grants, %d signed-in identities"
          % (rows, inserted - started, counts, len(grants), len(identities)))


if __name__ == "__main__":
    main()
