// Ctrl-C / SIGTERM as an async stream, so a command can stop its tasks and close the pod
// cleanly (release the flock and the USB interface, finish the capture) instead of dying.
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

package enum InterruptSignals {
    /// Yields the signal number each time SIGINT, SIGTERM or SIGHUP arrives. The default action
    /// (terminate) is disabled for all three while the process lives: SIGHUP is a closed terminal
    /// or a dropped ssh session, and a hub run by hand there must keep its night as on Ctrl-C.
    package static func stream() -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = [SIGINT, SIGTERM, SIGHUP].map { number -> any DispatchSourceSignal in
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
