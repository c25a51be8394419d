import ArgumentParser
import Foundation
import SleepStore

/// Opens the database a command reads what the hub stored from (`export`, `schedule`, `sync`).
///
/// The state directory is relative to where the hub runs (docs/configuration.md), so a
/// command run elsewhere without the hub's configuration looks in the wrong place; the
/// failure says where it looked and how to point at the hub's state. A file damaged inside
/// opens and reads (its damaged tables read as empty), so it is checked as the hub checks it
/// at start: `export` used to answer "holds no sessions" for a damaged file.
enum ExistingStore {
    static func open(_ path: String) async throws -> NightStore {
        do {
            let store = try NightStore.openExisting(path: path)
            do { try await store.checkIntegrity() } catch {
                try? store.close()
                throw error
            }
            return store
        } catch {
            var message = "\(error)"
            if case StoreError.missingDatabase = error {
                message = "no database at \(URL(fileURLWithPath: path).standardizedFileURL.path): the hub has "
                    + "stored nothing there. Point at the hub's state with --config FILE (the hub's "
                    + "configuration), --state-dir DIR or --db FILE (docs/configuration.md)"
            }
            throw CommandFailure(message)
        }
    }
}
