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
        if let dbusPID { kill(dbusPID, SIGTERM) }
        if restoreMulticast { _ = try? Self.run("/usr/sbin/ip", ["link", "set", "lo", "multicast", "off"]) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    @discardableResult
    static func run(_ path: String, _ arguments: [String], mustSucceed: Bool = false) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { throw Failure(description: "cannot run \(path): \(error) (scripts/install-deps.sh installs it)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        if mustSucceed, process.terminationStatus != 0 {
            throw Failure(description: "\(path) \(arguments.joined(separator: " ")) failed: \(output)")
        }
        return (process.terminationStatus, output)
    }
}
