import Foundation
import HomeKit
import HomeKitService
import Hub
import HubAPI
import Logging
import Synchronization
import Testing
import TestSupport
import VirtualPod

/// The dashboard while the HomeKit bridge is unpaired, in headless chromium: the setup code in
/// digits and a QR code that a QR reader (zbarimg, Debian's zbar-tools) reads back as the
/// bridge's `X-HM://` payload. The screenshot is kept as a test artifact.
@Suite(.serialized) struct HomeKitDashboardTests {
    final class Port: Sendable {
        private let value = Mutex<Int?>(nil)
        func set(_ port: Int) { value.withLock { $0 = port } }
        var port: Int? { value.withLock { $0 } }
    }

    /// - Parameter errors: whether standard error goes into the output too (zbarimg's libraries
    ///   say things there, such as no D-Bus, that are not what it read).
    static func tool(_ arguments: [String], errors: Bool = true) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = errors ? process.standardOutput : FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        #expect(await eventually(180) { !process.isRunning }, "\(arguments[0]) did not finish")
        return (process.terminationStatus, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    @Test func theDashboardShowsTheSetupCodeAndAQRCodeOfThePayloadWhileUnpaired() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-hk-dash-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/pod-link"
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: "VPOD-HKD", sides: 2, channelsPerSide: 1), speed: 1, replay: [], linkPath: link, stopsAtEnd: false))
        _ = try pod.start()
        defer { pod.stop() }
        var config = HubConfiguration()
        config.stateDirectory = directory + "/state"
        config.timeZone = "UTC"
        config.pod.path = link
        config.api.listen = "127.0.0.1:0"
        config.homekit.enabled = true
        config.homekit.port = 0
        config.homekit.advertise = false
        let reporter = HubReporter(logger: Logger(label: "hk-dash") { _ in SwiftLogNoOpLogHandler() }, console: false)
        let daemon = try await HubDaemon.assemble(configuration: config, clock: .system, reporter: reporter)
        let board = HomeKitSetupBoard()
        let homekit = try HomeKitService(configuration: config, bus: daemon.bus, control: daemon.control, store: daemon.store,
                                         reporter: reporter, board: board)
        let port = Port()
        let api = HubAPIService(configuration: config, store: daemon.store, bus: daemon.bus, control: daemon.control,
                                reporter: reporter, onListening: { port.set($0) }, homekit: board)
        let task = Task { try await daemon.run(adding: [api, homekit], stopSignals: nil) }
        defer { task.cancel() }
        #expect(await eventually(60) { port.port != nil })
        let base = "http://127.0.0.1:\(try #require(port.port))"
        let state = await homekit.bridge.pairingState
        let payload = SetupPayload.uri(code: state.setupCode, setupID: state.setupID)

        let profile = directory + "/profile"
        let common = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                      "--user-data-dir=\(profile)", "--window-size=412,3000", "--virtual-time-budget=15000"]
        var dom = ""
        #expect(await eventually(240) {
            dom = (try? await Self.tool(common + ["--dump-dom", base + "/"]).output) ?? ""
            return dom.contains(#"data-loaded="true""#) && dom.contains("data-setup-code")
        }, "the page never showed the HomeKit card:\n\(dom.suffix(3000))")
        #expect(dom.contains(#"data-setup-code="\#(state.setupCode.formatted)">\#(state.setupCode.formatted)<"#), "\(dom.suffix(3000))")
        #expect(dom.contains(#"data-payload="\#(payload)""#))
        // What a phone's camera reads off the screen: the payload.
        // Where the other suites keep theirs: $PODBRIDGE_ARTIFACTS, else .build/test-artifacts.
        let artifacts = ProcessInfo.processInfo.environment["PODBRIDGE_ARTIFACTS"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let shot = artifacts.appendingPathComponent("homekit-dashboard.png").path
        let taken = try await Self.tool(common + ["--screenshot=\(shot)", base + "/"])
        #expect(taken.status == 0, "\(taken.output)")
        let read = try await Self.tool(["zbarimg", "--quiet", "--raw", shot], errors: false)
        #expect(read.output.trimmingCharacters(in: .whitespacesAndNewlines) == payload, "zbarimg read: \(read.output)")
    }
}
