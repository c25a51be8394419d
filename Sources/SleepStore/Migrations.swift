import GRDB

/// The versioned schema. Migrations are append-only: a shipped migration is never edited,
/// a change is a new migration, so any database an older podbridge wrote opens and migrates.
///
/// - `v1`: pods, sessions, epochs, stage blocks, outbox (the first released schema).
/// - `v2`: schedule in force + history; the backend's session id and the failure reason on
///   sessions; outbox leases (claim token and expiry) so no two workers post the same
///   session at once; Apple Health values stored on stage blocks (backfilled).
/// - `v3` (additive): the schedule service's state: the full pod schedule in force per side
///   with its origin, the user's manual schedule per side, every command pushed to a pod with
///   the pod's answer, and the alarm events pods report.
/// - `v4`: drops v2's `schedule_in_force` and `schedule_history`, which nothing used once
///   v3's schedule state replaced them.
/// - `v5` (additive): smart wake: the wake window and "until out of bed" set per side
///   (`wake_settings`, overriding the configuration), and one record per side and window of
///   how the alarm went (`wake_records`: the window, when and why it fired, repeats, snoozes).
package enum StoreMigrations {
    /// Identifiers of all migrations, oldest first.
    package static let versions = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "presence_power_changes",
                                         "presence_power_sides"]

    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE pods (
                    serial     TEXT PRIMARY KEY NOT NULL,
                    firmware   TEXT,
                    first_seen INTEGER NOT NULL,
                    last_seen  INTEGER NOT NULL
                );
                CREATE TABLE sessions (
                    id           INTEGER PRIMARY KEY AUTOINCREMENT,
                    source_id    TEXT NOT NULL UNIQUE,
                    pod_serial   TEXT NOT NULL REFERENCES pods(serial) ON DELETE RESTRICT,
                    side         TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    start_time   INTEGER NOT NULL,
                    end_time     INTEGER NOT NULL CHECK (end_time > start_time),
                    wake_date    TEXT NOT NULL,
                    time_zone    TEXT NOT NULL,
                    is_final     INTEGER NOT NULL,
                    time_in_bed_min     REAL NOT NULL,
                    total_sleep_min     REAL NOT NULL,
                    efficiency          REAL NOT NULL,
                    onset_latency_min   REAL NOT NULL,
                    waso_min            REAL NOT NULL,
                    awakenings          INTEGER NOT NULL,
                    awake_min REAL NOT NULL, core_min REAL NOT NULL, deep_min REAL NOT NULL, rem_min REAL NOT NULL,
                    awake_pct REAL NOT NULL, core_pct REAL NOT NULL, deep_pct REAL NOT NULL, rem_pct REAL NOT NULL,
                    mean_hr      REAL,
                    mean_hrv     REAL,
                    mean_br      REAL,
                    score        INTEGER NOT NULL,
                    analyzed_at  INTEGER NOT NULL,
                    sync_status  TEXT NOT NULL CHECK (sync_status IN ('local', 'pending', 'synced', 'failed'))
                );
                CREATE INDEX sessions_wake_date ON sessions(wake_date);
                CREATE INDEX sessions_pod_side_time ON sessions(pod_serial, side, start_time);
                CREATE TABLE epochs (
                    session_id     INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    start_time     INTEGER NOT NULL,
                    stage          TEXT NOT NULL CHECK (stage IN ('awake', 'core', 'deep', 'rem')),
                    p_awake REAL, p_core REAL, p_deep REAL, p_rem REAL,
                    heart_rate     REAL,
                    hrv_rmssd      REAL,
                    breathing_rate REAL,
                    movement       REAL,
                    PRIMARY KEY (session_id, start_time)
                ) WITHOUT ROWID;
                CREATE INDEX epochs_start ON epochs(start_time);
                CREATE TABLE stage_blocks (
                    id          INTEGER PRIMARY KEY AUTOINCREMENT,
                    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    stage       TEXT NOT NULL CHECK (stage IN ('in_bed', 'awake', 'core', 'deep', 'rem')),
                    start_time  INTEGER NOT NULL,
                    end_time    INTEGER NOT NULL CHECK (end_time > start_time)
                );
                CREATE INDEX stage_blocks_session ON stage_blocks(session_id);
                CREATE TABLE outbox (
                    id              INTEGER PRIMARY KEY AUTOINCREMENT,
                    session_id      INTEGER NOT NULL UNIQUE REFERENCES sessions(id) ON DELETE CASCADE,
                    event_type      TEXT NOT NULL,
                    status          TEXT NOT NULL CHECK (status IN ('pending', 'in_flight', 'delivered', 'failed')),
                    attempts        INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    last_error      TEXT,
                    created_at      INTEGER NOT NULL,
                    updated_at      INTEGER NOT NULL
                );
                CREATE INDEX outbox_due ON outbox(status, next_attempt_at);
                """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                ALTER TABLE sessions ADD COLUMN backend_session_id TEXT;
                ALTER TABLE sessions ADD COLUMN sync_error TEXT;
                ALTER TABLE outbox ADD COLUMN claim_token TEXT;
                ALTER TABLE outbox ADD COLUMN claimed_until INTEGER;
                ALTER TABLE stage_blocks ADD COLUMN health_value INTEGER NOT NULL DEFAULT -1;
                UPDATE stage_blocks SET health_value = CASE stage
                    WHEN 'in_bed' THEN 0 WHEN 'awake' THEN 2 WHEN 'core' THEN 3
                    WHEN 'deep' THEN 4 WHEN 'rem' THEN 5 END;
                UPDATE sessions SET sync_error = (SELECT last_error FROM outbox WHERE outbox.session_id = sessions.id)
                    WHERE sync_status = 'failed';
                -- A v1 worker stopped mid-post left 'in_flight' rows without a lease: make them due again.
                UPDATE outbox SET status = 'pending' WHERE status = 'in_flight';
                CREATE TABLE schedule_in_force (
                    pod_serial      TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side            TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    power_on        TEXT NOT NULL,
                    power_off       TEXT NOT NULL,
                    weekday_mask    INTEGER NOT NULL CHECK (weekday_mask BETWEEN 0 AND 127),
                    alarm_time      TEXT,
                    alarm_intensity INTEGER,
                    alarm_pattern   TEXT,
                    alarm_duration_s INTEGER,
                    source          TEXT NOT NULL CHECK (source IN ('manual', 'inferred')),
                    time_zone       TEXT NOT NULL,
                    set_at          INTEGER NOT NULL,
                    pushed_at       INTEGER,
                    PRIMARY KEY (pod_serial, side)
                );
                CREATE TABLE schedule_history (
                    id              INTEGER PRIMARY KEY AUTOINCREMENT,
                    pod_serial      TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side            TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    power_on        TEXT NOT NULL,
                    power_off       TEXT NOT NULL,
                    weekday_mask    INTEGER NOT NULL,
                    alarm_time      TEXT,
                    alarm_intensity INTEGER,
                    alarm_pattern   TEXT,
                    alarm_duration_s INTEGER,
                    source          TEXT NOT NULL,
                    time_zone       TEXT NOT NULL,
                    set_at          INTEGER NOT NULL
                );
                CREATE INDEX schedule_history_pod_side ON schedule_history(pod_serial, side, set_at);
                """)
        }
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE pod_schedule (
                    pod_serial      TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side            TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    origin          TEXT NOT NULL CHECK (origin IN ('manual', 'inferred', 'default')),
                    schedule_json   TEXT NOT NULL,
                    summary         TEXT NOT NULL,
                    reason          TEXT NOT NULL,
                    time_zone       TEXT NOT NULL,
                    set_at          INTEGER NOT NULL,
                    acknowledged_at INTEGER,
                    PRIMARY KEY (pod_serial, side)
                );
                CREATE TABLE manual_schedule (
                    pod_serial       TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side             TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    weekday_bedtime  TEXT NOT NULL,
                    weekday_wake     TEXT NOT NULL,
                    weekend_bedtime  TEXT NOT NULL,
                    weekend_wake     TEXT NOT NULL,
                    set_at           INTEGER NOT NULL,
                    PRIMARY KEY (pod_serial, side)
                );
                CREATE TABLE schedule_pushes (
                    id          INTEGER PRIMARY KEY AUTOINCREMENT,
                    pod_serial  TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    sent_at     INTEGER NOT NULL,
                    command     TEXT NOT NULL,
                    description TEXT NOT NULL,
                    attempt     INTEGER NOT NULL CHECK (attempt >= 1),
                    outcome     TEXT NOT NULL CHECK (outcome IN ('ack', 'nack', 'timeout', 'link_lost')),
                    status      TEXT,
                    detail      TEXT
                );
                CREATE INDEX schedule_pushes_pod ON schedule_pushes(pod_serial, id);
                CREATE TABLE pod_events (
                    id          INTEGER PRIMARY KEY AUTOINCREMENT,
                    pod_serial  TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    at          INTEGER NOT NULL,
                    kind        TEXT NOT NULL,
                    side        TEXT CHECK (side IS NULL OR side IN ('left', 'right')),
                    argument    INTEGER NOT NULL,
                    description TEXT NOT NULL
                );
                CREATE INDEX pod_events_pod ON pod_events(pod_serial, at);
                """)
        }
        migrator.registerMigration("v4") { db in
            try db.execute(sql: """
                DROP TABLE schedule_history;
                DROP TABLE schedule_in_force;
                """)
        }
        migrator.registerMigration("v5") { db in
            try db.execute(sql: """
                CREATE TABLE wake_settings (
                    pod_serial       TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side             TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    window_minutes   INTEGER NOT NULL CHECK (window_minutes BETWEEN 0 AND 120),
                    until_out_of_bed INTEGER NOT NULL,
                    set_at           INTEGER NOT NULL,
                    PRIMARY KEY (pod_serial, side)
                );
                CREATE TABLE wake_records (
                    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
                    pod_serial         TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side               TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    wake_date          TEXT NOT NULL,
                    window_start       INTEGER NOT NULL,
                    window_end         INTEGER NOT NULL CHECK (window_end >= window_start),
                    window_minutes     INTEGER NOT NULL,
                    decided_at         INTEGER,
                    reason             TEXT,
                    stage              TEXT,
                    stage_probability  REAL,
                    movement           REAL,
                    heart_rate_rise    REAL,
                    minutes_before_end REAL,
                    triggered          INTEGER NOT NULL DEFAULT 0,
                    trigger_error      TEXT,
                    fired_at           INTEGER,
                    repeats            INTEGER NOT NULL DEFAULT 0,
                    snoozes            INTEGER NOT NULL DEFAULT 0,
                    out_of_bed_at      INTEGER,
                    UNIQUE (pod_serial, side, window_end)
                );
                CREATE INDEX wake_records_date ON wake_records(wake_date, side);
                """)
        }
        // Releases before v6 stored the hub's nights with efficiency as a fraction (0–1)
        // although the column, exports and API say percent. A night truly under 1 % asleep
        // is not a night anyone keeps, so every value ≤ 1 is such a fraction.
        migrator.registerMigration("v6") { db in
            try db.execute(sql: "UPDATE sessions SET efficiency = efficiency * 100 WHERE efficiency <= 1")
        }
        migrator.registerMigration("v7") { db in
            try db.execute(sql: """
                CREATE TABLE alarm_switches (
                    pod_serial TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side       TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    enabled    INTEGER NOT NULL,
                    set_at     INTEGER NOT NULL,
                    PRIMARY KEY (pod_serial, side)
                );
                """)
        }
        // The open stay of each side, so a hub restarted in the night carries the night on
        // (OpenStays.swift).
        migrator.registerMigration("v8") { db in
            try db.execute(sql: """
                CREATE TABLE open_stays (
                    pod_serial  TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side        TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    last_second INTEGER NOT NULL,
                    saved_at    INTEGER NOT NULL,
                    data        BLOB NOT NULL,
                    PRIMARY KEY (pod_serial, side)
                );
                """)
        }
        // How often the sleeper went back to bed after smart wake saw them up (WakeState.swift).
        migrator.registerMigration("v9") { db in
            try db.execute(sql: "ALTER TABLE wake_records ADD COLUMN returns_to_bed INTEGER NOT NULL DEFAULT 0")
        }
        // Each power change presence-driven power made, with its reason (PresencePowerLog.swift).
        // Named, not numbered: other migrations may be added beside it.
        migrator.registerMigration("presence_power_changes") { db in
            try db.execute(sql: """
                CREATE TABLE presence_power_changes (
                    id         INTEGER PRIMARY KEY AUTOINCREMENT,
                    pod_serial TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side       TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    at         INTEGER NOT NULL,
                    action     TEXT NOT NULL CHECK (action IN ('off', 'on', 'hold')),
                    until      INTEGER,
                    reason     TEXT NOT NULL,
                    text       TEXT NOT NULL,
                    outcome    TEXT NOT NULL
                );
                CREATE INDEX presence_power_changes_at ON presence_power_changes(pod_serial, at);
                """)
        }
        // Presence-driven power set per side at run time, and its count of empty nights
        // (PresencePowerSides.swift). `settings` is the side's rules as JSON.
        migrator.registerMigration("presence_power_sides") { db in
            try db.execute(sql: """
                CREATE TABLE presence_power_sides (
                    pod_serial   TEXT NOT NULL REFERENCES pods(serial) ON DELETE CASCADE,
                    side         TEXT NOT NULL CHECK (side IN ('left', 'right')),
                    enabled      INTEGER,
                    settings     TEXT,
                    empty_nights INTEGER NOT NULL DEFAULT 0 CHECK (empty_nights >= 0),
                    set_at       INTEGER NOT NULL,
                    PRIMARY KEY (pod_serial, side)
                );
                """)
        }
        return migrator
    }
}
