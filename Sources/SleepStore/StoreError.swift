/// Errors the store reports; each names what was wrong so the CLI can print it as is.
package enum StoreError: Error, Equatable, CustomStringConvertible {
    /// A night that cannot be stored as given (the reason says which rule it breaks).
    case invalidNight(sourceID: String, reason: String)
    /// A schedule that cannot be stored as given.
    case invalidSchedule(String)
    /// An open stay that cannot be kept as given.
    case invalidOpenStay(String)
    /// The database file was written by a newer podbridge (unknown migrations).
    case newerSchema(unknown: [String])
    /// The database file does not exist (and opening read-only was asked for).
    case missingDatabase(path: String)
    /// The file is there but is no SQLite database (a wrong `--db`, a damaged file).
    case notADatabase(path: String)
    /// The file is another application's SQLite database: tables, none of them podbridge's.
    case foreignDatabase(path: String, tables: [String])
    /// SQLite cannot open or create the file (its directory is missing or not writable).
    case cannotOpen(path: String, reason: String)
    /// The file is there, but this user may not reach it (a hub run by systemd keeps its state
    /// root's alone): not "no database", which sent people looking in the wrong place.
    case permissionDenied(path: String)
    /// The path names a directory (a state directory given as `--db`).
    case isDirectory(path: String)
    /// The directory the database (or the hub's state) goes into cannot be made.
    case cannotCreateDirectory(path: String, reason: String)
    /// The file is podbridge's but damaged inside (SQLite's integrity check failed, or it
    /// said "malformed" on opening): refused at start, before a night is lost writing to it.
    case damaged(path: String, reason: String)
    /// The file, or the directory SQLite keeps its journal in beside it, cannot be written.
    case readOnly(path: String)
    /// Another process held the new file's lock past the busy timeout while it was opened and
    /// migrated (a CLI command starting beside the daemon): worth another try.
    case busy(path: String, reason: String)
    /// A stored row that reads as no value (text no CHECK guards, e.g. a wake date written by
    /// hand); the lists that read such a table pass it over.
    case unreadableRow(table: String, reason: String)

    /// Whether opening met another process's lock (`busy`): the one error the hub tries again.
    package var isBusy: Bool {
        if case .busy = self { true } else { false }
    }

    package var description: String {
        switch self {
        case let .invalidNight(id, reason): "cannot store session \(id): \(reason)"
        case let .invalidSchedule(reason): "cannot store schedule: \(reason)"
        case let .invalidOpenStay(reason): "cannot keep the open session: \(reason)"
        case let .newerSchema(unknown): "database was written by a newer podbridge (unknown migrations: \(unknown.joined(separator: ", ")))"
        case let .missingDatabase(path): "no database at \(path)"
        case let .notADatabase(path): "\(path) is not a podbridge database (not an SQLite file: a wrong --db, or a damaged file)"
        case let .foreignDatabase(path, tables):
            "\(path) is another application's SQLite database (tables \(tables.prefix(5).joined(separator: ", "))"
                + "\(tables.count > 5 ? ", …" : "")); podbridge leaves it untouched: give --db a file of its own"
        case let .cannotCreateDirectory(path, reason):
            "cannot create the directory \(path): \(reason)"
        case let .isDirectory(path): "\(path) is a directory, not a database file (--db takes the file, --state-dir its directory)"
        case let .damaged(path, reason):
            "the database \(path) is damaged (\(reason)): stop the hub, move the file aside and start again (a new "
                + "database is made), or restore a backup; `sqlite3 \(path) .recover` saves what is still readable"
        case let .busy(path, reason):
            "the database \(path) is busy (\(reason)): another podbridge process is opening it"
        case let .readOnly(path):
            "cannot write the database \(path): the file or its directory is read-only "
                + "(SQLite keeps its journal beside the file, so both must be writable)"
        case let .permissionDenied(path):
            "cannot read the database \(path): permission denied (the hub run by systemd keeps its state root's "
                + "alone: run the command with sudo)"
        case let .unreadableRow(table, reason): "unreadable row in \(table): \(reason)"
        case let .cannotOpen(path, reason):
            "cannot open the database \(path): \(reason) (its directory must exist and be writable)"
        }
    }
}
