// Ctrl-C / SIGTERM as an async stream, so a command can stop its tasks and close the pod
// cleanly (release the flock and the USB interface, finish the capture) instead of dying.
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

package enum InterruptSignals {
    /// Yields the signal number each time SIGINT or SIGTERM arrives. The default action
    /// (terminate) is disabled for both while the process lives.
    package static func stream() -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { continuation.yield(number) }
                source.activate()
                return source
            }
            let holder = SignalSources(sources)
            continuation.onTermination = { _ in holder.cancel() }
        }
    }
}

private final class SignalSources: @unchecked Sendable {
    // Dispatch sources are thread-safe; kept alive until the stream ends.
    private let sources: [any DispatchSourceSignal]
    init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
    func cancel() { sources.forEach { $0.cancel() } }
}
