import ArgumentParser
import BackendUpload
import Foundation
import Hub
import SleepStore

/// `podbridge sync`: one pass of the upload worker in the foreground.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Upload pending sleep sessions to the backend once and report the outcome.",
        discussion: """
            Posts every due outbox event to <url>/api/v1/sleep. Exit status 1 when a session \
            failed for good in this run. Sessions waiting for a backoff are reported as skipped.
            """)

    @OptionGroup var common: ConfigurationOptions

    @Option(name: .long, help: "Backend base URL, e.g. https://sleep.example.com (default: the configuration's upload.baseURL).")
    var url: String?

    @Option(name: .long, help: "Bearer token (default: the configuration's upload.token, else $PODBRIDGE_BACKEND_TOKEN).")
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
        let store = try ExistingStore.open(db)
        if retryFailed {
            print("requeued: \(try await store.requeueFailedEvents())")
        }
        let report = try await OutboxWorker(store: store, configuration: configuration).runOnce()
        print("delivered: \(report.delivered.count)")
        print("already on backend (409): \(report.alreadyPresent.count)")
        print("will retry: \(report.willRetry.count)")
        print("skipped (not due or in flight elsewhere): \(report.skipped)")
        print("failed: \(report.failed.count)")
        for failure in report.failed { print("  failed \(failure.sourceID): \(failure.reason)") }
        for retry in report.willRetry { print("  retry \(retry.sourceID): \(retry.reason)") }
        if !report.failed.isEmpty { throw ExitCode.failure }
    }
}
