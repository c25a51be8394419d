import Foundation
import Testing
import TestSupport

/// `podbridge stream` started before any pod is plugged in: it says what it waits for, in
/// words a person reads, at once even into a file (its output is read while it runs), and
/// stops cleanly on SIGTERM.
@Suite struct StreamCommandTests {
    @Test func withNoPodItSaysItWaitsForOneWithTheUSBIdItLooksFor() async throws {
        let r = try await CommandRunner.runUntilStopped(["stream", "--usb-id", "1209:5051"]) { out, _ in
            out.contains("waiting for")
        }
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.hasPrefix("waiting for a pod (USB id 1209:5051)…\n"), "stdout: \(r.stdout)\nstderr: \(r.stderr)")
    }

    @Test func withASerialItNamesThatPod() async throws {
        let r = try await CommandRunner.runUntilStopped(["stream", "--serial", "POD-0042"]) { out, _ in
            out.contains("waiting for")
        }
        #expect(r.stdout.hasPrefix("waiting for pod POD-0042…\n"), "stdout: \(r.stdout)\nstderr: \(r.stderr)")
    }

    @Test func onTheVirtualPodItSaysTheProtocolRevisionTheLinkAgreed() async throws {
        // `podbridge simulate` in the background, as the README has a user run it.
        let pod = try CommandRunner.Launched(["simulate", "--speed", "10", "--duration", "1"], product: "podbridge")
        defer { pod.process.terminate() } // and keeps the pod alive while stream runs
        func tty(_ out: String) -> String? {
            out.split(separator: "\n").first { $0.hasPrefix("virtual pod ") }?.split(separator: " ").last.map(String.init)
        }
        _ = try await pod.printed(within: 120) { out, _ in tty(out) != nil }
        let path = try #require(tty(pod.stdout), "simulate printed no tty; running: \(pod.process.isRunning), stderr: \(pod.stderr)")
        let r = try await CommandRunner.runUntilStopped(["stream", "--path", path]) { out, _ in out.contains("connected:") }
        #expect(r.stdout.contains("connected: pod VPOD0001, firmware 1.0.0, protocol v1.1, 2 side(s), 500 Hz"), "stdout: \(r.stdout)")
    }
}
