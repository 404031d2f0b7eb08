import CookieJar
import GRDB

/// The database schema. Migrations are append-only: once shipped, a migration is never
/// edited; a change is a new migration below the others.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()

        migrator.registerMigration("v1: recordings, exchanges, bodies, runs, outcomes, findings") { db in
            // Bodies, content-addressed: a corpus sharing scripts and images stays small.
            try db.create(table: "body") { t in
                t.primaryKey("sha256", .text)
                t.column("length", .integer).notNull()
                t.column("content", .blob).notNull()
            }
            try db.create(table: "recording") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull().unique()
                t.column("source_format", .text).notNull()
                t.column("source_path", .text)
                t.column("source_sha256", .text)
                t.column("imported_at", .text).notNull()
                t.column("exchange_count", .integer).notNull()
            }
            try db.create(table: "diagnostic") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("recording_id", .integer).notNull().indexed().references("recording", onDelete: .cascade)
                t.column("sequence", .integer)
                t.column("severity", .text).notNull()
                t.column("code", .text).notNull()
                t.column("message", .text).notNull()
            }
            try db.create(table: "exchange") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("recording_id", .integer).notNull().indexed().references("recording", onDelete: .cascade)
                t.column("sequence", .integer).notNull()
                t.column("started_at", .double).notNull()
                t.column("duration", .double).notNull()
                t.column("connection_id", .text)
                t.column("server_address", .text)
                t.column("method", .text).notNull()
                t.column("url", .text).notNull()
                t.column("http_version", .text).notNull()
                t.column("request_headers", .text).notNull()  // JSON [[name, value], ...] in wire order
                t.column("request_body_sha256", .text).notNull().references("body")
                t.column("request_body_length", .integer).notNull()
                t.column("status", .integer).notNull()
                t.column("status_text", .text).notNull()
                t.column("response_http_version", .text).notNull()
                t.column("response_headers", .text).notNull()
                t.column("response_body_sha256", .text).notNull().references("body")
                t.column("response_body_length", .integer).notNull()
                t.column("response_encoded_length", .integer)
                t.column("response_body_missing", .boolean).notNull()
                t.column("redirect_url", .text)
                t.column("initiator", .text).notNull()
                t.column("frame", .text).notNull()
                t.column("body_kind", .text).notNull()
                t.column("redirect_chain_start", .integer)
                t.column("redirect_hop", .integer)
                t.column("redirect_next", .integer)
                t.column("resource_type", .text)
                t.uniqueKey(["recording_id", "sequence"])
            }
            try db.create(table: "run") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("started_at", .text).notNull()
                t.column("finished_at", .text).notNull()
                t.column("tool_version", .text).notNull()
                t.column("profile", .text).notNull()
                t.column("ios", .text).notNull()
                t.column("simulator", .boolean).notNull()
                t.column("presets", .text).notNull()  // comma-separated, matrix order
                t.column("label", .text)
                t.column("git_revision", .text)
                t.column("recording_count", .integer).notNull()
                t.column("exchange_count", .integer).notNull()
            }
            try db.create(table: "outcome") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("run_id", .integer).notNull().indexed().references("run", onDelete: .cascade)
                t.column("recording_name", .text).notNull()
                t.column("recording_id", .integer).indexed().references("recording", onDelete: .setNull)
                t.column("preset", .text).notNull()
                t.column("sequence", .integer).notNull()
                t.column("delivered_method", .text).notNull()
                t.column("delivered_url", .text).notNull()
                t.column("delivered_body_length", .integer).notNull()
                t.column("delivered_body_sha256", .text).notNull()
                t.column("sent_cookie_names", .text).notNull()  // comma-separated, header order
                t.column("page_url", .text)
                t.column("changes", .text).notNull()  // JSON [{rule, what}]
            }
            try db.create(table: "finding") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("run_id", .integer).notNull().indexed().references("run", onDelete: .cascade)
                t.column("preset", .text).notNull()
                t.column("code", .text).notNull()
                t.column("severity", .text).notNull()
                t.column("recording_name", .text).notNull()
                t.column("recording_id", .integer).indexed().references("recording", onDelete: .setNull)
                t.column("sequence", .integer).notNull()
                t.column("method", .text).notNull()
                t.column("url", .text).notNull()
                t.column("subject", .text)
                t.column("rules", .text).notNull()  // comma-separated rule ids
                t.column("confidence", .text).notNull()
                t.column("message", .text).notNull()
                t.column("expected", .text).notNull()  // JSON object
                t.column("actual", .text).notNull()  // JSON object
                t.column("identity", .text).notNull()
            }
            try db.create(index: "finding_by_run", on: "finding", columns: ["run_id", "preset", "code"])
            try db.create(index: "outcome_by_run", on: "outcome", columns: ["run_id", "recording_name", "preset"])
        }
        migrator.registerMigration("v2: cookie provenance per exchange") { db in
            // Every cookie each recorded request carries, and where it came from
            // (docs/model.md, "Where a cookie came from"). Values stay in the request headers.
            try db.create(table: "cookie_sent") { t in
                t.column("recording_id", .integer).notNull().indexed().references("recording", onDelete: .cascade)
                t.column("sequence", .integer).notNull()
                t.column("position", .integer).notNull()  // order in the Cookie header
                t.column("name", .text).notNull()
                t.column("provenance", .text).notNull()  // server-set, script-set, pre-existing
                t.column("set_by", .integer)  // sequence of the exchange that set it
                t.column("set_by_hop", .integer)  // its redirect hop, when it was one
                t.primaryKey(["recording_id", "sequence", "position"])
            }
            // Cookie events that are not on the wire, inferred just before an exchange.
            try db.create(table: "cookie_inference") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("recording_id", .integer).notNull().indexed().references("recording", onDelete: .cascade)
                t.column("sequence", .integer).notNull()
                t.column("name", .text).notNull()
                t.column("kind", .text).notNull()  // script-set, script-deleted, pre-existing
                t.column("domain", .text).notNull()
                t.column("path", .text).notNull()
                t.column("window_start", .double)  // the script wrote it after this time
            }
            // Recordings imported before this migration are marked by v7; the pipeline
            // computes their provenance when it opens the store.
        }
        migrator.registerMigration("v3: jar timelines and the report views") { db in
            // Both jars' changes during each replay, for the jar timelines of the HTML report.
            try db.create(table: "jar_event") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("run_id", .integer).notNull().references("run", onDelete: .cascade)
                t.column("recording_name", .text).notNull()
                t.column("preset", .text).notNull()
                t.column("time", .double).notNull()
                t.column("jar", .text).notNull()  // native or web
                t.column("name", .text).notNull()
                t.column("domain", .text).notNull()
                t.column("path", .text).notNull()
                t.column("change", .text).notNull()  // set or deleted
                t.column("rule", .text)
                t.column("what", .text).notNull()
            }
            try db.create(index: "jar_event_by_run", on: "jar_event", columns: ["run_id", "recording_name", "preset"])
            try db.create(index: "finding_by_identity", on: "finding", columns: ["identity", "run_id"])
            // Findings per run, preset, code and severity.
            try db.execute(sql: """
                CREATE VIEW findings_per_preset_code AS
                SELECT run_id, preset, code, severity, COUNT(*) AS findings
                FROM finding GROUP BY run_id, preset, code, severity
                """)
            // Findings of a run that another run (the baseline) does not have; filter on
            // run_id and baseline_run_id. Same finding = same identity: recording,
            // exchange (order, method, URL), preset, code and subject.
            try db.execute(sql: """
                CREATE VIEW new_finding AS
                SELECT f.run_id, b.id AS baseline_run_id, f.preset, f.code, f.severity, f.recording_name,
                       f.sequence, f.method, f.url, f.subject, f.rules, f.confidence, f.message
                FROM finding f JOIN run b ON b.id <> f.run_id
                WHERE NOT EXISTS (SELECT 1 FROM finding g WHERE g.run_id = b.id AND g.identity = f.identity)
                """)
            // The side-by-side matrix: per run, recording and preset, findings per severity.
            try db.execute(sql: """
                CREATE VIEW run_matrix AS
                SELECT o.run_id, o.recording_name, o.preset,
                       COUNT(f.id) FILTER (WHERE f.severity = 'error') AS errors,
                       COUNT(f.id) FILTER (WHERE f.severity = 'warning') AS warnings,
                       COUNT(f.id) FILTER (WHERE f.severity = 'info') AS infos
                FROM (SELECT DISTINCT run_id, recording_name, preset FROM outcome) o
                LEFT JOIN finding f ON f.run_id = o.run_id AND f.recording_name = o.recording_name AND f.preset = o.preset
                GROUP BY o.run_id, o.recording_name, o.preset
                """)
        }
        migrator.registerMigration("v4: what reached serve") { db in
            // Every request a real client sent to `serve`, with the recorded exchange that
            // answered it (none for an extra request), for the observed run it belongs to.
            try db.create(table: "arrival") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("run_id", .integer).notNull().references("run", onDelete: .cascade)
                t.column("position", .integer).notNull()
                t.column("time", .double).notNull()
                t.column("method", .text).notNull()
                t.column("target", .text).notNull()
                t.column("headers", .text).notNull()  // JSON [[name, value], ...]
                t.column("body_sha256", .text).notNull().references("body")
                t.column("body_length", .integer).notNull()
                t.column("recording_name", .text)
                t.column("sequence", .integer)
                t.column("status", .integer).notNull()
            }
            try db.create(index: "arrival_by_run", on: "arrival", columns: ["run_id", "position"])
        }
        migrator.registerMigration("v5: no index another already covers") { db in
            // UNIQUE (recording_id, sequence) and the primary key (recording_id, sequence,
            // position) already serve lookups by recording; the single-column indexes only
            // cost every insert of a large import another b-tree write.
            try db.execute(sql: "DROP INDEX IF EXISTS exchange_on_recording_id")
            try db.execute(sql: "DROP INDEX IF EXISTS cookie_sent_on_recording_id")
        }
        migrator.registerMigration("v6: finding messages rendered from the rule catalogue") { db in
            // A finding stores what is its own (the detail, and which possibility the model
            // kept when the recording cannot say); the rules' statements are appended from
            // the rule catalogue when a report renders it. Rows written before keep their
            // whole message in `message`, and `detail` NULL.
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN detail TEXT")
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN alternative TEXT")
            // A finding's identity across runs (recording, exchange, preset, code, subject)
            // is read from its columns rather than stored again beside them: one index,
            // (run, preset, code, recording, exchange), serves both the lookups by run and
            // the baseline comparison.
            try db.execute(sql: "DROP VIEW new_finding")
            try db.execute(sql: "DROP INDEX IF EXISTS finding_by_identity")
            try db.execute(sql: "DROP INDEX IF EXISTS finding_by_run")
            try db.execute(sql: "DROP INDEX IF EXISTS finding_on_run_id")
            try db.execute(sql: "ALTER TABLE finding DROP COLUMN identity")
            try db.create(index: "finding_by_run", on: "finding", columns: ["run_id", "preset", "code", "recording_name", "sequence"])
            try db.execute(sql: """
                CREATE VIEW new_finding AS
                SELECT f.run_id, b.id AS baseline_run_id, f.preset, f.code, f.severity, f.recording_name,
                       f.sequence, f.method, f.url, f.subject, f.rules, f.confidence, f.message, f.detail
                FROM finding f JOIN run b ON b.id <> f.run_id
                WHERE NOT EXISTS (
                  SELECT 1 FROM finding g
                  WHERE g.run_id = b.id AND g.preset = f.preset AND g.code = f.code AND g.recording_name = f.recording_name
                    AND g.sequence = f.sequence AND g.method = f.method AND g.url = f.url AND g.subject IS f.subject)
                """)
        }
        migrator.registerMigration("v7: recordings waiting for cookie provenance") { db in
            // Migrations are SQL alone: a later change to the provenance walker must not
            // change what an old migration did. Recordings stored with no provenance row at
            // all are listed here, and the import pipeline computes theirs when it opens the
            // store (a recording without cookies is listed too, and leaves at once).
            try db.execute(sql: """
                CREATE TABLE provenance_pending (recording_id INTEGER PRIMARY KEY REFERENCES recording(id) ON DELETE CASCADE)
                """)
            try db.execute(sql: """
                INSERT INTO provenance_pending (recording_id)
                SELECT id FROM recording r
                WHERE NOT EXISTS (SELECT 1 FROM cookie_sent c WHERE c.recording_id = r.id)
                  AND NOT EXISTS (SELECT 1 FROM cookie_inference i WHERE i.recording_id = r.id)
                """)
        }
        migrator.registerMigration("v8: exchanges that are no evidence of the page's cookies") { db in
            // What the importer knew (a HAR `_fromCache`, a captured request cut short):
            // rules E3 and E4. E1 and E2 follow from the status and the headers.
            try db.execute(sql: "ALTER TABLE exchange ADD COLUMN evidence_gap TEXT")
        }
        migrator.registerMigration("v9: grouped, calibrated and ranked findings") { db in
            // One finding per exchange and code names every cookie it concerns (`subjects`,
            // a JSON array; `subject` stays the first); a finding the model cannot be sure
            // of carries its likelihood; every finding its rank.
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN subjects TEXT")
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN likelihood REAL")
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN rank TEXT")
        }
        migrator.registerMigration("v10: offline package and prefetch coverage") { db in
            // Per recording and preset of a run: each request's offline-package verdict
            // (hit, stale, miss, not-interceptable) and each prefetched call's (hit,
            // mismatch, stale, unused); the `coverage` view counts them.
            try db.execute(sql: """
                CREATE TABLE coverage_item (
                  id INTEGER PRIMARY KEY,
                  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                  recording_name TEXT NOT NULL,
                  preset TEXT NOT NULL,
                  kind TEXT NOT NULL,
                  sequence INTEGER NOT NULL,
                  verdict TEXT NOT NULL,
                  method TEXT NOT NULL,
                  url TEXT NOT NULL,
                  detail TEXT NOT NULL)
                """)
            try db.execute(sql: "CREATE INDEX coverage_by_run ON coverage_item(run_id, recording_name, preset)")
            try db.execute(sql: """
                CREATE VIEW coverage AS
                SELECT run_id, recording_name, preset,
                  SUM(kind = 'offline' AND verdict = 'hit') AS offline_hit,
                  SUM(kind = 'offline' AND verdict = 'stale') AS offline_stale,
                  SUM(kind = 'offline' AND verdict = 'miss') AS offline_miss,
                  SUM(kind = 'offline' AND verdict = 'not-interceptable') AS offline_not_interceptable,
                  SUM(kind = 'prefetch' AND verdict = 'hit') AS prefetch_hit,
                  SUM(kind = 'prefetch' AND verdict = 'mismatch') AS prefetch_mismatch,
                  SUM(kind = 'prefetch' AND verdict = 'stale') AS prefetch_stale,
                  SUM(kind = 'prefetch' AND verdict = 'unused') AS prefetch_unused
                FROM coverage_item GROUP BY run_id, recording_name, preset
                """)
        }
        migrator.registerMigration("v11: arrivals stored as they come") { db in
            // A `serve` session in progress: the recordings it serves and each arrival as it
            // reached the server, so that a session of hours keeps none in memory and a
            // killed one loses at most the arrival in flight. When the session ends its
            // arrivals move to `arrival` under the observed run; a session still here was
            // cut off, and the next `serve` stores it as a run.
            try db.execute(sql: """
                CREATE TABLE serve_session (
                  id INTEGER PRIMARY KEY,
                  started_at TEXT NOT NULL,
                  label TEXT,
                  recordings TEXT NOT NULL)
                """)
            try db.execute(sql: """
                CREATE TABLE pending_arrival (
                  session_id INTEGER NOT NULL REFERENCES serve_session(id) ON DELETE CASCADE,
                  position INTEGER NOT NULL,
                  time REAL NOT NULL,
                  method TEXT NOT NULL,
                  target TEXT NOT NULL,
                  headers TEXT NOT NULL,
                  body_sha256 TEXT NOT NULL REFERENCES body(sha256),
                  body_length INTEGER NOT NULL,
                  recording_name TEXT,
                  sequence INTEGER,
                  status INTEGER NOT NULL,
                  PRIMARY KEY (session_id, position))
                """)
        }
        migrator.registerMigration("v12: findings indexed in the order a run writes them") { db in
            // A run writes its findings recording by recording, each recording's presets
            // together, so an index led by the recording name grows at one place instead of
            // at every preset and code at once; it also answers the report's order (recording,
            // preset, sequence, code, id) and the matrix's join without a sort.
            try db.execute(sql: "DROP INDEX finding_by_run")
            try db.execute(sql: "CREATE INDEX finding_by_run ON finding(run_id, recording_name, preset, sequence, code)")
        }
        migrator.registerMigration("v13: one index per run lookup of outcomes") { db in
            // outcome_by_run (run, recording, preset) serves every lookup by run, the
            // cascade from a deleted run among them; a second index on the run alone only
            // cost every stored outcome one more b-tree insert.
            try db.execute(sql: "DROP INDEX outcome_on_run_id")
        }
        migrator.registerMigration("v14: finding details stored as their parts") { db in
            // A finding keeps its sentence's form and values; a report renders the words
            // when it shows the finding. Rows written before keep their whole sentence in
            // `detail`.
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN detail_form TEXT")
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN detail_values TEXT")
            try db.execute(sql: "DROP VIEW new_finding")
            try db.execute(sql: """
                CREATE VIEW new_finding AS
                SELECT f.run_id, b.id AS baseline_run_id, f.preset, f.code, f.severity, f.recording_name,
                       f.sequence, f.method, f.url, f.subject, f.rules, f.confidence, f.message, f.detail,
                       f.detail_form, f.detail_values
                FROM finding f JOIN run b ON b.id <> f.run_id
                WHERE NOT EXISTS (
                  SELECT 1 FROM finding g
                  WHERE g.run_id = b.id AND g.preset = f.preset AND g.code = f.code AND g.recording_name = f.recording_name
                    AND g.sequence = f.sequence AND g.method = f.method AND g.url = f.url AND g.subject IS f.subject)
                """)
        }
        migrator.registerMigration("v15: bodies kept in the coding they crossed the wire in") { db in
            // A capture's compressed response is stored as it came, with its
            // Content-Encoding, and decoded when read: a fifth to a tenth of the bytes, and of
            // an import's writing. NULL: the content is the body. `length` stays the body's.
            try db.execute(sql: "ALTER TABLE body ADD COLUMN coding TEXT")
        }
        migrator.registerMigration("v16: a run's rows name their recording, not its row") { db in
            // Every query of outcomes and findings reads the recording's name; the row id
            // beside it was read by nothing, yet its foreign key needed an index, one more
            // b-tree insert for every stored outcome and finding (a tenth of a finding's
            // cost), so that deleting a recording would not scan them all. The two tables
            // are made again without it, their rows and ids kept.
            try db.execute(sql: """
                DROP VIEW findings_per_preset_code;
                DROP VIEW run_matrix;
                DROP VIEW new_finding;
                CREATE TABLE outcome_v16 (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                  recording_name TEXT NOT NULL, preset TEXT NOT NULL, sequence INTEGER NOT NULL,
                  delivered_method TEXT NOT NULL, delivered_url TEXT NOT NULL, delivered_body_length INTEGER NOT NULL,
                  delivered_body_sha256 TEXT NOT NULL, sent_cookie_names TEXT NOT NULL, page_url TEXT, changes TEXT NOT NULL);
                INSERT INTO outcome_v16 (id, run_id, recording_name, preset, sequence, delivered_method, delivered_url,
                    delivered_body_length, delivered_body_sha256, sent_cookie_names, page_url, changes)
                  SELECT id, run_id, recording_name, preset, sequence, delivered_method, delivered_url,
                    delivered_body_length, delivered_body_sha256, sent_cookie_names, page_url, changes FROM outcome ORDER BY id;
                DROP TABLE outcome;
                ALTER TABLE outcome_v16 RENAME TO outcome;
                CREATE INDEX outcome_by_run ON outcome(run_id, recording_name, preset);
                CREATE TABLE finding_v16 (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                  preset TEXT NOT NULL, code TEXT NOT NULL, severity TEXT NOT NULL, recording_name TEXT NOT NULL,
                  sequence INTEGER NOT NULL, method TEXT NOT NULL, url TEXT NOT NULL, subject TEXT, rules TEXT NOT NULL,
                  confidence TEXT NOT NULL, message TEXT NOT NULL, expected TEXT NOT NULL, actual TEXT NOT NULL,
                  detail TEXT, alternative TEXT, subjects TEXT, likelihood REAL, rank TEXT, detail_form TEXT, detail_values TEXT);
                INSERT INTO finding_v16 (id, run_id, preset, code, severity, recording_name, sequence, method, url, subject, rules,
                    confidence, message, expected, actual, detail, alternative, subjects, likelihood, rank, detail_form, detail_values)
                  SELECT id, run_id, preset, code, severity, recording_name, sequence, method, url, subject, rules,
                    confidence, message, expected, actual, detail, alternative, subjects, likelihood, rank, detail_form, detail_values
                  FROM finding ORDER BY id;
                DROP TABLE finding;
                ALTER TABLE finding_v16 RENAME TO finding;
                CREATE INDEX finding_by_run ON finding(run_id, recording_name, preset, sequence, code);
                CREATE VIEW findings_per_preset_code AS
                SELECT run_id, preset, code, severity, COUNT(*) AS findings
                FROM finding GROUP BY run_id, preset, code, severity;
                CREATE VIEW run_matrix AS
                SELECT o.run_id, o.recording_name, o.preset,
                       COUNT(f.id) FILTER (WHERE f.severity = 'error') AS errors,
                       COUNT(f.id) FILTER (WHERE f.severity = 'warning') AS warnings,
                       COUNT(f.id) FILTER (WHERE f.severity = 'info') AS infos
                FROM (SELECT DISTINCT run_id, recording_name, preset FROM outcome) o
                LEFT JOIN finding f ON f.run_id = o.run_id AND f.recording_name = o.recording_name AND f.preset = o.preset
                GROUP BY o.run_id, o.recording_name, o.preset;
                CREATE VIEW new_finding AS
                SELECT f.run_id, b.id AS baseline_run_id, f.preset, f.code, f.severity, f.recording_name,
                       f.sequence, f.method, f.url, f.subject, f.rules, f.confidence, f.message, f.detail,
                       f.detail_form, f.detail_values
                FROM finding f JOIN run b ON b.id <> f.run_id
                WHERE NOT EXISTS (
                  SELECT 1 FROM finding g
                  WHERE g.run_id = b.id AND g.preset = f.preset AND g.code = f.code AND g.recording_name = f.recording_name
                    AND g.sequence = f.sequence AND g.method = f.method AND g.url = f.url AND g.subject IS f.subject);
                """)
        }
        migrator.registerMigration("v17: cookie provenance clustered by exchange") { db in
            // A provenance row was two b-tree writes: the table's rowid tree, and the primary
            // key's index (cookie_sent) or recording_id's (cookie_inference). Keyed by
            // (recording, sequence, position) WITHOUT ROWID, a row is one write, appended
            // in the order an import makes them, and the key serves every lookup and
            // cascade by recording. An inference's id only ordered one exchange's events:
            // its position within them does that now.
            try db.execute(sql: """
                CREATE TABLE cookie_sent_v17 (
                  recording_id INTEGER NOT NULL REFERENCES recording(id) ON DELETE CASCADE,
                  sequence INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, provenance TEXT NOT NULL,
                  set_by INTEGER, set_by_hop INTEGER,
                  PRIMARY KEY (recording_id, sequence, position)) WITHOUT ROWID;
                INSERT INTO cookie_sent_v17 (recording_id, sequence, position, name, provenance, set_by, set_by_hop)
                  SELECT recording_id, sequence, position, name, provenance, set_by, set_by_hop FROM cookie_sent;
                DROP TABLE cookie_sent;
                ALTER TABLE cookie_sent_v17 RENAME TO cookie_sent;
                CREATE TABLE cookie_inference_v17 (
                  recording_id INTEGER NOT NULL REFERENCES recording(id) ON DELETE CASCADE,
                  sequence INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
                  domain TEXT NOT NULL, path TEXT NOT NULL, window_start DOUBLE,
                  PRIMARY KEY (recording_id, sequence, position)) WITHOUT ROWID;
                INSERT INTO cookie_inference_v17 (recording_id, sequence, position, name, kind, domain, path, window_start)
                  SELECT recording_id, sequence, ROW_NUMBER() OVER (PARTITION BY recording_id, sequence ORDER BY id) - 1,
                    name, kind, domain, path, window_start FROM cookie_inference;
                DROP TABLE cookie_inference;
                ALTER TABLE cookie_inference_v17 RENAME TO cookie_inference;
                """)
        }
        migrator.registerMigration("v18: findings the baseline preset shares, and the run's baseline") { db in
            // A finding the run's baseline preset (plain) also has on the same exchange is
            // the web view's own, not the strategy's: reports count it once, apart.
            try db.execute(sql: """
                ALTER TABLE finding ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE run ADD COLUMN baseline_preset TEXT;
                """)
        }
        migrator.registerMigration("v19: when each response's head arrived") { db in
            // Seconds after started_at; NULL where the recording does not say. A browser
            // stores a Set-Cookie when the head arrives, so requests that left before it
            // went without the cookie.
            try db.execute(sql: "ALTER TABLE exchange ADD COLUMN response_start REAL")
        }
        migrator.registerMigration("v20: every recording of a run, empty ones too") { db in
            // A recording with no exchange has no outcome row, and so fell out of the run:
            // each recording a run replayed is listed here, `empty` when it had nothing,
            // with how many of its exchanges a page sent (0: nothing the web view sent was
            // compared; NULL: not counted).
            try db.execute(sql: """
                CREATE TABLE run_recording (
                  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                  recording_name TEXT NOT NULL,
                  empty INTEGER NOT NULL,
                  page_exchanges INTEGER,
                  PRIMARY KEY (run_id, recording_name)) WITHOUT ROWID
                """)
        }
        migrator.registerMigration("v21: WebSocket messages") { db in
            // Each message of a recorded WebSocket (HAR's `_webSocketMessages`), under its
            // handshake's exchange in the order it crossed: which way (send: the client's,
            // receive: the server's), when (seconds since 1970), the opcode (1 text, 2
            // binary) and the payload, stored as a body so that repeated messages (a
            // heartbeat) are stored once.
            //
            // A recording stored before kept its handshakes without their messages. One
            // holding a handshake (status 101) forgets its source's hash, so that importing
            // the file again with --replace stores it whole instead of leaving it unchanged.
            try db.execute(sql: """
                CREATE TABLE websocket_message (
                  recording_id INTEGER NOT NULL REFERENCES recording(id) ON DELETE CASCADE,
                  sequence INTEGER NOT NULL,
                  position INTEGER NOT NULL,
                  direction TEXT NOT NULL,
                  time REAL NOT NULL,
                  opcode INTEGER NOT NULL,
                  data_sha256 TEXT NOT NULL REFERENCES body(sha256),
                  length INTEGER NOT NULL,
                  PRIMARY KEY (recording_id, sequence, position)) WITHOUT ROWID;
                UPDATE recording SET source_sha256 = NULL
                  WHERE id IN (SELECT DISTINCT recording_id FROM exchange WHERE status = 101);
                """)
        }
        migrator.registerMigration("v22: what each finding rests on") { db in
            // The inferences a finding rests on (a cookie's source, the sending frame or API),
            // a JSON array of `FindingInference.stored` lines; NULL for none and for findings
            // stored before.
            try db.execute(sql: "ALTER TABLE finding ADD COLUMN inferences TEXT")
        }
        migrator.registerMigration("v23: cells whose preset the recording never exercised") { db in
            // A preset with no mitigation whose interceptor and app shell no exchange of the
            // recording went through: its clean cell reads `n/a`, not `ok`.
            try db.execute(sql: """
                CREATE TABLE idle_cell (
                  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                  recording_name TEXT NOT NULL,
                  preset TEXT NOT NULL,
                  PRIMARY KEY (run_id, recording_name, preset)) WITHOUT ROWID
                """)
        }
        migrator.registerMigration("v24: cookie provenance whole: values, attributes, write times") { db in
            // Each cookie's value, and an inference's whole cookie (attributes, creation time
            // and order) with the latest time its write can have happened (`written_by`):
            // what a replay needs, so that a recording replayed by name loads its provenance
            // instead of walking it again. The values are those of the exchanges' Cookie and
            // Set-Cookie headers, which the store keeps as recorded (stand-ins after
            // `import --redact`, which redacts before the walk): the same data, twice.
            //
            // Rows stored before have none of these: their recordings are listed as waiting
            // for provenance (v7's table), which the pipeline walks again when it opens the
            // store; until then loading walks them, as before. A NULL value in a row written
            // since says the same (a text SQLite would give back cut short).
            try db.execute(sql: """
                ALTER TABLE cookie_sent ADD COLUMN value TEXT;
                ALTER TABLE cookie_inference ADD COLUMN value TEXT;
                ALTER TABLE cookie_inference ADD COLUMN host_only INTEGER;
                ALTER TABLE cookie_inference ADD COLUMN expiry REAL;
                ALTER TABLE cookie_inference ADD COLUMN secure INTEGER;
                ALTER TABLE cookie_inference ADD COLUMN http_only INTEGER;
                ALTER TABLE cookie_inference ADD COLUMN same_site TEXT;
                ALTER TABLE cookie_inference ADD COLUMN creation REAL;
                ALTER TABLE cookie_inference ADD COLUMN last_access REAL;
                ALTER TABLE cookie_inference ADD COLUMN creation_order INTEGER;
                ALTER TABLE cookie_inference ADD COLUMN written_by REAL;
                INSERT OR IGNORE INTO provenance_pending (recording_id)
                  SELECT DISTINCT recording_id FROM cookie_sent UNION SELECT DISTINCT recording_id FROM cookie_inference;
                """)
        }
        return migrator
    }
}
