import Foundation

/// Runs a program found on PATH (schemathesis, chromium) with a deadline, and returns its
/// exit status and what it printed. Missing tools fail the test that needs them:
/// scripts/install-deps.sh installs them.
func runTool(_ arguments: [String], deadline: Double = 600) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).log")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let handle = try FileHandle(forWritingTo: log)
    process.standardOutput = handle
    process.standardError = handle
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let end = Date().addingTimeInterval(deadline)
    while process.isRunning && Date() < end { try await Task.sleep(for: .milliseconds(100)) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    try handle.close()
    let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    try? FileManager.default.removeItem(at: log)
    return (process.terminationStatus, output)
}

/// Where test artifacts (the dashboard screenshot, schemathesis' report) are kept:
/// `$PODBRIDGE_ARTIFACTS`, else `.build/test-artifacts` under the package.
func artifactsDirectory() throws -> URL {
    let env = ProcessInfo.processInfo.environment["PODBRIDGE_ARTIFACTS"]
    let url = env.map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-artifacts")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
