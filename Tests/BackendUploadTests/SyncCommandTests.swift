import Foundation
import Testing
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
        let r = try await runPodbridge(["sync", "--state-dir", state, "--url", url])
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
        let r = try await runPodbridge(["sync", "--state-dir", state, "--url", backend.baseURL])
        try await backend.shutdown()
        #expect(r.status == 75, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stdout.contains("will retry: 1") && r.stdout.contains("503"), "stdout: \(r.stdout)")
    }

    @Test func aRefusedTokenExitsOneAndNamesTheSetting() async throws {
        let (dir, state, id) = try await stateWithOneQueuedNight()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        backend.script(id, [.status(401, "bad token")])
        let r = try await runPodbridge(["sync", "--state-dir", state, "--url", backend.baseURL, "--token", "wrong"])
        try await backend.shutdown()
        #expect(r.status == 1, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stderr.contains("--token"), "stderr: \(r.stderr)")
        #expect(r.stdout.contains("left queued (token refused): 1") && r.stdout.contains("failed: 0"), "stdout: \(r.stdout)")
        let store = try NightStore(path: state + "/podbridge.sqlite", timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.session(sourceID: id)?.syncStatus == .pending)
    }

    @Test func aDeliveredBacklogExitsZeroAndARepeatFindsNothingToDo() async throws {
        let (dir, state, id) = try await stateWithOneQueuedNight()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let first = try await runPodbridge(["sync", "--state-dir", state, "--url", backend.baseURL])
        let second = try await runPodbridge(["sync", "--state-dir", state, "--url", backend.baseURL])
        try await backend.shutdown()
        #expect(first.status == 0 && first.stdout.contains("delivered: 1"), "stdout: \(first.stdout)\nstderr: \(first.stderr)")
        #expect(second.status == 0 && second.stdout.contains("delivered: 0"), "stdout: \(second.stdout)\nstderr: \(second.stderr)")
        #expect(backend.storedCount(id) == 1)
    }
}

/// Runs the `podbridge` executable built beside the tests to its end, with no standard input.
func runPodbridge(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var binary: URL?
    for _ in 0..<4 where binary == nil {
        let candidate = dir.appendingPathComponent("podbridge")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { binary = candidate }
        dir = dir.deletingLastPathComponent()
    }
    guard let binary else { throw CommandMissing() }
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        process.terminationHandler = { _ in continuation.resume() }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    // The command prints a few lines: the pipes hold them until it has ended.
    let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (process.terminationStatus, stdout, stderr)
}

struct CommandMissing: Error, CustomStringConvertible {
    var description: String { "podbridge must be built beside the tests" }
}
