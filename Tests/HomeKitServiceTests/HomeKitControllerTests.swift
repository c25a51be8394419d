import Foundation
import HomeKit
import HomeKitService
import Hub
import Logging
import NightModel
import SleepDomain
import Synchronization
import Testing
import TestSupport
import VirtualPod

/// HomeKit end to end: the virtual pod plays a night on a pty, the hub runs with the HomeKit
/// service (as `podbridge run` assembles it), Avahi advertises it on loopback, and aiohomekit,
/// a real HomeKit controller, discovers, pairs, reads, subscribes, writes, manages pairings and
/// unpairs (scripts/homekit-controller.py). About a minute and a half of real time.
@Suite(.serialized) struct HomeKitControllerTests {
    static let nightStart = Date(timeIntervalSince1970: 1_794_866_400)  // 2026-11-16T22:00:00Z
    static let serial = "VPOD-HK"
    static let speed = 30.0
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/homekit-controller.py").path

    final class RunningHub: @unchecked Sendable {
        let daemon: HubDaemon
        let service: HomeKitService
        let task: Task<Void, any Error>

        init(directory: String, link: String, port: Int) async throws {
            var config = HubConfiguration()
            config.stateDirectory = directory + "/state"
            config.timeZone = "UTC"
            config.pod.path = link
            config.pod.reconnectMaxSeconds = 1
            config.api.enabled = false
            config.homekit.enabled = true
            config.homekit.port = port
            config.homekit.name = "podbridge test"
            let reporter = HubReporter(logger: Logger(label: "homekit-test") { _ in SwiftLogNoOpLogHandler() }, console: false)
            daemon = try await HubDaemon.assemble(configuration: config, clock: HubClock(start: HomeKitControllerTests.nightStart,
                                                                                      speed: HomeKitControllerTests.speed),
                                                  reporter: reporter)
            service = try HomeKitService(configuration: config, bus: daemon.bus, control: daemon.control, store: daemon.store,
                                         reporter: reporter)
            let daemon = self.daemon, service = self.service
            task = Task { try await daemon.run(adding: [service], stopSignals: nil) }
        }

        func stop() async {
            task.cancel()
            _ = await task.result
        }
    }

    /// Runs the controller script to its end; its JSON lines by step.
    static func controller(_ arguments: [String]) async throws -> [String: [String: Any]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("homekit-controller-\(UUID())")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = process.standardOutput
        process.standardInput = FileHandle.nullDevice
        try process.run()
        #expect(await eventually(300) { !process.isRunning }, "the controller script did not finish")
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "controller \(arguments[0]): \(text)")
        var steps: [String: [String: Any]] = [:]
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let step = object["step"] as? String else { continue }
            steps[step] = object
        }
        return steps
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func aiohomekitPairsUsesTheAccessoriesAndUnpairs() async throws {
        let mdns = try LoopbackMDNS()
        defer { mdns.stop() }
        let directory = NSTemporaryDirectory() + "podbridge-homekit-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/pod-link"
        // A sleeper on the left gets in 10 simulated minutes in (20 s here), nobody on the right.
        let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 600, getsOutBeforeEnd: 10 * 60, bathroomTrip: false))
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: Self.serial, sides: 2, channelsPerSide: 2),
            night: NightConfig(seed: 11, duration: 2 * 3600, sides: [sleeper, .empty], noise: .normal, pumpVibration: true, channelsPerSide: 2),
            speed: Self.speed, nightStartUnix: Self.nightStart.timeIntervalSince1970, linkPath: link))
        _ = try pod.start()
        defer { pod.stop() }
        let port = try Self.freePort()
        let hub = try await RunningHub(directory: directory, link: link, port: port)
        #expect(await eventually(60) { hub.daemon.bus.state.pods[Self.serial]?.connected == true })
        let state = await hub.service.bridge.pairingState
        let statePath = directory + "/state/homekit.json"
        let mode = try FileManager.default.attributesOfItem(atPath: statePath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(await eventually(30) { (try? mdns.browse())?.contains { $0.contains("\"sf=1\"") && $0.contains("\"id=\(state.accessoryID)\"") } == true })

        let pairingFile = directory + "/controller.json"
        let steps = try await Self.controller(["pair", state.accessoryID, state.setupCode.formatted, pairingFile])
        #expect(steps["discovered"]?["status_flags"] as? Int == 1)
        #expect(steps["discovered"]?["category"] as? Int == 2)
        #expect(steps["wrong code"]?["refused"] as? Bool == true)
        #expect(steps["paired"] != nil)
        let accessories = try #require(steps["accessories"])
        #expect(accessories["count"] as? Int == 3)
        let roles = Set(accessories["roles"] as? [String] ?? [])
        for side in ["left", "right"] {
            for role in ["occupancy", "power", "alarm", "snooze", "stop alarm"] { #expect(roles.contains("\(role) \(side)"), "\(role) \(side)") }
        }
        #expect((steps["occupancy"]?["values"] as? [String: Any])?.count == 2)
        let event = try #require(steps["occupancy event"])
        #expect(event["before"] as? Int == 0 && event["value"] as? Int == 1, "occupancy event: \(event)")
        let power = try #require(steps["power"])
        #expect((power["writes"] as? [String: String])?.values.allSatisfy { $0 == "ok" } == true, "\(power)")
        #expect(power["left"] as? Bool == false && power["right"] as? Bool == true)
        // The pod itself received the commands.
        #expect(await eventually(10) { pod.snapshot.powerOn == [false, true] }, "pod power: \(pod.snapshot.powerOn)")
        #expect(steps["snooze"]?["value"] as? Bool == false)
        #expect(steps["second pair-setup"]?["refused"] as? Bool == true)
        #expect(steps["guest"]?["accessories"] as? Int == 3)
        #expect(steps["guest"]?["add_refused"] as? Bool == true)
        #expect((steps["pairings"]?["ids"] as? [String])?.count == 2)
        #expect(await eventually(30) { (try? mdns.browse())?.contains { $0.contains("\"sf=0\"") } == true })

        // Pairings survive a restart.
        await hub.stop()
        let again = try await RunningHub(directory: directory, link: link, port: port)
        let checked = try await Self.controller(["check", pairingFile])
        #expect(checked["check"]?["count"] as? Int == 3)
        let unpaired = try await Self.controller(["unpair", pairingFile])
        #expect(unpaired["unpaired"]?["removed"] as? Bool == true)
        // The last admin gone, nobody is paired: the guest went too.
        #expect(await again.service.bridge.pairingState.pairings.isEmpty)
        #expect(await eventually(30) { (try? mdns.browse())?.contains { $0.contains("\"sf=1\"") } == true })
        await again.stop()
    }
}
