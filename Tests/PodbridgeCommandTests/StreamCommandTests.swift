import Foundation
import Testing

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
}
