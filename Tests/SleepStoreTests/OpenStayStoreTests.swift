import Foundation
import GRDB
import Testing
@testable import SleepStore

/// Each side's open stay (migration v8) on a real SQLite file: one per pod and side, replaced
/// when kept again, gone when dropped, stamped by the store's clock.
@Suite struct OpenStayStoreTests {
    @Test func theStoreKeepsOneStayPerSideUntilItIsDropped() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let clock = ManualClock(1_794_866_400)
        let store = try NightStore(path: dir.path("podbridge.sqlite"), timeZone: TimeZone(identifier: "UTC")!, clock: clock)
        #expect(try await store.openStay(podSerial: "STAY1", side: .left) == nil)
        await #expect(throws: StoreError.invalidOpenStay("pod serial is empty")) {
            try await store.keepOpenStay(podSerial: "", side: .left, lastSecond: 10, data: Data([1]))
        }
        try await store.keepOpenStay(podSerial: "STAY1", side: .left, lastSecond: 10, data: Data([1, 2]))
        try await store.keepOpenStay(podSerial: "STAY1", side: .left, lastSecond: 20, data: Data([3]))
        clock.advance(by: 60)
        try await store.keepOpenStay(podSerial: "STAY1", side: .right, lastSecond: 20, data: Data([4]))
        let savedAt = try await store.pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT saved_at FROM open_stays ORDER BY side")
        }
        #expect(savedAt == [1_794_866_400, 1_794_866_460])
        #expect(try await store.openStay(podSerial: "STAY1", side: .left) == Data([3]))
        #expect(try await store.openStay(podSerial: "OTHER", side: .left) == nil)
        try await store.keepOpenStay(podSerial: "OTHER", side: .left, lastSecond: 5, data: Data([5]))
        // What is kept, without the data: oldest last second first (the hub ends those first).
        #expect(try await store.keptOpenStays() == [KeptOpenStay(podSerial: "OTHER", side: .left, lastSecond: 5),
                                                    KeptOpenStay(podSerial: "STAY1", side: .left, lastSecond: 20),
                                                    KeptOpenStay(podSerial: "STAY1", side: .right, lastSecond: 20)])
        try await store.dropOpenStay(podSerial: "OTHER", side: .left)
        try await store.dropOpenStay(podSerial: "STAY1", side: .left)
        #expect(try await store.openStay(podSerial: "STAY1", side: .left) == nil)
        #expect(try await store.openStay(podSerial: "STAY1", side: .right) == Data([4]))
        try store.close()
    }
}
