import Foundation

/// Polls `condition` until it holds or `seconds` have passed, then asks once more.
///
/// The suites that drive a real daemon, broker or pty wait on outcomes that arrive
/// asynchronously; one polling helper keeps their deadlines and poll interval alike.
/// Deadlines are generous on purpose: they bound a hang on a loaded CI machine, they
/// are not a measurement (speed is measured by `make bench`).
public func eventually(_ seconds: Double = 90, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
