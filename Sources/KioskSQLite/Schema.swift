import GRDB

/// The database's versioned schema. Migrations only ever append; an existing database upgrades in place.
public enum KioskSchema {
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()

        migrator.registerMigration("v1: catalogue, issues, readers, demos, downloads") { db in
            try db.create(table: "publications") { t in
                t.primaryKey("id", .integer)
                t.column("name", .text).notNull()
            }
            try db.create(table: "editions") { t in
                t.primaryKey("id", .integer)
                t.column("publication_id", .integer).notNull().references("publications", onDelete: .restrict)
                t.column("name", .text).notNull()
                t.column("created_on", .text).notNull()
            }
            try db.create(table: "sections") { t in
                t.primaryKey("id", .integer)
                t.column("name", .text).notNull()
            }
            try db.create(table: "apps") { t in
                t.primaryKey("key", .text)
                t.column("name", .text).notNull()
                t.column("demo_quota", .integer).notNull().check { $0 >= 0 }
            }
            try db.create(table: "tariff_lines", options: .withoutRowID) { t in
                t.column("app_key", .text).notNull().references("apps", onDelete: .cascade)
                t.column("edition_id", .integer).notNull().references("editions", onDelete: .restrict)
                t.column("sort_order", .integer).notNull()
                t.column("access", .text).notNull().check { ["free", "subscribers"].contains($0) }
                t.primaryKey(["app_key", "edition_id"])
            }
            // An issue is visible while `withdrawn_at` is NULL. `revision` changes on every publication.
            try db.create(table: "issues", options: .withoutRowID) { t in
                t.column("edition_id", .integer).notNull().references("editions", onDelete: .restrict)
                t.column("date", .text).notNull()
                t.column("revision", .integer).notNull()
                t.column("page_count", .integer).notNull()
                t.column("published_at", .integer).notNull()
                t.column("withdrawn_at", .integer)
                t.column("bundle_path", .text)
                t.column("bundle_size", .integer)
                t.column("bundle_sha256", .text)
                t.primaryKey(["edition_id", "date"])
            }
            try db.create(table: "pages") { t in
                t.primaryKey("id", .integer)
                t.column("edition_id", .integer).notNull()
                t.column("date", .text).notNull()
                t.column("number", .integer).notNull()
                t.column("section_id", .integer).notNull().references("sections", onDelete: .restrict)
                t.column("pdf_path", .text).notNull()
                t.column("jpg_path", .text).notNull()
                t.column("jpga_path", .text).notNull()
                t.uniqueKey(["edition_id", "date", "number"])
                t.foreignKey(["edition_id", "date"], references: "issues", onDelete: .cascade)
            }
            try db.create(table: "users") { t in
                t.primaryKey("id", .integer)
                t.column("username", .text).notNull().unique().collate(.nocase)
                t.column("name", .text).notNull()
                t.column("email", .text).notNull()
                t.column("password_hash", .text).notNull()
                t.column("created_at", .integer).notNull()
            }
            try db.create(table: "subscriptions", options: .withoutRowID) { t in
                t.column("user_id", .integer).notNull().references("users", onDelete: .cascade)
                t.column("edition_id", .integer).notNull().references("editions", onDelete: .restrict)
                t.column("until", .text).notNull()
                t.primaryKey(["user_id", "edition_id"])
            }
            // The seed's USERS_MOBILS: one row per issued identity key.
            try db.create(table: "identities", options: .withoutRowID) { t in
                t.primaryKey("key", .text)
                t.column("app_key", .text).notNull()
                t.column("device_key", .text).notNull()
                t.column("user_id", .integer).notNull()
                t.column("device_info", .text).notNull()
                t.column("os", .text).notNull()
                t.column("first_seen", .integer).notNull()
                t.column("last_seen", .integer).notNull()
            }
            try db.create(index: "identities_by_device", on: "identities", columns: ["app_key", "device_key"])
            // Demo counters are per (app, device): shared by the device's anonymous and signed-in identities.
            try db.create(table: "demo_counters", options: .withoutRowID) { t in
                t.column("app_key", .text).notNull()
                t.column("device_key", .text).notNull()
                t.column("consumed", .integer).notNull().check { $0 >= 0 }
                t.primaryKey(["app_key", "device_key"])
            }
            // A grant is unused while `edition_id` is NULL; once bound to an issue it stays.
            try db.create(table: "demo_grants") { t in
                t.primaryKey("id", .integer)
                t.column("app_key", .text).notNull()
                t.column("device_key", .text).notNull()
                t.column("granted_at", .integer).notNull()
                t.column("edition_id", .integer)
                t.column("date", .text)
                t.column("used_at", .integer)
            }
            try db.create(index: "demo_grants_by_device", on: "demo_grants",
                          columns: ["app_key", "device_key", "edition_id", "date"])
            try db.create(table: "downloads") { t in
                t.primaryKey("id", .integer)
                t.column("edition_id", .integer).notNull()
                t.column("date", .text).notNull()
                t.column("app_key", .text).notNull()
                t.column("identity_key", .text).notNull()
                t.column("user_id", .integer).notNull()
                t.column("claimed_user_id", .text).notNull()
                t.column("device_key", .text).notNull()
                t.column("os", .text).notNull()
                t.column("time", .integer).notNull()
            }
            try db.create(index: "downloads_by_time", on: "downloads", columns: ["time"])
            try db.create(index: "downloads_by_issue", on: "downloads", columns: ["edition_id", "date"])
            try db.create(table: "sign_in_failures") { t in
                t.primaryKey("id", .integer)
                t.column("username", .text).notNull().collate(.nocase)
                t.column("device_key", .text)
                t.column("time", .integer).notNull()
            }
            try db.create(index: "sign_in_failures_by_username", on: "sign_in_failures", columns: ["username", "time"])
            try db.create(index: "sign_in_failures_by_device", on: "sign_in_failures", columns: ["device_key", "time"])
        }

        // `KioskServer stats` reads these counts instead of scanning `downloads`: a year of a million
        // downloads is a few tens of thousands of rows here. Triggers keep them exact in the same
        // transaction as every insert, delete or update of `downloads`. `day` is the UTC day of the
        // download (days since 1970-01-01); `date` is the issue's.
        migrator.registerMigration("v3: download counts by day, demo grants by time (statistics)") { db in
            try db.execute(sql: """
                CREATE TABLE download_counts (
                    day INTEGER NOT NULL,
                    edition_id INTEGER NOT NULL,
                    date TEXT NOT NULL,
                    app_key TEXT NOT NULL,
                    os TEXT NOT NULL,
                    count INTEGER NOT NULL,
                    PRIMARY KEY (day, edition_id, date, app_key, os)
                ) WITHOUT ROWID;
                INSERT INTO download_counts (day, edition_id, date, app_key, os, count)
                    SELECT time / 86400, edition_id, date, app_key, os, COUNT(*) FROM downloads GROUP BY 1, 2, 3, 4, 5;
                CREATE TRIGGER download_counts_insert AFTER INSERT ON downloads BEGIN
                    INSERT INTO download_counts (day, edition_id, date, app_key, os, count)
                    VALUES (NEW.time / 86400, NEW.edition_id, NEW.date, NEW.app_key, NEW.os, 1)
                    ON CONFLICT (day, edition_id, date, app_key, os) DO UPDATE SET count = count + 1;
                END;
                CREATE TRIGGER download_counts_delete AFTER DELETE ON downloads BEGIN
                    UPDATE download_counts SET count = count - 1
                    WHERE day = OLD.time / 86400 AND edition_id = OLD.edition_id AND date = OLD.date
                      AND app_key = OLD.app_key AND os = OLD.os;
                    DELETE FROM download_counts
                    WHERE day = OLD.time / 86400 AND edition_id = OLD.edition_id AND date = OLD.date
                      AND app_key = OLD.app_key AND os = OLD.os AND count <= 0;
                END;
                CREATE TRIGGER download_counts_update
                AFTER UPDATE OF time, edition_id, date, app_key, os ON downloads BEGIN
                    UPDATE download_counts SET count = count - 1
                    WHERE day = OLD.time / 86400 AND edition_id = OLD.edition_id AND date = OLD.date
                      AND app_key = OLD.app_key AND os = OLD.os;
                    DELETE FROM download_counts
                    WHERE day = OLD.time / 86400 AND edition_id = OLD.edition_id AND date = OLD.date
                      AND app_key = OLD.app_key AND os = OLD.os AND count <= 0;
                    INSERT INTO download_counts (day, edition_id, date, app_key, os, count)
                    VALUES (NEW.time / 86400, NEW.edition_id, NEW.date, NEW.app_key, NEW.os, 1)
                    ON CONFLICT (day, edition_id, date, app_key, os) DO UPDATE SET count = count + 1;
                END;
                CREATE INDEX demo_grants_by_time ON demo_grants (granted_at, app_key, device_key);
                """)
        }
        // Identities imported from the 2012 system keep their old key until the device's next `registrar`.
        // `active_identities` holds one row per identity key an app saw on a UTC day (days since 1970-01-01).
        migrator.registerMigration("v4: imported identities, identities seen per day") { db in
            try db.alter(table: "identities") { t in
                t.add(column: "imported", .boolean).notNull().defaults(to: false)
            }
            try db.create(table: "active_identities", options: .withoutRowID) { t in
                t.column("day", .integer).notNull()
                t.column("app_key", .text).notNull()
                t.column("identity_key", .text).notNull()
                t.primaryKey(["day", "app_key", "identity_key"])
            }
        }
        // `catalogue_version` changes in the same transaction as anything a catalogue answer shows, whoever
        // writes it (this process, the CLI, another instance): answers cached under one version are valid
        // exactly while it holds (`KioskStore.catalogueVersion`).
        migrator.registerMigration("v5: catalogue version") { db in
            try db.execute(sql: """
                CREATE TABLE catalogue_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
                INSERT INTO catalogue_version (id, version) VALUES (1, 1);
                """)
            for table in Self.catalogueTables { try Self.createCatalogueTriggers(on: table, db) }
        }
        // The text of published pages, for `cercar`. `key` is the page's place in search order
        // (`PageSearchKey`: newest day first, then edition id, then page number, as descending keys), so the
        // full-text index answers "newest first, at most n" by walking its rowids backwards and stopping
        // early, however many pages match. `page_text_index` is an FTS5 index over `page_texts`
        // (external content, kept by the triggers); accents are folded (`Presència` finds `presencia`).
        // Not a catalogue table: search answers are never kept between calls.
        migrator.registerMigration("v6: page texts for search") { db in
            try db.execute(sql: """
                CREATE TABLE page_texts (
                    key INTEGER PRIMARY KEY,
                    edition_id INTEGER NOT NULL,
                    date TEXT NOT NULL,
                    number INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    UNIQUE (edition_id, date, number),
                    FOREIGN KEY (edition_id, date) REFERENCES issues ON DELETE CASCADE
                );
                CREATE VIRTUAL TABLE page_text_index USING fts5(
                    text, content = 'page_texts', content_rowid = 'key',
                    tokenize = 'unicode61 remove_diacritics 2');
                CREATE TRIGGER page_texts_insert AFTER INSERT ON page_texts BEGIN
                    INSERT INTO page_text_index (rowid, text) VALUES (NEW.key, NEW.text);
                END;
                CREATE TRIGGER page_texts_delete AFTER DELETE ON page_texts BEGIN
                    INSERT INTO page_text_index (page_text_index, rowid, text) VALUES ('delete', OLD.key, OLD.text);
                END;
                CREATE TRIGGER page_texts_update AFTER UPDATE ON page_texts BEGIN
                    INSERT INTO page_text_index (page_text_index, rowid, text) VALUES ('delete', OLD.key, OLD.text);
                    INSERT INTO page_text_index (rowid, text) VALUES (NEW.key, NEW.text);
                END;
                """)
        }
        migrator.registerMigration("v7: audit log of the console") { db in
            try db.create(table: "audit_log") { t in
                t.primaryKey("id", .integer)
                t.column("time", .integer).notNull()
                t.column("actor", .text).notNull()
                t.column("action", .text).notNull()
                t.column("subject", .text).notNull()
                t.column("before", .text).notNull()
                t.column("after", .text).notNull()
            }
        }
        // API clients, publishers and operators, owned like the catalogue (`catalogue_source`). A change
        // bumps the catalogue version, so every instance's authentication rereads them at its next request.
        migrator.registerMigration("v8: accounts") { db in
            try db.execute(sql: """
                CREATE TABLE accounts (
                    kind TEXT NOT NULL CHECK (kind IN ('api_client', 'publisher', 'operator')),
                    username TEXT NOT NULL,
                    password_hash TEXT NOT NULL,
                    role TEXT CHECK (role IN ('operator', 'editor') AND kind = 'operator' OR role IS NULL AND kind != 'operator'),
                    PRIMARY KEY (kind, username)
                ) WITHOUT ROWID
                """)
            try Self.createCatalogueTriggers(on: "accounts", db)
        }
        // The page texts of withdrawn issues, moved here by a withdraw (with their search keys) and back by
        // a restore; dropped by a republish. Never searched: no index.
        migrator.registerMigration("v9: page texts of withdrawn issues") { db in
            try db.execute(sql: """
                CREATE TABLE withdrawn_page_texts (
                    key INTEGER NOT NULL,
                    edition_id INTEGER NOT NULL,
                    date TEXT NOT NULL,
                    number INTEGER NOT NULL,
                    text TEXT NOT NULL,
                    PRIMARY KEY (edition_id, date, number),
                    FOREIGN KEY (edition_id, date) REFERENCES issues ON DELETE CASCADE
                )
                """)
        }
        // Every bundle built, at publish or on first demand, for the console's figures of a period.
        migrator.registerMigration("v10: bundle builds") { db in
            try db.create(table: "bundle_builds") { t in
                t.primaryKey("id", .integer)
                t.column("time", .integer).notNull()
                t.column("edition_id", .integer).notNull()
                t.column("date", .text).notNull()
                t.column("revision", .integer).notNull()
                t.column("bytes", .integer).notNull()
            }
            try db.create(index: "bundle_builds_by_time", on: "bundle_builds", columns: ["time"])
        }
        // Each app's web kiosk (`hashQuiosc`), part of the catalogue: synced from the file's `web_kiosk` or
        // edited in the console. No row: Kiosk's own. `base_url` NULL: Kiosk's own, at the public URL;
        // `sections` is a JSON array of `{"aliases", "name", "path"}` in order (`AppWebKiosk.storedSections`).
        // A change bumps the catalogue version, so every instance's `hashQuiosc` answers from it at once.
        migrator.registerMigration("v11: web kiosks of the apps") { db in
            try db.execute(sql: """
                CREATE TABLE app_web_kiosks (
                    app_key TEXT PRIMARY KEY NOT NULL REFERENCES apps ON DELETE CASCADE,
                    base_url TEXT,
                    default_section TEXT,
                    sections TEXT NOT NULL
                ) WITHOUT ROWID
                """)
            try Self.createCatalogueTriggers(on: "app_web_kiosks", db)
        }
        // Web sessions (console, reader kiosk) ended before they expire: one row per signed-out session, and
        // per subject a row with session '*' ending every session begun at or before `ended_at`. Kept until
        // the sessions they end would have expired.
        migrator.registerMigration("v12: ended sessions") { db in
            try db.execute(sql: """
                CREATE TABLE ended_sessions (
                    subject TEXT NOT NULL,
                    session TEXT NOT NULL,
                    ended_at INTEGER NOT NULL,
                    kept_until INTEGER NOT NULL,
                    PRIMARY KEY (subject, session)
                ) WITHOUT ROWID
                """)
            try db.execute(sql: "CREATE INDEX ended_sessions_by_kept_until ON ended_sessions (kept_until)")
        }
        // A publisher's scope (`PublisherScope.description`); NULL: every edition.
        migrator.registerMigration("v13: publisher scopes") { db in
            try db.execute(sql: "ALTER TABLE accounts ADD COLUMN scope TEXT CHECK (scope IS NULL OR kind = 'publisher')")
        }
        // What each app sells in the stores, in its order (`position`); part of the catalogue. `editions`
        // is a subscription's edition ids as `1,2,3` (empty: the app's subscriber lines).
        migrator.registerMigration("v14: store products") { db in
            try db.execute(sql: """
                CREATE TABLE store_products (
                    app_key TEXT NOT NULL REFERENCES apps ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    apple_id TEXT,
                    google_id TEXT,
                    kind TEXT NOT NULL CHECK (kind IN ('issue', 'credits', 'subscription')),
                    editions TEXT NOT NULL DEFAULT '',
                    credits INTEGER NOT NULL DEFAULT 0,
                    scope TEXT NOT NULL DEFAULT 'period' CHECK (scope IN ('period', 'all')),
                    PRIMARY KEY (app_key, id)
                ) WITHOUT ROWID
                """)
            try Self.createCatalogueTriggers(on: "store_products", db)
        }
        // Store purchases (`PurchaseRow`): who holds each (a reader, an anonymous device, or nobody yet) and
        // its state as JSON; the devices an anonymous one opens on; its payments, for the numbers; and every
        // store notice, kept so that a notice sent again is dropped. No foreign key to apps or users: a
        // catalogue change or a removed reader never deletes what a reader paid for.
        migrator.registerMigration("v15: store purchases") { db in
            try db.execute(sql: """
                CREATE TABLE store_purchases (
                    id INTEGER PRIMARY KEY,
                    app_key TEXT NOT NULL,
                    store TEXT NOT NULL,
                    original_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    user_id INTEGER NOT NULL DEFAULT 0,
                    device_key TEXT NOT NULL DEFAULT '',
                    account_token TEXT NOT NULL DEFAULT '',
                    revoked INTEGER NOT NULL DEFAULT 0,
                    access_end INTEGER NOT NULL DEFAULT 0,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    details TEXT NOT NULL,
                    UNIQUE (app_key, store, original_id)
                );
                CREATE INDEX store_purchases_by_user ON store_purchases (user_id, app_key) WHERE user_id <> 0;
                CREATE INDEX store_purchases_by_update ON store_purchases (updated_at);
                CREATE TABLE store_purchase_devices (
                    app_key TEXT NOT NULL,
                    device_key TEXT NOT NULL,
                    purchase_id INTEGER NOT NULL REFERENCES store_purchases ON DELETE CASCADE,
                    PRIMARY KEY (app_key, device_key, purchase_id)
                ) WITHOUT ROWID;
                CREATE INDEX store_purchase_devices_by_purchase ON store_purchase_devices (purchase_id);
                CREATE TABLE store_payments (
                    purchase_id INTEGER NOT NULL REFERENCES store_purchases ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    app_key TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    paid_at INTEGER NOT NULL,
                    price INTEGER,
                    currency TEXT,
                    revoked INTEGER NOT NULL,
                    PRIMARY KEY (purchase_id, id)
                ) WITHOUT ROWID;
                CREATE INDEX store_payments_by_time ON store_payments (paid_at);
                CREATE TABLE store_notices (
                    store TEXT NOT NULL,
                    id TEXT NOT NULL,
                    app_key TEXT NOT NULL,
                    type TEXT NOT NULL,
                    subtype TEXT NOT NULL,
                    original_id TEXT NOT NULL,
                    received_at INTEGER NOT NULL,
                    outcome TEXT NOT NULL,
                    PRIMARY KEY (store, id)
                );
                CREATE INDEX store_notices_by_purchase ON store_notices (app_key, store, original_id);
                CREATE INDEX store_notices_by_time ON store_notices (received_at);
                """)
        }
        // The event outbox (`EventLog`) and the webhooks' queue (`WebhookStore`). Events are written in the
        // transaction of the change they report; SQLite has one writer, so ids (AUTOINCREMENT: never reused,
        // even after the newest is pruned) increase in commit order. `outbox_cursor` holds, in its one row
        // (made by the first dispatch), the last event offered to the endpoints. A delivery is `waiting`
        // (leased while `lease_until` has not passed), `delivered` or `given_up`; `webhook_attempts` is the
        // log of its tries. An endpoint's deletion takes its deliveries and log; an event's pruning, its
        // finished deliveries and their log. File endpoints are unique by name.
        migrator.registerMigration("v16: event outbox, webhooks") { db in
            try db.execute(sql: """
                CREATE TABLE outbox_events (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    type TEXT NOT NULL,
                    time INTEGER NOT NULL,
                    body TEXT NOT NULL
                );
                CREATE INDEX outbox_events_by_time ON outbox_events (time);
                CREATE TABLE outbox_cursor (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    position INTEGER NOT NULL
                );
                CREATE TABLE webhook_endpoints (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    source TEXT NOT NULL CHECK (source IN ('file', 'console')),
                    name TEXT NOT NULL,
                    owner TEXT NOT NULL,
                    url TEXT NOT NULL,
                    types TEXT NOT NULL,
                    secrets TEXT NOT NULL,
                    enabled INTEGER NOT NULL,
                    disabled_reason TEXT,
                    failing_since INTEGER,
                    created_at INTEGER NOT NULL
                );
                CREATE UNIQUE INDEX webhook_endpoints_by_file_name ON webhook_endpoints (name) WHERE source = 'file';
                CREATE TABLE webhook_deliveries (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    event_id INTEGER NOT NULL REFERENCES outbox_events ON DELETE CASCADE,
                    endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints ON DELETE CASCADE,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    due_at INTEGER NOT NULL,
                    lease_owner TEXT,
                    lease_until INTEGER,
                    state TEXT NOT NULL CHECK (state IN ('waiting', 'delivered', 'given_up'))
                );
                CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at, id) WHERE state = 'waiting';
                CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id, state);
                CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id);
                CREATE TABLE webhook_attempts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries ON DELETE CASCADE,
                    endpoint_id INTEGER NOT NULL,
                    event_id INTEGER NOT NULL,
                    event_type TEXT NOT NULL,
                    attempt INTEGER NOT NULL,
                    time INTEGER NOT NULL,
                    status INTEGER,
                    latency_ms INTEGER NOT NULL,
                    answer TEXT NOT NULL
                );
                CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, time, id);
                CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id);
                """)
        }
        // Push registrations (`PushRegistry`): one per device of an app, a token on one device of an app only.
        // `editions` is the comma-separated list the device asked for ('' for every edition it may read).
        // `push_cursor` holds the last event the fan-out took up: after the events kept when this migration ran
        // (their issues are no news), made by the first claim when there were none (so that an empty database,
        // a `db copy` target, has no row); `push_fanouts` the progress of each event's fan-out: the last
        // registration id claimed, and whether none is left.
        migrator.registerMigration("v17: push registrations") { db in
            try db.execute(sql: """
                CREATE TABLE push_registrations (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    app_key TEXT NOT NULL,
                    device_key TEXT NOT NULL,
                    identity_key TEXT NOT NULL,
                    user_id INTEGER NOT NULL,
                    platform TEXT NOT NULL CHECK (platform IN ('apns', 'fcm')),
                    token TEXT NOT NULL,
                    editions TEXT NOT NULL,
                    language TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    UNIQUE (app_key, device_key),
                    UNIQUE (app_key, platform, token)
                );
                CREATE TABLE push_cursor (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    position INTEGER NOT NULL
                );
                INSERT INTO push_cursor (id, position) SELECT 1, MAX(id) FROM outbox_events HAVING MAX(id) IS NOT NULL;
                CREATE TABLE push_fanouts (
                    event_id INTEGER PRIMARY KEY REFERENCES outbox_events ON DELETE CASCADE,
                    after_id INTEGER NOT NULL,
                    done INTEGER NOT NULL,
                    started_at INTEGER NOT NULL
                );
                CREATE INDEX push_fanouts_waiting ON push_fanouts (event_id) WHERE done = 0;
                """)
        }
        // Claims take each endpoint's room and oldest due deliveries (`claimDeliveries(perEndpoint:)`).
        migrator.registerMigration("v18: webhook deliveries by endpoint") { db in
            try db.execute(sql: """
                CREATE INDEX webhook_deliveries_due_by_endpoint ON webhook_deliveries (endpoint_id, due_at, id) WHERE state = 'waiting';
                CREATE INDEX webhook_deliveries_leased_by_endpoint ON webhook_deliveries (endpoint_id, lease_until) WHERE state = 'waiting';
                """)
        }
        return migrator
    }

    /// The triggers that bump `catalogue_version` on any change to `table`.
    static func createCatalogueTriggers(on table: String, _ db: Database) throws {
        for event in ["INSERT", "UPDATE", "DELETE"] {
            try db.execute(sql: """
                CREATE TRIGGER \(table)_\(event.lowercased())_changes_catalogue AFTER \(event) ON \(table)
                BEGIN UPDATE catalogue_version SET version = version + 1 WHERE id = 1; END
                """)
        }
    }

    /// The tables catalogue answers (`getEdicions`, `getDarrersEdicio`, `getEdicio`'s contents) are read from.
    static let catalogueTables = ["publications", "editions", "sections", "apps", "tariff_lines", "issues", "pages"]
}
