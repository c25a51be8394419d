import Foundation
import Testing

/// A command that reads the hub's database, run where the hub never stored anything: the
/// error says where it looked and how to point at the hub's state.
@Suite struct StoreLocationCommandTests {
    @Test(arguments: [["export", "--all"], ["schedule", "show"]])
    func aMissingDatabaseIsNamedWithWhereItWasLookedForAndHowToPointElsewhere(_ command: [String]) async throws {
        let state = CommandRunner.temporaryFile("never-ran")
        let r = try await CommandRunner.run(command + ["--state-dir", state.path])
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stderr.contains("no database at \(state.path)/podbridge.sqlite"), "\(r.stderr)")
        #expect(r.stderr.contains("--config FILE"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state.path), "the command created \(state.path)")
    }
}
