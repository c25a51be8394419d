import Foundation
import GRDB
import SleepDomain

// Each side's open stay (migration v8): the data of the night so far, as the hub's session
// tracker archived it at its last preliminary snapshot or at shutdown, so a hub restarted in
// the night (an upgrade, a crash, a power cut) carries the night on instead of starting a
// second one. The store keeps the bytes; their format is the tracker's (Hub's OpenStayArchive).

/// A side's open stay as kept: the tracker's bytes and the stay's last second, saved at
/// `savedAt` (the store's clock). Only the store reads it whole; the hub asks for the bytes
/// (`openStay`) or for which stays are kept (`KeptOpenStay`, a listing without the bytes).
struct OpenStay: FetchableRecord, PersistableRecord {
    static let databaseTableName = "open_stays"
    package enum Columns {
        static let podSerial = Column("pod_serial"), side = Column("side"), lastSecond = Column("last_second")
        static let savedAt = Column("saved_at"), data = Column("data")
    }

    var podSerial: String
    var side: BedSide
    var lastSecond: Int64
    var savedAt: Int64
    var data: Data

    init(podSerial: String, side: BedSide, lastSecond: Int64, savedAt: Int64, data: Data) {
        self.podSerial = podSerial
        self.side = side
        self.lastSecond = lastSecond
        self.savedAt = savedAt
        self.data = data
    }

    init(row: Row) {
        self.init(podSerial: row[Columns.podSerial], side: BedSide(rawValue: row[Columns.side]) ?? .left,
                  lastSecond: row[Columns.lastSecond], savedAt: row[Columns.savedAt], data: row[Columns.data])
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.lastSecond] = lastSecond
        container[Columns.savedAt] = savedAt
        container[Columns.data] = data
    }
}

/// Which open stays the store keeps, without their data.
package struct KeptOpenStay: Sendable, Hashable {
    package var podSerial: String
    package var side: BedSide
    /// The stay's last second (Unix time, from the pod's clock).
    package var lastSecond: Int64
}

extension NightStore {
    /// Every open stay kept, oldest last second first.
    package func keptOpenStays() async throws -> [KeptOpenStay] {
        try await read { db in
            typealias C = OpenStay.Columns
            return try OpenStay.select(C.podSerial, C.side, C.lastSecond)
                .order(C.lastSecond, C.podSerial, C.side).asRequest(of: Row.self).fetchAll(db)
                .compactMap { row in
                    BedSide(rawValue: row[C.side]).map {
                        KeptOpenStay(podSerial: row[C.podSerial], side: $0, lastSecond: row[C.lastSecond])
                    }
                }
        }
    }

    /// Keeps a side's open stay, replacing the one kept before (`saved_at` from the store's clock).
    package func keepOpenStay(podSerial: String, side: BedSide, lastSecond: Int64, data: Data) async throws {
        guard !podSerial.isEmpty else { throw StoreError.invalidOpenStay("pod serial is empty") }
        let at = clock.unixSeconds()
        try await write { db in
            try PodRecord.upsert(db, serial: podSerial, firmware: nil, seenAt: at)
            try OpenStay(podSerial: podSerial, side: side, lastSecond: lastSecond, savedAt: at, data: data)
                .insert(db, onConflict: .replace)
        }
    }

    /// The open stay kept for a side, if any.
    package func openStay(podSerial: String, side: BedSide) async throws -> Data? {
        try await read { db in
            try OpenStay.of(podSerial: podSerial, side: side).fetchOne(db)?.data
        }
    }

    /// Forgets a side's open stay (it ended, or could not be read).
    package func dropOpenStay(podSerial: String, side: BedSide) async throws {
        try await write { db in
            _ = try OpenStay.of(podSerial: podSerial, side: side).deleteAll(db)
        }
    }
}
