import Foundation
import GRDB
import SleepDomain

// Each side's open stay (migration v8): the data of the night so far, as the hub's session
// tracker archived it at its last preliminary snapshot or at shutdown, so a hub restarted in
// the night (an upgrade, a crash, a power cut) carries the night on instead of starting a
// second one. The store keeps the bytes; their format is the tracker's (Hub's OpenStayArchive).

struct OpenStayRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "open_stays"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case podSerial = "pod_serial", side, lastSecond = "last_second", savedAt = "saved_at", data
    }
    var podSerial: String
    var side: String
    var lastSecond: Int64
    var savedAt: Int64
    var data: Data
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
            let c = OpenStayRow.Columns.self
            return try OpenStayRow.select(c.podSerial, c.side, c.lastSecond)
                .order(c.lastSecond, c.podSerial, c.side).asRequest(of: Row.self).fetchAll(db)
                .compactMap { row in
                    BedSide(rawValue: row[c.side]).map {
                        KeptOpenStay(podSerial: row[c.podSerial], side: $0, lastSecond: row[c.lastSecond])
                    }
                }
        }
    }

    /// Keeps a side's open stay, replacing the one kept before (`saved_at` from the store's clock).
    package func keepOpenStay(podSerial: String, side: BedSide, lastSecond: Int64, data: Data) async throws {
        guard !podSerial.isEmpty else { throw StoreError.invalidOpenStay("pod serial is empty") }
        let at = clock.unixSeconds()
        try await write { db in
            try PodRow.upsert(db, serial: podSerial, firmware: nil, seenAt: at)
            try OpenStayRow(podSerial: podSerial, side: side.rawValue, lastSecond: lastSecond, savedAt: at, data: data)
                .insert(db, onConflict: .replace)
        }
    }

    /// The open stay kept for a side, if any.
    package func openStay(podSerial: String, side: BedSide) async throws -> Data? {
        try await read { db in
            try OpenStayRow.filter(OpenStayRow.Columns.podSerial == podSerial && OpenStayRow.Columns.side == side.rawValue)
                .fetchOne(db)?.data
        }
    }

    /// Forgets a side's open stay (it ended, or could not be read).
    package func dropOpenStay(podSerial: String, side: BedSide) async throws {
        try await write { db in
            _ = try OpenStayRow.filter(OpenStayRow.Columns.podSerial == podSerial
                                       && OpenStayRow.Columns.side == side.rawValue).deleteAll(db)
        }
    }
}
