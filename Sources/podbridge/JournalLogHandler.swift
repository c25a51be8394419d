import Foundation
import Logging
import SystemCalls

/// The log written for journald when standard error is the journal's stream (the hub under
/// systemd): each line starts with its syslog priority, `<4>` for a warning, which journald
/// takes as the entry's priority (sd-daemon(3)), so `journalctl -u podbridge -p warning`
/// finds the warnings; the journal stamps the time itself. Without it every line was stored at
/// priority info, with a second timestamp in its text.
struct JournalLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let line = Self.line(level: event.level, label: label, source: event.source, message: "\(event.message)", metadata: merged)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// One journal line: `<priority>label: [source] message key=value…`, one line however many
    /// the message had (journald would store each as its own entry at the default priority).
    static func line(level: Logger.Level, label: String, source: String, message: String, metadata: Logger.Metadata) -> String {
        var text = "<\(priority(level))>\(label): [\(source)] \(message)"
        if !metadata.isEmpty {
            text += " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        return text.replacingOccurrences(of: "\n", with: " ") + "\n"
    }

    /// syslog(3) priorities, as journald reads them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Whether standard error is the stream systemd connected to the journal: `JOURNAL_STREAM`
    /// names it by device and inode, and a child whose stderr was redirected keeps the variable
    /// but not the stream (systemd.exec(5)).
    static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"], !stream.isEmpty else { return false }
        return SystemCalls.fileIdentity(STDERR_FILENO) == stream
    }
}
