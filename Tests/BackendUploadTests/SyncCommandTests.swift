import Foundation
import Testing
import TestSupport
import SleepStore

/// `podbridge sync` as a timer or a script runs it: the built executable against a real
/// database and a real HTTP backend on 127.0.0.1, judged by its exit status. A backlog left
/// queued used to exit 0, so a script could not tell "nothing uploaded" from "all uploaded".
@Suite struct SyncCommandTests {
    /// A state directory holding the hub's database with one final night queued for upload.
    func stateWithOneQueuedNight() async throws -> (dir: TempDir, state: String, sourceID: String) {
        let dir = try TempDir()
        let state = dir.path("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let store = try NightStore(path: state + "/podbridge.sqlite", timeZone: TimeZone(identifier: "UTC")!)
        let id = try await store.save(testNight(start: 1_705_400_000)).sourceID
        return (dir, state, id)
    }

    @Test func aBackendThatIsNotThereExitsTemporaryFailureAndKeepsTheNightQueued() async throws {
        let (dir, state, id) = try await stateWithOneQueuedNight()
        defer { dir.cleanup() }
        // A port that was just listening and is closed now: the connection is refused.
        let gone = try await ScriptedBackend()
        let url = gone.baseURL
        try await gone.shutdown()
        let r = try await CommandRunner.run(["sync", "--state-dir", state, "--url", url])
        #expect(r.status == 75, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stdout.contains("left for the next pass (backend unreachable): 0"), "stdout: \(r.stdout)")
        #expect(r.stdout.contains("will retry: 1") && r.stdout.contains("connection refused"), "stdout: \(r.stdout)")
        let store = try NightStore(path: state + "/podbridge.sqlite", timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.session(sourceID: id)?.syncStatus == .pending)
    }

    @Test func aBackendAskingForARetryExitsTemporaryFailure() async throws {
        let (dir, state, id) = try await stateWithOneQueuedNight()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        backend.script(id, [.status(503, "maintenance")])
        let r = try await CommandRunner.run(["sync", "--state-dir", state, "--url", backend.baseURL])
        try await backend.shutdown()
        #expect(r.status == 75, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stdout.contains("will retry: 1") && r.stdout.contains("503"), "stdout: \(r.stdout)")
    }

    @Test func aRefusedTokenExitsOneAndNamesTheSetting() async throws {
        let (dir, state, id) = try await stateWithOneQueuedNight()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        backend.script(id, [.status(401, "bad token")])
        let r = try await CommandRunner.run(["sync", "--state-dir", state, "--url", backend.baseURL, "--token", "wrong"])
        try await backend.shutdown()
        #expect(r.status == 1, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stderr.contains("--token"), "stderr: \(r.stderr)")
        #expect(r.stdout.contains("left queued (token refused): 1") && r.stdout.contains("failed: 0"), "stdout: \(r.stdout)")
        let store = try NightStore(path: state + "/podbridge.sqlite", timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.session(sourceID: id)?.syncStatus == .pending)
    }

    /// Ctrl-C in the middle of a post: the session is handed back at once. Killed by the
    /// signal's default action, it stayed claimed for two minutes and the next `sync` said it
    /// was "in flight elsewhere".
    @Test(.timeLimit(.minutes(1)))
    func anInterruptedSyncLeavesTheNightQueuedForTheNextOne() async throws {
        let (dir, state, id) = try await stateWithOneQueuedNight()
        defer { dir.cleanup() }
        let slow = try await ScriptedBackend(delay: .seconds(20))
        let sync = try CommandRunner.Launched(["sync", "--state-dir", state, "--url", slow.baseURL])
        #expect(await eventually(20) { slow.received.count == 1 })
        kill(sync.process.processIdentifier, SIGINT)
        #expect(try await sync.exited(within: 60))
        #expect(sync.process.terminationReason == .exit && sync.process.terminationStatus == 130, "\(sync.process.terminationStatus)")
        let printed = sync.stdout
        #expect(printed.contains("interrupted: the session being posted stays queued"), "\(printed)")
        let store = try NightStore(path: state + "/podbridge.sqlite", timeZone: TimeZone(identifier: "UTC")!)
        let events = try await store.outboxEvents()
        #expect(events.map(\.status) == [.pending] && events.map(\.attempts) == [0], "\(events)")
        try store.close()
        try await slow.shutdown()
        // The next sync posts it at once (here to a backend that answers).
        let backend = try await ScriptedBackend()
        let r = try await CommandRunner.run(["sync", "--state-dir", state, "--url", backend.baseURL])
        #expect(r.status == 0 && r.stdout.contains("delivered: 1"), "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(backend.storedCount(id) == 1)
        try await backend.shutdown()
    }

    @Test func aDeliveredBacklogExitsZeroAndARepeatFindsNothingToDo() async throws {
        let (dir, state, id) = try await stateWithOneQueuedNight()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let first = try await CommandRunner.run(["sync", "--state-dir", state, "--url", backend.baseURL])
        let second = try await CommandRunner.run(["sync", "--state-dir", state, "--url", backend.baseURL])
        try await backend.shutdown()
        #expect(first.status == 0 && first.stdout.contains("delivered: 1"), "stdout: \(first.stdout)\nstderr: \(first.stderr)")
        #expect(second.status == 0 && second.stdout.contains("delivered: 0"), "stdout: \(second.stdout)\nstderr: \(second.stderr)")
        #expect(backend.storedCount(id) == 1)
    }
}
