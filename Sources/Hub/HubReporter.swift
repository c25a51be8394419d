import Foundation
import Logging
import Synchronization

/// Where the hub tells people what happens: the console (the demo, `podbridge run` in a
/// terminal) or, without one, the log (journald under systemd). One line per event, plain
/// text, said once: with the console on, its lines go to standard output alone, since the
/// log (standard error) would print each a second time on the same screen.
package struct HubReporter: Sendable {
    package let logger: Logger
    /// Print the reporter's lines on standard output instead of the log.
    package let console: Bool

    /// Whether a progress line is on screen, shared by every copy of this reporter so any
    /// event line (from whichever part of the hub) first ends it.
    private let progressShown = ProgressFlag()

    package init(logger: Logger, console: Bool) {
        self.logger = logger
        self.console = console
    }

    /// Something a person watching wants to see (pod found, night summary, schedule pushed).
    package func event(_ text: String, metadata: Logger.Metadata = [:]) {
        if console { endProgress(); Self.write(text + "\n") } else { logger.info("\(text)", metadata: metadata) }
    }

    /// A problem that did not stop the hub (nack, timeout, bad frame burst).
    package func warning(_ text: String, metadata: Logger.Metadata = [:]) {
        if console { endProgress(); Self.write("warning: " + text + "\n") } else { logger.warning("\(text)", metadata: metadata) }
    }

    /// A status line that replaces itself on a terminal (live readings).
    package func progress(_ text: String) {
        guard console else { logger.debug("\(text)"); return }
        progressShown.set(true)
        Self.write(Self.isTerminal ? "\r\u{1B}[K" + text : text + "\n")
    }

    /// Ends a progress line before ordinary output (event and warning lines do it themselves).
    package func endProgress() {
        guard progressShown.set(false) else { return }
        if console && Self.isTerminal { Self.write("\r\u{1B}[K") }
    }

    private static let isTerminal = isatty(STDOUT_FILENO) == 1

    private static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// A flag shared by the copies of a `HubReporter`.
private final class ProgressFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Sets the flag; returns what it was.
    @discardableResult func set(_ new: Bool) -> Bool { value.exchange(new, ordering: .relaxed) }
}
