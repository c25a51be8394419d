import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The peak memory of `podbridge analyze --capture` on a night's capture: the release
/// `podbridge` beside this benchmark runs as a child process on the capture written to a
/// temporary file, and its peak resident set (the kernel's VmHWM) is read while it runs.
/// Run on the whole night and on its first eighth, so a reader sees whether memory grows
/// with the night.
func runCaptureMemoryBench(capture bytes: [UInt8], hours: Double) throws {
    let podbridge = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("podbridge").path
    guard FileManager.default.isExecutableFile(atPath: podbridge) else {
        throw BenchFailure("\(podbridge) is not built (make bench builds it)")
    }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-bench-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    for (label, fraction) in [("whole", 1.0), ("first_eighth", 0.125)] {
        let path = dir.appendingPathComponent("\(label).podcap").path
        try Data(bytes.prefix(Int(Double(bytes.count) * fraction))).write(to: URL(fileURLWithPath: path))
        let (status, peakKiB) = try peakRSSOfChild(podbridge, ["analyze", "--capture", path, "--tz", "UTC"])
        guard status == 0 else { throw BenchFailure("podbridge analyze --capture exited with status \(status)") }
        let mb = Double(bytes.count) * fraction / 1e6
        print(String(format: "podanalysis.memory.analyze_capture_peak_rss.%@: %.1f MiB (child `podbridge analyze --capture`, %.1f-h two-sided night, %.0f MB file; target < 64 MB)",
                     label, Double(peakKiB) / 1024, hours * fraction, mb))
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `executable` with `arguments` (output to /dev/null) and returns its exit status and
/// peak resident set in KiB: the child's VmHWM from /proc, read every 5 ms until it exits.
/// Not `ru_maxrss` from `wait4`: posix_spawn starts the child in the parent's address space
/// (vfork), and Linux keeps that high-water mark across exec, so `ru_maxrss` reports this
/// benchmark's own memory (the nights it holds) whenever that is larger.
private func peakRSSOfChild(_ executable: String, _ arguments: [String]) throws -> (status: Int32, peakKiB: Int) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in argv + envp { free(p) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    guard spawned == 0 else { throw BenchFailure("cannot start \(executable): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    var peakKiB = 0
    while true {
        // Read first: once the child has exited its memory (and VmHWM) is gone.
        peakKiB = max(peakKiB, highWaterKiB(of: pid) ?? 0)
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid { break }
        guard reaped == 0 || errno == EINTR else { throw BenchFailure("waitpid: \(String(cString: strerror(errno)))") }
        usleep(5_000)
    }
    // WIFEXITED / WEXITSTATUS by hand (the macros are not imported).
    let exited = status & 0x7F == 0
    return (exited ? (status >> 8) & 0xFF : -1, peakKiB)
}

/// VmHWM (peak resident set of the process's current image) from /proc/PID/status.
private func highWaterKiB(of pid: pid_t) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}
