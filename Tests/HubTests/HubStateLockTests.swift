import Foundation
import Hub
import Testing

/// One hub per database: the lock is refused while held (by another open of the file, as a
/// second process would hold it), names its owner, and is free again once released.
@Suite struct HubStateLockTests {
    @Test func aSecondHoldIsRefusedWithTheOwnersPidUntilTheFirstIsReleased() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-lock-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("podbridge.sqlite").path

        let first = try HubStateLock(database: database)
        #expect(first.path == database + ".lock")
        #expect(throws: HubStateLockError.held(database: database, pid: getpid())) { try HubStateLock(database: database) }
        first.release()
        let second = try HubStateLock(database: database)
        second.release()
    }

    @Test func aLockThatCannotBeMadeSaysWhere() throws {
        let database = "/nonexistent-\(UUID())/podbridge.sqlite"
        #expect {
            try HubStateLock(database: database)
        } throws: { error in
            guard case let .unusable(path, reason) = error as? HubStateLockError else { return false }
            return path == database + ".lock" && reason.contains("No such file")
        }
    }
}
