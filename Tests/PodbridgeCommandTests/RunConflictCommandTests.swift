import Foundation
import Testing
import TestSupport

/// `podbridge run` started where something already runs: a second hub on the same state (by
/// hand beside the systemd one, a second terminal), or an API port another program holds.
/// Each is refused at once with what to do, not run beside it or failed with NIO's words.
@Suite struct RunConflictCommandTests {
    func hubArguments(_ state: URL, config: URL, _ extra: [String]) -> [String] {
        ["run", "--config", config.path, "--state-dir", state.path, "--path", state.path + "/no-pod", "--tz", "UTC"] + extra
    }

    func emptyConfiguration() throws -> URL {
        let config = CommandRunner.temporaryFile("config.json")
        try "{}".write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    @Test func aSecondHubOnTheSameStateIsRefusedAndTheStateIsFreeOnceTheFirstStops() async throws {
        let config = try emptyConfiguration()
        let state = CommandRunner.temporaryFile("state")
        defer { try? FileManager.default.removeItem(at: config); try? FileManager.default.removeItem(at: state) }

        let first = try CommandRunner.Launched(hubArguments(state, config: config, ["--no-api"]), product: "podbridge")
        // Its services run (and SIGTERM is handled) once its link tries the pod.
        let started = try await first.printed(within: 120) { out, _ in out.contains(CommandRunner.missingPod) }
        #expect(started, "the first hub never started: \(first.stdout)\n\(first.stderr)")

        let second = try await CommandRunner.run(hubArguments(state, config: config, ["--no-api"]))
        #expect(second.status == 1, "stdout: \(second.stdout)\nstderr: \(second.stderr)")
        #expect(second.stderr.contains("another hub (pid \(first.process.processIdentifier)) is running on \(state.path)/podbridge.sqlite"),
                "stderr: \(second.stderr)")
        #expect(!second.stdout.contains("database "), "the second hub opened the database: \(second.stdout)")
        #expect(first.process.isRunning, "the first hub stopped: \(first.stderr)")

        kill(first.process.processIdentifier, SIGTERM)
        #expect(try await first.exited(within: 60))
        let third = try await CommandRunner.runUntilStopped(hubArguments(state, config: config, ["--no-api"])) { out, _ in
            out.contains(CommandRunner.missingPod)
        }
        #expect(third.status == 0 && !third.stderr.contains("another hub"), "stderr: \(third.stderr)")
    }

    @Test func anAPIPortAnotherProgramHoldsIsNamedWithWhatToDo() async throws {
        // Another program listening on a loopback port.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))

        let config = try emptyConfiguration()
        let state = CommandRunner.temporaryFile("state")
        defer { try? FileManager.default.removeItem(at: config); try? FileManager.default.removeItem(at: state) }
        let r = try await CommandRunner.run(hubArguments(state, config: config, ["--listen", "127.0.0.1:\(port)"]))
        #expect(r.status == 1, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stderr.contains("cannot serve the API on 127.0.0.1:\(port): the address is in use")
                && r.stderr.contains("--no-api"), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("bind(descriptor"), "stderr: \(r.stderr)")
    }

    /// A host name that resolves to nothing (`.invalid` never does, RFC 6761) is named as such,
    /// not as NIO's "SocketAddressError.UnknownHost".
    @Test func aListenHostWithNoAddressIsNamed() async throws {
        let config = try emptyConfiguration()
        let state = CommandRunner.temporaryFile("state")
        defer { try? FileManager.default.removeItem(at: config); try? FileManager.default.removeItem(at: state) }
        let r = try await CommandRunner.run(hubArguments(state, config: config, ["--listen", "nosuchhost.invalid:8399"]),
                                            environment: ["PODBRIDGE_API_TOKEN": "a-token-for-the-test"])
        #expect(r.status == 1, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stderr.contains("cannot serve the API on nosuchhost.invalid:8399: no address is known for that host name"),
                "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("SocketAddressError"), "stderr: \(r.stderr)")
    }
}
