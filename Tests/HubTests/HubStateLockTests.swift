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

    /// A link to a database (or to its directory) leads to the same hub's lock: a second hub
    /// given `--db alias.sqlite` would otherwise run beside the first on its file.
    @Test func aLinkToTheDatabaseIsTheSameDatabase() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-lock-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("podbridge.sqlite").path
        try #require(FileManager.default.createFile(atPath: database, contents: Data()), "could not create \(database)")
        let alias = dir.appendingPathComponent("alias.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: "podbridge.sqlite")
        let first = try HubStateLock(database: database)
        #expect(throws: HubStateLockError.held(database: alias, pid: getpid())) { try HubStateLock(database: alias) }
        #expect(!FileManager.default.fileExists(atPath: alias + ".lock"))
        first.release()
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
