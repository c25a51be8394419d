import ArgumentParser
import BackendUpload
import Foundation
import Hub
import PodDevice
import SleepStore

/// `podbridge sync`: one pass of the upload worker in the foreground.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Upload pending sleep sessions to the backend once and report the outcome.",
        discussion: """
            Posts every due outbox event to <url>/api/v1/sleep. Exit status 0 when nothing due \
            is left undelivered; 1 when a session failed for good in this run, the backend \
            refused the token (401/403) or the URL does not lead to it (a redirect, 404, 405; \
            nothing is marked failed then); 75 (EX_TEMPFAIL: try again later, nothing is lost) \
            when sessions stay queued because the backend was unreachable or asked for a retry \
            (408, 429, 5xx); 128 + the signal (130 for Ctrl-C) when interrupted, the session \
            being posted queued again. A pass that finds the backend unreachable, or told to \
            wait (429, Retry-After), stops at that session and leaves the others queued.
            """)

    /// sysexits' EX_TEMPFAIL: what mail and backup tools return for "try again later", so a
    /// script or timer can tell a queued backlog from a clean run and from a failure.
    static let temporaryFailure: Int32 = 75

    @OptionGroup var common: ConfigurationOptions

    @Option(name: .long, help: "Backend base URL, e.g. https://sleep.example.com (default: the configuration's upload.baseURL).")
    var url: String?

    @Option(name: .long, help: "Bearer token (default: $PODBRIDGE_UPLOAD_TOKEN or $PODBRIDGE_BACKEND_TOKEN, else the configuration's upload.token).")
    var token: String?

    @Flag(name: .long, help: "Queue sessions that failed before once more (e.g. after fixing the token).")
    var retryFailed = false

    func run() async throws {
        let settings = try common.load()
        let db = settings.databasePath
        guard let url = url ?? settings.upload.baseURL else {
            throw CommandFailure("no backend: pass --url or set upload.baseURL (PODBRIDGE_UPLOAD_URL)")
        }
        let configuration: UploadConfiguration
        do {
            configuration = try UploadConfiguration(
                baseURL: url, bearerToken: token ?? settings.upload.token
                    ?? ProcessInfo.processInfo.environment["PODBRIDGE_BACKEND_TOKEN"])
        } catch let error as UploadError {
            throw CommandFailure(error.description)
        }
        let store = try await ExistingStore.open(db)
        // Closed on the way out, so the file alone holds what the command wrote (NightStore.close).
        defer { try? store.close() }
        if retryFailed {
            print("requeued: \(try await store.requeueFailedEvents())")
        }
        // Ctrl-C (or SIGTERM) mid-post hands the session back at once; killed by the signal's
        // default action it stayed claimed ("in flight elsewhere") until its lease ran out.
        let signals = InterruptSignals.stream()
        let pass = Task { try await OutboxWorker(store: store, configuration: configuration).runOnce() }
        let watcher = Task { () -> Int32? in for await signal in signals { pass.cancel(); return signal }; return nil }
        let result = await pass.result
        watcher.cancel()
        if let signal = await watcher.value {
            print("interrupted: the session being posted stays queued")
            throw ExitCode(128 + signal)   // as the shell reports a command the signal stopped
        }
        let report = try result.get()
        let now = store.clock.unixSeconds()
        print("delivered: \(report.delivered.count)")
        print("already on backend (409): \(report.alreadyPresent.count)")
        print("will retry: \(report.willRetry.count)")
        print("not due yet or in flight elsewhere: \(report.skipped)")
        switch report.stoppedBy {
        case .unreachable?: print("left for the next pass (backend unreachable): \(report.leftForNextPass)")
        case .unauthorized?: print("left queued (token refused): \(report.leftForNextPass)")
        case .misdirected?: print("left queued (not the backend's sleep endpoint): \(report.leftForNextPass)")
        case .busy?: print("left for the next pass (the backend asked to wait): \(report.leftForNextPass)")
        case nil: break
        }
        print("failed: \(report.failed.count)")
        for failure in report.failed { print("  failed \(failure.sourceID): \(failure.reason)") }
        for retry in report.willRetry {
            let due = retry.nextAttemptAt.map { "; next attempt " + Self.due($0, now: now) } ?? ""
            print("  retry \(retry.sourceID): \(retry.reason)\(due)")
        }
        if !report.failed.isEmpty {
            print("once the cause is fixed, `podbridge sync --retry-failed` queues failed sessions again")
        }
        if case let .unauthorized(reason)? = report.stoppedBy {
            throw CommandFailure(OutboxWorker.unauthorizedMessage(
                baseURL: configuration.baseURL, reason: reason, tokenSent: configuration.bearerToken != nil,
                fix: "check --token, upload.token (PODBRIDGE_UPLOAD_TOKEN) or PODBRIDGE_BACKEND_TOKEN"))
        }
        if case let .misdirected(reason)? = report.stoppedBy {
            throw CommandFailure(OutboxWorker.misdirectedMessage(
                baseURL: configuration.baseURL, reason: reason, fix: "check --url or upload.baseURL (PODBRIDGE_UPLOAD_URL)"))
        }
        if case let .unreachable(reason)? = report.stoppedBy {
            print("warning: \(reason); the sessions stay queued")
        }
        if case let .busy(reason, retryAfter)? = report.stoppedBy {
            print("warning: the backend asks to wait \(OutboxWorker.duration(retryAfter)) (\(reason)); the sessions stay queued")
        }
        if !report.failed.isEmpty { throw ExitCode.failure }
        // A backlog left for later is not a clean run: a timer or script that syncs must see it.
        if report.stoppedBy != nil || !report.willRetry.isEmpty { throw ExitCode(Self.temporaryFailure) }
    }

    /// "in 15 s (at 10:13:35)".
    static func due(_ at: Int64, now: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = at - now < 20 * 3600 ? "HH:mm:ss" : "yyyy-MM-dd HH:mm"
        let clock = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(at)))
        return "in \(OutboxWorker.duration(max(0, at - now))) (at \(clock))"
    }
}
