import Foundation

/// Multicast DNS on loopback for the HomeKit tests, made and unmade by the test: the loopback
/// interface's MULTICAST flag, a system D-Bus and an avahi-daemon allowed on `lo` only, each
/// started here (and stopped by its pid) unless one already runs. Needs root and Debian's
/// avahi-daemon and dbus (scripts/install-deps.sh).
final class LoopbackMDNS: @unchecked Sendable {
    private var restoreMulticast = false
    private var dbusPID: Int32?
    private var startedAvahi = false
    private let directory: String

    struct Failure: Error, CustomStringConvertible { let description: String }

    init() throws {
        directory = NSTemporaryDirectory() + "podbridge-mdns-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard getuid() == 0 else { throw Failure(description: "mDNS on loopback needs root (ip link, dbus, avahi-daemon)") }
        let link = try Self.run("/usr/sbin/ip", ["link", "show", "lo"]).output
        if !link.contains("MULTICAST") {
            try Self.run("/usr/sbin/ip", ["link", "set", "lo", "multicast", "on"], mustSucceed: true)
            restoreMulticast = true
        }
        if !FileManager.default.fileExists(atPath: "/run/dbus/system_bus_socket") {
            try FileManager.default.createDirectory(atPath: "/run/dbus", withIntermediateDirectories: true)
            let started = try Self.run("/usr/bin/dbus-daemon", ["--system", "--fork", "--print-pid"], mustSucceed: true)
            dbusPID = Int32(started.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if try Self.run("/usr/sbin/avahi-daemon", ["-c"]).status != 0 {
            let config = directory + "/avahi-daemon.conf"
            try "[server]\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces=lo\nenable-dbus=yes\n[publish]\npublish-workstation=no\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            try Self.run("/usr/sbin/avahi-daemon", ["-f", config, "-D"], mustSucceed: true)
            startedAvahi = true
        }
    }

    /// `avahi-browse`'s resolved `_hap._tcp` lines (`=;lo;IPv4;NAME;…;"sf=1" …`).
    func browse() throws -> [String] {
        try Self.run("/usr/bin/avahi-browse", ["-rtp", "_hap._tcp"]).output.split(separator: "\n").map(String.init).filter { $0.hasPrefix("=") }
    }

    func stop() {
        if startedAvahi { _ = try? Self.run("/usr/sbin/avahi-daemon", ["-k"]) }
        if let dbusPID {
            // The system bus does not end on SIGTERM; its pid file would stop the next start.
            kill(dbusPID, SIGKILL)
            unlink("/run/dbus/pid")
            unlink("/run/dbus/system_bus_socket")
        }
        if restoreMulticast { _ = try? Self.run("/usr/sbin/ip", ["link", "set", "lo", "multicast", "off"]) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `path` to its end with posix_spawn and waitpid, its output in a file. Not
    /// Foundation's Process: it takes a forking daemon's inherited descriptors as the command
    /// still running, and waited for dbus-daemon --fork forever.
    @discardableResult
    static func run(_ path: String, _ arguments: [String], mustSucceed: Bool = false) throws -> (status: Int32, output: String) {
        let log = NSTemporaryDirectory() + "mdns-\(UUID().uuidString).log"
        defer { unlink(log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot run \(path): \(String(cString: strerror(spawned))) (scripts/install-deps.sh installs it)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS: the low 7 bits are the signal, the next 8 the exit code.
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if mustSucceed, code != 0 {
            throw Failure(description: "\(path) \(arguments.joined(separator: " ")) failed (\(code)): \(output)")
        }
        return (code, output)
    }
}
