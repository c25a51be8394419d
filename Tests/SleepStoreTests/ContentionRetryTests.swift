import GRDB
@testable import SleepStore
import Synchronization
import Testing

/// SQLITE_PROTOCOL (a WAL lock SQLite could not take under heavy load; once seen here at a
/// COMMIT while two builds ran beside the tests) is run again rather than failing a night's
/// write; every other error is the caller's at once.
@Suite struct ContentionRetryTests {
    @Test func aContendedAccessIsRunAgainUntilItGoesThrough() async throws {
        let attempts = Atomic<Int>(0)
        let value = try await NightStore.retryingWhenContended(pauses: [.zero, .zero, .zero]) {
            if attempts.add(1, ordering: .relaxed).newValue < 3 { throw DatabaseError(resultCode: .SQLITE_PROTOCOL) }
            return 42
        }
        #expect(value == 42 && attempts.load(ordering: .relaxed) == 3)
    }

    @Test func itGivesUpAfterThePausesWithSQLitesError() async throws {
        let attempts = Atomic<Int>(0)
        await #expect {
            try await NightStore.retryingWhenContended(pauses: [.zero, .zero]) { () async throws -> Int in
                attempts.add(1, ordering: .relaxed)
                throw DatabaseError(resultCode: .SQLITE_PROTOCOL)
            }
        } throws: { ($0 as? DatabaseError)?.resultCode == .SQLITE_PROTOCOL }
        #expect(attempts.load(ordering: .relaxed) == 3)
    }

    @Test func otherErrorsAreNotRetried() async throws {
        for code in [ResultCode.SQLITE_FULL, .SQLITE_CONSTRAINT, .SQLITE_BUSY, .SQLITE_READONLY] {
            let attempts = Atomic<Int>(0)
            await #expect {
                try await NightStore.retryingWhenContended(pauses: [.zero, .zero]) { () async throws -> Int in
                    attempts.add(1, ordering: .relaxed)
                    throw DatabaseError(resultCode: code)
                }
            } throws: { ($0 as? DatabaseError)?.resultCode == code }
            #expect(attempts.load(ordering: .relaxed) == 1, "\(code)")
        }
    }
}
