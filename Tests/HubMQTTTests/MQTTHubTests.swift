import TestSupport
import Foundation
import Hub
import HubMQTT
import HubMQTTService
import Logging
import NightModel
import SleepDomain
import SleepStore
import Synchronization
import SystemCalls
import Testing
import VirtualPod

/// MQTT in the running hub, end to end: the virtual pod plays a night on a pty at high speed,
/// the hub (HubDaemon with the MQTT service, as `podbridge run` assembles it) talks to a real
/// mosquitto, and a test client watches every topic and sends commands as Home Assistant would.
@Suite(.serialized) struct MQTTHubTests {
    static let nightStart = Date(timeIntervalSince1970: 1_794_866_400)  // 2026-11-16T22:00:00Z
    static let serial = "VPOD-MQTT"
    /// 2 link entities + 33 per side.
    static let configsPerPod = 82

    struct Running {
        let daemon: HubDaemon
        let service: MQTTService
        let pod: VirtualPod
        let task: Task<Void, any Error>
        let directory: String
        let lines: LogLines

        func stop() async {
            task.cancel()
            _ = await task.result
            pod.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func night(hours: Double, seed: UInt64) -> NightConfig {
        let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 120, getsOutBeforeEnd: 12 * 60, bathroomTrip: false))
        return NightConfig(seed: seed, duration: hours * 3600, sides: [sleeper, .empty], noise: .normal,
                           pumpVibration: true, channelsPerSide: 2)
    }

    /// A sleeper on the left, nobody on the right; `hours` of night at `speed`× real time.
    static func start(broker: TestBroker, hours: Double = 1.5, speed: Double = 200, seed: UInt64 = 7,
                      configure: (inout HubConfiguration) -> Void = { _ in }) async throws -> Running {
        let directory = NSTemporaryDirectory() + "podbridge-mqtt-hub-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let link = directory + "/pod-link"
        let timeline = PacedTimeline()
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: serial, sides: 2, channelsPerSide: 2), night: night(hours: hours, seed: seed),
            speed: speed, nightStartUnix: nightStart.timeIntervalSince1970, linkPath: link, timeline: timeline))
        _ = try pod.start()
        var config = HubConfiguration()
        config.stateDirectory = directory + "/state"
        config.timeZone = "UTC"
        config.pod.path = link
        config.pod.reconnectMaxSeconds = 1
        config.sessions.maxGapMinutes = 5
        config.api.enabled = false
        config.mqtt.host = "127.0.0.1"
        config.mqtt.port = broker.port
        config.mqtt.clientID = "podbridge-test"
        config.mqtt.publishEverySeconds = 0.5
        configure(&config)
        let lines = LogLines()
        let reporter = HubReporter(logger: Logger(label: "mqtt-test") { _ in LineCapture(sink: lines) }, console: false)
        let daemon = try await HubDaemon.assemble(configuration: config,
                                                  clock: HubClock(start: nightStart, speed: speed, timeline: timeline),
                                                  reporter: reporter)
        let service = try MQTTService(configuration: config, bus: daemon.bus, control: daemon.control, store: daemon.store,
                                      reporter: reporter, dashboardURL: "http://127.0.0.1:8380/",
                                      reconnectMin: .milliseconds(100), reconnectMax: .milliseconds(500), clock: daemon.clock)
        let task = Task { try await daemon.run(adding: [service], stopSignals: nil) }
        return Running(daemon: daemon, service: service, pod: pod, task: task, directory: directory, lines: lines)
    }

    static func configTopics(_ listener: Listener, serial: String = serial) -> Set<String> {
        Set(listener.messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.contains("/podbridge_\(serial)/")
            && !$0.payload.isEmpty }.map(\.topic))
    }

    /// Every config is retained (a client subscribing now, as Home Assistant starting, gets
    /// them all flagged retained) and a valid HA discovery payload: the keys HA requires for
    /// its component, a unique id, the device block, availability tied to the hub's last will.
    static func checkDiscovery(port: Int) async throws {
        let listener = try Listener(port: port, filters: ["homeassistant/#"])
        defer { Task { await listener.stop() } }
        #expect(await eventually(60) { configTopics(listener).count == configsPerPod },
                "retained configs: \(configTopics(listener).count)")
        var uniqueIDs = Set<String>()
        for topic in configTopics(listener).sorted() {
            // The broker hands a new subscriber the retained copy first; the hub may announce
            // the pod again right after (a reconnect), and that live copy is not flagged.
            let message = try #require(listener.all(topic).first)
            #expect(message.retain, "\(topic) not retained")
            let config = try #require(json(message), "\(topic): not JSON")
            let component = topic.split(separator: "/")[1]
            let uniqueID = try #require(config["unique_id"] as? String, "\(topic): no unique_id")
            #expect(uniqueIDs.insert(uniqueID).inserted, "duplicate unique_id \(uniqueID)")
            #expect(config["name"] is String, "\(topic): no name")
            let device = try #require(config["device"] as? [String: Any], "\(topic): no device")
            #expect((device["identifiers"] as? [String]) == ["podbridge_\(serial)"])
            #expect(device["serial_number"] as? String == serial && device["sw_version"] is String)
            #expect(device["configuration_url"] as? String == "http://127.0.0.1:8380/")
            let availability = try #require(config["availability"] as? [[String: Any]], "\(topic): no availability")
            #expect(availability.contains { $0["topic"] as? String == "podbridge/status" })
            switch component {
            case "binary_sensor", "sensor":
                #expect(config["state_topic"] is String, "\(topic): no state_topic")
            case "switch", "text", "number":
                #expect(config["state_topic"] is String && config["command_topic"] is String, "\(topic)")
            case "button":
                #expect(config["command_topic"] is String, "\(topic)")
            case "event":
                #expect(config["state_topic"] is String && config["event_types"] is [String], "\(topic)")
            default:
                Issue.record("unexpected component \(component)")
            }
        }
        #expect(uniqueIDs.count == configsPerPod)
        let occupancy = try #require(json(listener.last("homeassistant/binary_sensor/podbridge_\(serial)/left_occupancy/config")))
        #expect(occupancy["device_class"] as? String == "occupancy")
        let heart = try #require(json(listener.last("homeassistant/sensor/podbridge_\(serial)/left_heart_rate/config")))
        #expect(heart["unit_of_measurement"] as? String == "bpm" && heart["state_class"] as? String == "measurement")
        let bedtime = try #require(json(listener.last("homeassistant/text/podbridge_\(serial)/left_bedtime/config")))
        #expect(bedtime["pattern"] as? String == HomeAssistantDiscovery.timePattern)
    }

    @Test func thePodAppearsInHomeAssistantItsStatesFollowTheNightAndCommandsReachIt() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port)
        try await listener.waitConnected()
        // Another hub's pod on the same broker (the other bed, base topic `podbridge-2`) keeps its
        // entities. (A pod this hub served and no longer does: `aPodThisHubNeverServedIsLeftToTheHubThatDoes`.)
        let otherHub = #"{"name":"other","availability":[{"topic":"podbridge-2/status"},{"topic":"podbridge-2/POD2/availability"}]}"#
        try listener.publish("homeassistant/sensor/podbridge_POD2/left_heart_rate/config", otherHub, retain: true)
        let hub = try await Self.start(broker: broker)

        #expect(await eventually(120) { Self.configTopics(listener).count == Self.configsPerPod },
                "discovery: \(Self.configTopics(listener).count) configs; hub said \(hub.lines.all.suffix(10))")
        try await Self.checkDiscovery(port: broker.port)
        #expect(listener.last("podbridge/status")?.text == "online")
        let origin = json(listener.last("homeassistant/binary_sensor/podbridge_VPOD-MQTT/left_occupancy/config"))?["origin"] as? [String: Any]
        #expect(origin?["sw_version"] as? String == HubVersion.current, "\(String(describing: origin))")
        #expect(listener.last("homeassistant/sensor/podbridge_POD2/left_heart_rate/config")?.text == otherHub,
                "another hub's entity was removed; the hub said \(hub.lines.all.filter { $0.contains("removing") })")
        #expect(await eventually(60) { listener.last("podbridge/VPOD-MQTT/availability")?.text == "online" })
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/link"))?["connected"] as? Bool == true })

        // The night: someone gets into the left side; heart and breathing rates appear.
        #expect(await eventually(120) {
            guard let s = json(listener.last("podbridge/VPOD-MQTT/left/state")) else { return false }
            return s["present"] as? Bool == true && s["heart_rate"] is Double && s["in_bed_since"] is String
        }, "left state: \(String(describing: listener.last("podbridge/VPOD-MQTT/left/state")?.text))")
        let left = try #require(json(listener.last("podbridge/VPOD-MQTT/left/state")))
        #expect((35...100).contains(left["heart_rate"] as? Double ?? 0), "HR \(String(describing: left["heart_rate"]))")
        // The preliminary analysis of the night under way gives a stage.
        #expect(await eventually(120) { json(listener.last("podbridge/VPOD-MQTT/left/state"))?["stage"] is String },
                "no stage; hub said \(hub.lines.all.suffix(10))")
        let right = try #require(json(listener.last("podbridge/VPOD-MQTT/right/state")))
        #expect(right["present"] as? Bool == false && right["heart_rate"] is NSNull)
        // Nobody on the right: its stage says the bed is empty.
        #expect(right["stage"] as? String == "out_of_bed", "\(right)")
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/schedule"))?["wake"] is String })
        // Once the pod acknowledged both sides' schedules, the retained states say so (the
        // acknowledgement is stored after the last push's notice, and is published on its own).
        #expect(await eventually(60) {
            ["left", "right"].allSatisfy { json(listener.last("podbridge/VPOD-MQTT/\($0)/schedule"))?["acknowledged"] as? Bool == true }
        }, "left \(String(describing: listener.last("podbridge/VPOD-MQTT/left/schedule")?.text)), right \(String(describing: listener.last("podbridge/VPOD-MQTT/right/schedule")?.text))")

        // A command as Home Assistant's switch sends it: the pod powers the side, acks, and the state says so.
        let leftPower = hub.pod.snapshot.powerOn.first ?? false
        try listener.publish("podbridge/VPOD-MQTT/right/power/set", #"{"state": "ON", "level": 40}"#)
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/command/result"))?["result"] as? String == "ack" },
                "no ack; hub said \(hub.lines.all.suffix(10))")
        #expect(hub.pod.snapshot.powerOn == [leftPower, true])
        #expect(await eventually(30) { json(listener.last("podbridge/VPOD-MQTT/right/state"))?["power"] as? String == "ON" })
        // Switched from elsewhere (the API and the dashboard send through the hub's control):
        // Home Assistant's switch follows the pod's acknowledgement all the same.
        #expect(try await hub.daemon.control.send(.power(side: .right, on: false, level: 100), toPod: "VPOD-MQTT") == .ack)
        #expect(await eventually(30) { json(listener.last("podbridge/VPOD-MQTT/right/state"))?["power"] as? String == "OFF" },
                "right state: \(String(describing: listener.last("podbridge/VPOD-MQTT/right/state")?.text))")
        #expect(hub.pod.snapshot.powerOn == [leftPower, false])
        // Nothing rings: the pod refuses a snooze, and that nack is published, with the pod's
        // reason, also as the left side's command event (where Home Assistant shows the press).
        try listener.publish("podbridge/VPOD-MQTT/left/alarm/snooze", "PRESS")
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/command/result"))?["result"] as? String == "nack" })
        #expect(await eventually(30) { json(listener.last("podbridge/VPOD-MQTT/left/command/event"))?["event_type"] as? String == "nack" })
        #expect(json(listener.last("podbridge/VPOD-MQTT/left/command/event"))?["detail"] as? String == "nothing to snooze",
                "\(String(describing: listener.last("podbridge/VPOD-MQTT/left/command/event")?.text))")

        // Malformed commands: an error on podbridge/error, nothing sent to the pod.
        let answeredBefore = hub.pod.snapshot.requestsAnswered
        let resultsBefore = listener.all("podbridge/VPOD-MQTT/command/result").count
        try listener.publish("podbridge/VPOD-MQTT/left/power/set", #"{"state": "ON", "level": 250}"#)
        try listener.publish("podbridge/VPOD-MQTT/middle/alarm/stop", "PRESS")
        try listener.publish("podbridge/VPOD-MQTT/left/schedule/wake/set", "25:00")
        try listener.publish("podbridge/NOPOD/left/alarm/stop", "PRESS")
        #expect(await eventually(60) { listener.all("podbridge/error").count == 4 })
        let errors = listener.all("podbridge/error").compactMap { json($0)?["error"] as? String }
        #expect(errors.count == 4 && errors[0].contains("1–100") && errors[1].contains("side") && errors[2].contains("HH:mm")
                && errors[3].contains("NOPOD"), "errors: \(errors)")
        // Those naming a known pod and a side are that side's `refused` command events too.
        #expect(await eventually(30) { json(listener.last("podbridge/VPOD-MQTT/left/command/event"))?["event_type"] as? String == "refused" })
        let refusedLeft = listener.all("podbridge/VPOD-MQTT/left/command/event").compactMap { json($0) }.filter { $0["event_type"] as? String == "refused" }
        #expect(refusedLeft.count == 2 && (refusedLeft.first?["detail"] as? String)?.contains("1–100") == true, "\(refusedLeft)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(hub.pod.snapshot.powerOn == [leftPower, false])
        #expect(listener.all("podbridge/VPOD-MQTT/command/result").count == resultsBefore)
        // The schedule service may talk to the pod on its own timers meanwhile, and the link asks
        // its status once a minute; a few at most.
        #expect(hub.pod.snapshot.requestsAnswered - answeredBefore <= 3)

        // The manual wake time from HA's text entity: stored, pushed, the pod holds the alarm.
        try listener.publish("podbridge/VPOD-MQTT/left/schedule/wake/set", "06:40")
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/command/result"))?["command"] as? String == "wake" },
                "hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(60) { hub.pod.currentSchedule(side: .left)?.alarm?.time == TimeOfDay(wrapping: 6 * 60 + 40) })
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/schedule"))?["wake"] as? String == "06:40" })
        // Its detail: the command line's lines as one (no terminal indentation), ending with what
        // happens for this pod, which is connected.
        let wakeDetail = json(listener.last("podbridge/VPOD-MQTT/command/result"))?["detail"] as? String ?? ""
        #expect(wakeDetail.hasPrefix("left: manual schedule set") && wakeDetail.hasSuffix("; Sending it to the pod now."), "\(wakeDetail)")
        #expect(!wakeDetail.contains("  ") && !wakeDetail.contains("\n"), "\(wakeDetail)")

        // HA's alarm switch: off clears the side's alarm on the pod (power stays), on brings it back.
        try listener.publish("podbridge/VPOD-MQTT/left/alarm/set", "OFF")
        #expect(await eventually(60) { hub.pod.currentSchedule(side: .left) != nil && hub.pod.currentSchedule(side: .left)?.alarm == nil },
                "hub said \(hub.lines.all.suffix(10))")
        #expect(hub.pod.currentSchedule(side: .left)?.power != nil)
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/schedule"))?["alarm_enabled"] as? Bool == false })
        try listener.publish("podbridge/VPOD-MQTT/left/alarm/set", "ON")
        #expect(await eventually(60) { hub.pod.currentSchedule(side: .left)?.alarm?.time == TimeOfDay(wrapping: 6 * 60 + 40) })
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/schedule"))?["alarm_enabled"] as? Bool == true })
        // HA's stop button with nothing ringing: CLEAR_ALARM clears the pod's alarm too, and the
        // hub arms it again (tonight's 06:40 is tomorrow's), so tomorrow still rings.
        try listener.publish("podbridge/VPOD-MQTT/left/alarm/stop", "PRESS")
        #expect(await eventually(60) { hub.lines.all.contains { $0.contains("left: alarm cleared on the pod by a stop; armed again now") } },
                "hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(60) { hub.pod.currentSchedule(side: .left)?.alarm?.time == TimeOfDay(wrapping: 6 * 60 + 40) },
                "the pod holds \(String(describing: hub.pod.currentSchedule(side: .left)))")
        // HA's number entity: the smart-wake window is stored for the side and reported back.
        try listener.publish("podbridge/VPOD-MQTT/left/wake_window/set", "25.0")
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/schedule"))?["wake_window_minutes"] as? Int == 25 })
        #expect(try await hub.daemon.store.wakeSettings(podSerial: "VPOD-MQTT", side: .left)?.windowMinutes == 25)
        // Presence-driven power: its state is retained per side; HA's switch turns it on, its
        // number sets a delay (stored), a value out of range is refused on <base>/error.
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/right/presence_power/state"))?["enabled"] as? Bool == false })
        try listener.publish("podbridge/VPOD-MQTT/right/presence_power/enabled/set", "ON")
        try listener.publish("podbridge/VPOD-MQTT/right/presence_power/off_when_left_minutes/set", "25")
        #expect(await eventually(60) {
            let state = json(listener.last("podbridge/VPOD-MQTT/right/presence_power/state"))
            return state?["enabled"] as? Bool == true && state?["off_when_left_minutes"] as? Int == 25
        }, "\(listener.all("podbridge/VPOD-MQTT/right/presence_power/state").map(\.text))")
        let storedPresence = try await hub.daemon.store.presencePowerSide(podSerial: "VPOD-MQTT", side: .right)
        #expect(storedPresence?.enabled == true && storedPresence?.settings?.offWhenLeftMinutes == 25)
        let presenceErrors = listener.all("podbridge/error").count
        try listener.publish("podbridge/VPOD-MQTT/right/presence_power/off_when_left_minutes/set", "500")
        #expect(await eventually(60) { listener.all("podbridge/error").count > presenceErrors })
        #expect(listener.all("podbridge/error").last?.text.contains("offWhenLeftMinutes") == true,
                "\(listener.all("podbridge/error").suffix(2).map(\.text))")
        #expect(try await hub.daemon.store.presencePowerSide(podSerial: "VPOD-MQTT", side: .right)?.settings?.offWhenLeftMinutes == 25)
        // Clearing commands retained by mistake, as docs/mqtt.md says (an empty retained
        // message), runs none of them: the manual schedule stays, nothing reaches the pod.
        let resultsBeforeClear = listener.all("podbridge/VPOD-MQTT/command/result").count
        let errorsBeforeClear = listener.all("podbridge/error").count
        let answeredBeforeClear = hub.pod.snapshot.requestsAnswered
        for command in ["schedule/clear", "alarm/stop", "alarm/snooze", "power/set"] {
            try listener.publish("podbridge/VPOD-MQTT/left/\(command)", "", retain: true)
        }
        try listener.publish("podbridge/VPOD-MQTT/left/wake_window/set", "20")  // in order after the clears
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/schedule"))?["wake_window_minutes"] as? Int == 20 })
        #expect(await eventually(30) { listener.all("podbridge/VPOD-MQTT/command/result").count > resultsBeforeClear })
        try await Task.sleep(for: .milliseconds(300))
        #expect(listener.all("podbridge/VPOD-MQTT/command/result").count == resultsBeforeClear + 1,
                "results: \(listener.all("podbridge/VPOD-MQTT/command/result").suffix(5).map(\.text))")
        #expect(listener.all("podbridge/error").count == errorsBeforeClear)
        #expect(json(listener.last("podbridge/VPOD-MQTT/left/schedule"))?["wake"] as? String == "06:40")
        #expect(!hub.lines.all.contains { $0.contains("manual schedule cleared") }, "hub said \(hub.lines.all.suffix(10))")
        #expect(hub.pod.snapshot.requestsAnswered - answeredBeforeClear <= 3)

        // Home Assistant restarts: it announces itself and gets the discovery again.
        let configsBefore = listener.all("homeassistant/binary_sensor/podbridge_VPOD-MQTT/left_occupancy/config").count
        try listener.publish("homeassistant/status", "online")
        #expect(await eventually(60) {
            listener.all("homeassistant/binary_sensor/podbridge_VPOD-MQTT/left_occupancy/config").count > configsBefore
        })

        // The night ends: the last night is published with its score and sleep time.
        await hub.pod.waitUntilFinished()
        #expect(await eventually(120) { json(listener.last("podbridge/VPOD-MQTT/left/last_night"))?["score"] is Int },
                "no last night; hub said \(hub.lines.all.suffix(10))")
        let lastNight = try #require(json(listener.last("podbridge/VPOD-MQTT/left/last_night")))
        #expect((lastNight["total_sleep_minutes"] as? Int ?? 0) > 10)
        #expect(lastNight["stage_minutes"] is [String: Any] && lastNight["wake_date"] as? String == "2026-11-16")
        // Through the whole night (and the re-announce above), the other hub's entity stayed.
        #expect(listener.all("homeassistant/sensor/podbridge_POD2/left_heart_rate/config").map(\.text) == [otherHub])

        await hub.stop()
        // A clean stop says offline itself.
        #expect(await eventually(30) { listener.last("podbridge/status")?.text == "offline" })
        #expect(listener.last("podbridge/VPOD-MQTT/availability")?.text == "offline")
        // The retained link state no longer says connected once the hub is gone.
        #expect(json(listener.last("podbridge/VPOD-MQTT/link"))?["connected"] as? Bool == false,
                "\(String(describing: listener.last("podbridge/VPOD-MQTT/link")?.text))")
        await listener.stop()
    }

    @Test func theBrokerRestartingMidNightIsReconnectedAndEverythingRetainedIsPublishedAgain() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port)
        try await listener.waitConnected()
        let hub = try await Self.start(broker: broker, hours: 1.5, speed: 150)
        #expect(await eventually(120) { Self.configTopics(listener).count == Self.configsPerPod })
        #expect(await eventually(120) { json(listener.last("podbridge/VPOD-MQTT/left/state"))?["present"] as? Bool == true })

        // A smart wake told on the bus (as the wake service does): retained on <side>/wake.
        let end: Int64 = 1_794_870_000  // 2026-11-16T23:00:00Z
        let record = WakeRecord(podSerial: "VPOD-MQTT", side: .left, wakeDate: try #require(CalendarDay(year: 2026, month: 11, day: 16)),
                                windowStart: end - 1800, windowEnd: end, windowMinutes: 30)
        hub.daemon.bus.publish(.wake(WakeNotice(kind: .windowOpened, serial: "VPOD-MQTT", side: .left,
                                                at: Date(timeIntervalSince1970: Double(end - 1800)), record: record, text: "window open")))
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/wake"))?["event"] as? String == "window_opened" })
        // And once, not retained, as the left smart-wake event entity's event.
        #expect(await eventually(30) { json(listener.last("podbridge/VPOD-MQTT/left/wake/event"))?["event_type"] as? String == "window_opened" })
        #expect(listener.all("podbridge/VPOD-MQTT/left/wake/event").count == 1
                && listener.last("podbridge/VPOD-MQTT/left/wake/event")?.retain == false)

        // The broker goes away (it keeps nothing: persistence is off) and comes back.
        broker.stop()
        #expect(await eventually(60) { hub.lines.all.contains { $0.contains("connection to the broker lost") } })
        #expect(await eventually(60) { listener.connectionCount == 1 && !listener.events.isEmpty })
        listener.clear()
        try broker.start()
        #expect(await eventually(120) { Self.configTopics(listener).count == Self.configsPerPod },
                "discovery not re-published: \(Self.configTopics(listener).count); hub said \(hub.lines.all.suffix(10))")
        try await Self.checkDiscovery(port: broker.port)
        #expect(await eventually(60) { listener.last("podbridge/status")?.text == "online" })
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/link"))?["connected"] as? Bool == true })
        // The wake is published again with the other states; only once it is on the broker does
        // a later subscriber get it as retained (one that subscribes first gets it forwarded, not retained).
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/wake"))?["event"] as? String == "window_opened" },
                "the wake was not published again; hub said \(hub.lines.all.suffix(10))")
        let late = try Listener(port: broker.port, filters: ["podbridge/#"])
        // A subscriber that comes after the restart is handed each state by the broker (retained);
        // a newer live update on the same topic may follow it (the night goes on at 150×).
        let retainedTopics = ["podbridge/VPOD-MQTT/link", "podbridge/status", "podbridge/VPOD-MQTT/left/state",
                              "podbridge/VPOD-MQTT/left/wake"]
        #expect(await eventually(60) {
            retainedTopics.allSatisfy { topic in late.messages.contains { $0.topic == topic && $0.retain } }
        }, "retained after the restart: \(Set(late.messages.filter(\.retain).map(\.topic)).sorted())")
        await late.stop()
        #expect(await eventually(60) { listener.last("podbridge/VPOD-MQTT/left/state") != nil })
        #expect(await eventually(60) { listener.last("podbridge/VPOD-MQTT/left/schedule") != nil })

        // The night went on regardless: it is analysed and stored.
        await hub.pod.waitUntilFinished()
        let store = hub.daemon.store
        #expect(await eventually(120) { (try? await store.allSessions(side: .left).contains { $0.isFinal }) == true },
                "no final session; hub said \(hub.lines.all.suffix(10))")
        #expect(try await store.integrityCheck() == ["ok"])
        #expect(await eventually(60) { json(listener.last("podbridge/VPOD-MQTT/left/last_night"))?["score"] is Int })
        await hub.stop()
        await listener.stop()
    }

    @Test func wrongCredentialsAreLoggedClearlyAndTheHubKeepsRunning() async throws {
        let broker = try TestBroker(users: ["podbridge": "right-password"])
        let hub = try await Self.start(broker: broker, hours: 1, speed: 200) { config in
            config.mqtt.username = "podbridge"
            config.mqtt.password = "wrong-password"
        }
        #expect(await eventually(60) { hub.lines.all.contains { $0.contains("refused the connection") && $0.contains("mqtt.password") } },
                "hub said \(hub.lines.all.suffix(10))")
        // The rest of the hub goes on: the pod streams and the night is stored.
        await hub.pod.waitUntilFinished()
        let store = hub.daemon.store
        #expect(await eventually(120) { (try? await store.allSessions(side: .left).contains { $0.isFinal }) == true },
                "no final session; hub said \(hub.lines.all.suffix(10))")
        // Retried all night with backoff, but said once as a warning (repeats go to the debug log).
        #expect(hub.lines.all.filter { $0.contains("refused the connection") }.count == 1)
        await hub.stop()

        // With the right password, a client connects to the same broker.
        let listener = try Listener(port: broker.port, username: "podbridge", password: "right-password")
        try await listener.waitConnected()
        await listener.stop()
    }

    /// `podbridge run` as a user runs it (MQTT from the environment) against the virtual pod:
    /// the pod appears in Home Assistant's discovery; killed, the broker publishes its last will.
    @Test func theRealDaemonAnnouncesThePodAndItsLastWillIsPublishedWhenItDies() async throws {
        let binary = try #require(Self.podbridgeURL(), "podbridge must be built beside the tests")
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port)
        try await listener.waitConnected()
        let directory = NSTemporaryDirectory() + "podbridge-mqtt-run-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let speed = 100.0
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: Self.serial, sides: 2, channelsPerSide: 2), night: Self.night(hours: 2, seed: 3),
            speed: speed, nightStartUnix: Self.nightStart.timeIntervalSince1970, linkPath: directory + "/pod-link"))
        let tty = try pod.start()
        defer { pod.stop() }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["run", "--path", tty, "--state-dir", directory + "/state", "--tz", "UTC", "--no-api",
                             "--log-level", "info", "--clock-speed", "\(speed)", "--clock-start", "2026-11-16T22:00:00Z"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PODBRIDGE_") }
        environment["PODBRIDGE_MQTT_HOST"] = "127.0.0.1"
        environment["PODBRIDGE_MQTT_PORT"] = "\(broker.port)"
        environment["PODBRIDGE_MQTT_CLIENT_ID"] = "podbridge-run-test"
        environment["PODBRIDGE_MQTT_PUBLISH_EVERY_SECONDS"] = "1"
        process.environment = environment
        let logPath = directory + "/daemon.log"
        try #require(FileManager.default.createFile(atPath: logPath, contents: nil), "could not create \(logPath)")
        let log = try #require(FileHandle(forWritingAtPath: logPath))
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func said() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        #expect(await eventually(120) { Self.configTopics(listener).count == Self.configsPerPod },
                "discovery: \(Self.configTopics(listener).count); the daemon said: \(said().suffix(2000))")
        #expect(listener.last("podbridge/status")?.text == "online")
        #expect(await eventually(60) { listener.last("podbridge/VPOD-MQTT/availability")?.text == "online" })
        #expect(await eventually(120) { json(listener.last("podbridge/VPOD-MQTT/left/state"))?["present"] as? Bool == true },
                "the daemon said: \(said().suffix(2000))")

        // The hub dies without a word: the broker says `offline` for it (the last will, retained).
        kill(process.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(await eventually(60) { listener.last("podbridge/status")?.text == "offline" },
                "status: \(listener.all("podbridge/status").map(\.text))")
        // Retained: a client connecting later (Home Assistant restarting) sees the hub offline.
        let late = try Listener(port: broker.port, filters: ["podbridge/status"])
        #expect(await eventually(30) { late.last("podbridge/status")?.text == "offline" && late.last("podbridge/status")?.retain == true })
        await late.stop()
        await listener.stop()
    }

    // MARK: The pod away, alarms as events, one publish per change

    /// Whether Home Assistant shows the entity of `object` as available now: every availability
    /// topic of its (retained) config says `online` on the broker.
    static func available(_ listener: Listener, _ component: String, _ object: String, serial: String = serial) -> Bool {
        guard let config = json(listener.last("homeassistant/\(component)/podbridge_\(serial)/\(object)/config")),
              let availability = config["availability"] as? [[String: Any]] else { return false }
        return availability.allSatisfy { entry in (entry["topic"] as? String).map { listener.last($0)?.text == "online" } ?? false }
    }

    /// The pod unplugged: what the hub stores (last night, the schedule, the alarm and wake
    /// settings) stays available in Home Assistant and can be changed; the pod gets the change
    /// when it comes back. Setting the weekday bedtime keeps the weekend's.
    @Test func storedFactsStayAvailableWhileThePodIsAwayAndABedtimeSetThenReachesItOnReturn() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port)
        try await listener.waitConnected()
        let hub = try await Self.start(broker: broker, hours: 1.0, speed: 200)
        let topic = "podbridge/VPOD-MQTT"
        #expect(await eventually(120) { Self.configTopics(listener).count == Self.configsPerPod })
        #expect(await eventually(60) { json(listener.last("\(topic)/left/schedule"))?["acknowledged"] as? Bool == true },
                "hub said \(hub.lines.all.suffix(10))")
        // The night ends and is stored: last night is published in full.
        await hub.pod.waitUntilFinished()
        #expect(await eventually(120) { json(listener.last("\(topic)/left/last_night"))?["score"] is Int },
                "no last night; hub said \(hub.lines.all.suffix(10))")
        let night = try #require(json(listener.last("\(topic)/left/last_night")))
        for key in ["wake_date", "time_in_bed_minutes", "efficiency", "stage_minutes", "mean_heart_rate", "mean_breathing_rate"] {
            #expect(night[key] != nil && !(night[key] is NSNull), "last night lacks \(key): \(night)")
        }

        // Unplugged.
        hub.pod.stop()
        #expect(await eventually(60) { listener.last("\(topic)/availability")?.text == "offline" }, "hub said \(hub.lines.all.suffix(10))")
        #expect(!Self.available(listener, "binary_sensor", "left_occupancy"))
        #expect(!Self.available(listener, "button", "left_snooze"))
        for (component, object) in [("sensor", "left_sleep_score"), ("sensor", "left_sleep_time"), ("sensor", "left_time_in_bed"),
                                    ("sensor", "left_deep_sleep"), ("text", "left_bedtime"), ("text", "left_weekend_bedtime"),
                                    ("switch", "left_alarm"), ("number", "left_wake_window"), ("sensor", "left_next_alarm"),
                                    ("sensor", "left_smart_wake_status"), ("event", "left_command_result")] {
            #expect(Self.available(listener, component, object), "\(object) unavailable with the pod away")
        }
        // A subscriber coming now (Home Assistant restarting) gets them all retained.
        let late = try Listener(port: broker.port, filters: ["\(topic)/left/+", "podbridge/status"])
        #expect(await eventually(30) {
            ["\(topic)/left/last_night", "\(topic)/left/schedule", "podbridge/status"].allSatisfy { late.last($0)?.retain == true }
        })
        await late.stop()

        // The weekday bedtime set while the pod is away: stored, the weekend's kept.
        let before = try #require(json(listener.last("\(topic)/left/schedule")))
        let weekendBedtime = try #require(before["weekend_bedtime"] as? String)
        #expect(weekendBedtime != "21:10")
        try listener.publish("\(topic)/left/schedule/bedtime/set", "21:10")
        #expect(await eventually(60) { json(listener.last("\(topic)/left/command/event"))?["event_type"] as? String == "ok" },
                "hub said \(hub.lines.all.suffix(10))")
        let outcome = try #require(json(listener.last("\(topic)/left/command/event")))
        #expect(outcome["command"] as? String == "bedtime"
                && (outcome["detail"] as? String)?.hasSuffix("The pod is not connected: it gets this when it next connects.") == true,
                "\(outcome)")
        #expect(await eventually(30) { json(listener.last("\(topic)/left/schedule"))?["bedtime"] as? String == "21:10" })
        let after = try #require(json(listener.last("\(topic)/left/schedule")))
        #expect(after["weekend_bedtime"] as? String == weekendBedtime && after["wake"] as? String == before["wake"] as? String
                && after["weekend_wake"] as? String == before["weekend_wake"] as? String, "\(after)")
        #expect(after["origin"] as? String == "manual")
        // The weekend's own control: now both nights start at 21:10.
        try listener.publish("\(topic)/left/schedule/weekend_bedtime/set", "21:10")
        #expect(await eventually(30) { json(listener.last("\(topic)/left/schedule"))?["weekend_bedtime"] as? String == "21:10" })
        #expect(json(listener.last("\(topic)/left/schedule"))?["bedtime"] as? String == "21:10")
        let windows = try #require(json(listener.last("\(topic)/left/schedule"))?["power"] as? [[String: Any]])
        let on = Set(windows.compactMap { $0["on"] as? String })
        #expect(on.count == 1, "\(windows)")
        let expectedOn = try #require(on.first.flatMap { TimeOfDay($0) })

        // Plugged in again (a pod with the same serial on the same link): the schedule reaches it.
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: Self.serial, sides: 2, channelsPerSide: 2), night: Self.night(hours: 1, seed: 9),
            speed: 200, nightStartUnix: hub.daemon.clock.now().timeIntervalSince1970, linkPath: hub.directory + "/pod-link"))
        _ = try pod.start()
        defer { pod.stop() }
        #expect(await eventually(60) { listener.last("\(topic)/availability")?.text == "online" }, "hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(60) { pod.currentSchedule(side: .left)?.power?.on == expectedOn },
                "the pod holds \(String(describing: pod.currentSchedule(side: .left))); hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(60) { json(listener.last("\(topic)/left/schedule"))?["acknowledged"] as? Bool == true })
        #expect(Self.available(listener, "binary_sensor", "left_occupancy"))
        await hub.stop()
        await listener.stop()
    }

    /// The virtual pod rings the left alarm: fired, snoozed (ringing stops), fired again, stopped,
    /// each an event of the left alarm entity, with the alarm-ringing sensor following; a snooze
    /// with nothing ringing is the pod's refusal, "nothing to snooze", on the side's command event.
    @Test func alarmsAreEventsAndEveryCommandAnswersOnItsSide() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port)
        try await listener.waitConnected()
        // The alarm rings 10 simulated minutes (3 s): time for the test to press snooze.
        let hub = try await Self.start(broker: broker, hours: 1.5, speed: 200) { $0.schedule.conversion.alarm.durationSeconds = 600 }
        let topic = "podbridge/VPOD-MQTT"
        #expect(await eventually(120) { json(listener.last("\(topic)/left/schedule"))?["acknowledged"] as? Bool == true },
                "hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(60) { json(listener.last("\(topic)/left/state"))?["alarm_ringing"] as? Bool == false })

        try listener.publish("\(topic)/left/alarm/snooze", "PRESS")
        #expect(await eventually(60) { json(listener.last("\(topic)/left/command/event"))?["event_type"] as? String == "nack" })
        let refused = try #require(json(listener.last("\(topic)/left/command/event")))
        #expect(refused["command"] as? String == "snooze" && refused["detail"] as? String == "nothing to snooze", "\(refused)")
        #expect(listener.all("\(topic)/right/command/event").isEmpty)

        // An alarm a quarter of an hour ahead (simulated), bedtime early enough for a valid night.
        try listener.publish("\(topic)/left/schedule/bedtime/set", "21:00")
        #expect(await eventually(60) { json(listener.last("\(topic)/left/schedule"))?["bedtime"] as? String == "21:00" })
        let ahead = LocalDateTime(hub.daemon.clock.now().addingTimeInterval(15 * 60), in: try #require(TimeZone(identifier: "UTC")))
        let alarmTime = TimeOfDay(wrapping: (Int(ahead.minuteOfDay) + 4) / 5 * 5)  // on the schedule's 5-minute steps
        try listener.publish("\(topic)/left/schedule/wake/set", alarmTime.description)
        #expect(await eventually(60) { hub.pod.currentSchedule(side: .left)?.alarm?.time == alarmTime },
                "the pod holds \(String(describing: hub.pod.currentSchedule(side: .left))); hub said \(hub.lines.all.suffix(10))")
        // The next alarm is today's, at that time.
        #expect(await eventually(30) {
            (json(listener.last("\(topic)/left/schedule"))?["next_alarm"] as? String)?.hasSuffix("T\(alarmTime):00Z") == true
        }, "\(String(describing: listener.last("\(topic)/left/schedule")?.text))")

        func alarmEvents() -> [String] {
            listener.all("\(topic)/left/alarm/event").compactMap { json($0)?["event_type"] as? String }
        }
        #expect(await eventually(120) { alarmEvents().contains("fired") }, "events \(alarmEvents()); hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(30) { json(listener.last("\(topic)/left/state"))?["alarm_ringing"] as? Bool == true })
        try listener.publish("\(topic)/left/alarm/snooze", "60")
        #expect(await eventually(60) { alarmEvents().contains("snoozed") }, "events \(alarmEvents())")
        #expect(await eventually(30) { json(listener.last("\(topic)/left/command/event"))?["event_type"] as? String == "ack" })
        #expect(await eventually(30) { json(listener.last("\(topic)/left/state"))?["alarm_ringing"] as? Bool == false })
        // A minute (simulated) later it rings again; stopped from Home Assistant.
        #expect(await eventually(60) { alarmEvents().filter { $0 == "fired" }.count == 2 }, "events \(alarmEvents())")
        try listener.publish("\(topic)/left/alarm/stop", "PRESS")
        #expect(await eventually(60) { alarmEvents().last == "stopped" }, "events \(alarmEvents())")
        #expect(await eventually(30) { json(listener.last("\(topic)/left/state"))?["alarm_ringing"] as? Bool == false })
        let stopped = try #require(json(listener.all("\(topic)/left/alarm/event").last))
        #expect(stopped["argument"] as? Int == 2 && stopped["time"] is String && stopped["text"] is String, "\(stopped)")
        #expect(Array(alarmEvents().prefix(4)) == ["fired", "snoozed", "fired", "stopped"], "\(alarmEvents())")
        // Events are not retained: Home Assistant starting later must not see an alarm fire again.
        #expect(listener.all("\(topic)/left/alarm/event").allSatisfy { !$0.retain })
        #expect(listener.all("\(topic)/right/alarm/event").isEmpty)
        await hub.stop()
        await listener.stop()
    }

    /// Ten simulated minutes of a night at 30x, with commands and an unplug on the way: no
    /// topic is published twice in a row with the same payload, the hub's and the pod's
    /// availability go out once per change, each discovery config once, and a command on one
    /// side leaves the other's schedule alone (its acknowledgement on the pod's return is a
    /// change, and is published).
    @Test func everyTopicIsPublishedOncePerChange() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port)
        try await listener.waitConnected()
        let hub = try await Self.start(broker: broker, hours: 1.0, speed: 30) { $0.mqtt.publishEverySeconds = 1 }
        let topic = "podbridge/VPOD-MQTT"
        let start = Self.nightStart
        #expect(await eventually(120) { json(listener.last("\(topic)/right/schedule"))?["acknowledged"] as? Bool == true },
                "hub said \(hub.lines.all.suffix(10))")
        // A bedtime for the right side: pushed to the pod (both sides' pushes are told on the
        // bus), acknowledged; the left side's schedule has not changed and is not published.
        let leftSchedules = listener.all("\(topic)/left/schedule").count
        try listener.publish("\(topic)/right/schedule/bedtime/set", "22:15")
        #expect(await eventually(60) {
            let right = json(listener.last("\(topic)/right/schedule"))
            return right?["bedtime"] as? String == "22:15" && right?["acknowledged"] as? Bool == true
        }, "hub said \(hub.lines.all.suffix(10))")
        try listener.publish("\(topic)/right/wake_window/set", "15")
        #expect(await eventually(60) { json(listener.last("\(topic)/right/schedule"))?["wake_window_minutes"] as? Int == 15 })
        #expect(listener.all("\(topic)/left/schedule").count == leftSchedules,
                "\(listener.all("\(topic)/left/schedule").suffix(3).map(\.text))")
        // The pod away for a few seconds: its availability and link go out once each way.
        hub.pod.inject(.disconnect(seconds: 3))
        #expect(await eventually(60) { listener.last("\(topic)/availability")?.text == "offline" })
        #expect(await eventually(60) { listener.last("\(topic)/availability")?.text == "online" }, "hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(120) { hub.daemon.clock.now() >= start.addingTimeInterval(600) })

        var repeats: [String] = []
        var counts: [String: Int] = [:]
        var last: [String: [UInt8]] = [:]
        for message in listener.messages where message.topic.hasPrefix("podbridge/") || message.topic.hasPrefix("homeassistant/") {
            counts[message.topic, default: 0] += 1
            if last[message.topic] == message.payload { repeats.append("\(message.topic): \(message.text.prefix(120))") }
            last[message.topic] = message.payload
        }
        #expect(repeats.isEmpty, "published twice in a row: \(repeats.prefix(5)) (\(repeats.count) in all)")
        #expect(counts["podbridge/status"] == 1)
        #expect(listener.all("\(topic)/availability").map(\.text) == ["online", "offline", "online"])
        // Each discovery config once (nothing re-announced an unchanged config).
        #expect(Self.configTopics(listener).allSatisfy { counts[$0] == 1 },
                "\(Self.configTopics(listener).filter { counts[$0] != 1 }.prefix(3))")
        await hub.stop()
        await listener.stop()
    }

    // MARK: Hubs with no pod plugged in

    /// A hub whose pod is not plugged in (`pod.path` names nothing), with `knownPods` in its
    /// store as earlier runs left them (firmware 1.0.0, last seen at `nightStart`).
    struct PodlessHub {
        let daemon: HubDaemon
        let service: MQTTService
        let task: Task<Void, any Error>
        let directory: String
        let lines: LogLines

        func said(_ text: String) -> [String] { lines.all.filter { $0.contains(text) } }

        func stop() async {
            task.cancel()
            _ = await task.result
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func startWithoutPod(broker: TestBroker, knownPods: [String] = [],
                                configure: (inout HubConfiguration) -> Void = { _ in }) async throws -> PodlessHub {
        let directory = NSTemporaryDirectory() + "podbridge-mqtt-nopod-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var config = HubConfiguration()
        config.stateDirectory = directory + "/state"
        config.timeZone = "UTC"
        config.pod.path = directory + "/no-pod-here"
        config.pod.reconnectMaxSeconds = 1
        config.api.enabled = false
        config.mqtt.host = "127.0.0.1"
        config.mqtt.port = broker.port
        config.mqtt.clientID = "podbridge-test-\(UUID().uuidString.prefix(6))"
        config.mqtt.publishEverySeconds = 0.5
        configure(&config)
        let lines = LogLines()
        let reporter = HubReporter(logger: Logger(label: "mqtt-test") { _ in LineCapture(sink: lines) }, console: false)
        let daemon = try await HubDaemon.assemble(configuration: config, clock: HubClock(), reporter: reporter)
        for serial in knownPods {
            try await daemon.store.recordPod(serial: serial, firmware: "1.0.0", seenAt: Int64(nightStart.timeIntervalSince1970))
        }
        let service = try MQTTService(configuration: config, bus: daemon.bus, control: daemon.control, store: daemon.store,
                                      reporter: reporter, reconnectMin: .milliseconds(100), reconnectMax: .milliseconds(500))
        let task = Task { try await daemon.run(adding: [service], stopSignals: nil) }
        return PodlessHub(daemon: daemon, service: service, task: task, directory: directory, lines: lines)
    }

    /// Two hubs on one broker with the default base topic deleted each other's Home Assistant
    /// devices: each removed the other's pod's configs as "no longer served". A hub now removes
    /// only configs of pods it has served (its store), leaves another hub's alone, and says once
    /// that the two need base topics of their own.
    @Test func aPodThisHubNeverServedIsLeftToTheHubThatDoes() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port)
        try await listener.waitConnected()
        // What a second hub with the default base topic leaves retained for its pod, VPOD0002.
        let other = HomeAssistantDiscovery(topics: MQTTTopics(), configurationURL: nil, softwareVersion: "other")
        let otherConfigs = other.messages(for: .init(serial: "VPOD0002", firmware: "1.0.0", sides: 2))
        func announceOtherHub() throws {
            for message in otherConfigs { try listener.publish(message.topic, message.text, retain: true) }
            try listener.publish("podbridge/VPOD0002/availability", "online", retain: true)
        }
        try announceOtherHub()
        // A pod this hub served under an earlier configuration (`pod.serial` now names VPOD0001).
        let stale = "homeassistant/sensor/podbridge_OLDPOD/left_heart_rate/config"
        try listener.publish(stale, #"{"name":"old","availability":[{"topic":"podbridge/status"}]}"#, retain: true)

        let hub = try await Self.startWithoutPod(broker: broker, knownPods: ["VPOD0001", "OLDPOD"]) { $0.pod.serial = "VPOD0001" }
        #expect(await eventually(60) { Self.configTopics(listener, serial: "VPOD0001").count == Self.configsPerPod },
                "hub said \(hub.lines.all.suffix(10))")
        #expect(await eventually(60) { listener.last(stale)?.payload == [] }, "the stale pod's config was not removed")
        // The other hub announces again (as on its every reconnect), and Home Assistant restarts.
        try announceOtherHub()
        try listener.publish("homeassistant/status", "online")
        #expect(await eventually(60) { hub.said("Home Assistant came online").count == 1 })
        try await Task.sleep(for: .seconds(1))

        let otherTopics = Set(otherConfigs.map(\.topic))
        #expect(!listener.messages.contains { otherTopics.contains($0.topic) && $0.payload.isEmpty },
                "the other hub's entities were removed; the hub said \(hub.said("removing").prefix(3))")
        let late = try Listener(port: broker.port, filters: ["homeassistant/#"])
        #expect(await eventually(60) { Self.configTopics(late, serial: "VPOD0002").count == Self.configsPerPod },
                "retained for VPOD0002: \(Self.configTopics(late, serial: "VPOD0002").count)")
        await late.stop()
        let warnings = hub.said("another hub publishes pod VPOD0002")
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.contains("under base topic 'podbridge'") == true && warnings.first?.contains("mqtt.baseTopic") == true)
        #expect(hub.said("removing").allSatisfy { $0.contains("OLDPOD") }, "\(hub.said("removing"))")
        await hub.stop()
        await listener.stop()
    }

    /// Two hubs on one machine, each with its own base topic and the default client id: the ids
    /// differ, so neither takes the broker from the other (with `podbridge-<host>` for both,
    /// mosquitto closed one connection at each of the other's connects, every second).
    @Test func twoHubsOnOneMachineKeepTheirConnections() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port, filters: ["+/status"])
        try await listener.waitConnected()
        let first = try await Self.startWithoutPod(broker: broker) { $0.mqtt.clientID = nil }
        let second = try await Self.startWithoutPod(broker: broker) { config in
            config.mqtt.clientID = nil
            config.mqtt.baseTopic = "podbridge-2"
        }
        #expect(await eventually(60) {
            listener.last("podbridge/status")?.text == "online" && listener.last("podbridge-2/status")?.text == "online"
        })
        try await Task.sleep(for: .seconds(3))
        for hub in [first, second] {
            #expect(hub.said("MQTT: connected to").count == 1 && hub.said("connection to the broker lost").isEmpty,
                    "hub said \(hub.lines.all.suffix(6))")
        }
        #expect(listener.all("podbridge/status").map(\.text) == ["online"] && listener.all("podbridge-2/status").map(\.text) == ["online"])
        await first.stop()
        await second.stop()
        await listener.stop()
    }

    /// Another client with the hub's client id: the broker closes one of the two at each
    /// connect. The hub says so once, naming the id, instead of "connection lost" every second.
    @Test func aClientIDInUseElsewhereIsNamed() async throws {
        let broker = try TestBroker()
        let hub = try await Self.startWithoutPod(broker: broker) { $0.mqtt.clientID = "podbridge-twin" }
        #expect(await eventually(60) { hub.said("MQTT: connected to").count == 1 })
        let twin = try Listener(port: broker.port, id: "podbridge-twin")
        #expect(await eventually(60) { hub.said("same client id").count == 1 }, "hub said \(hub.lines.all.suffix(6))")
        try await Task.sleep(for: .seconds(2))
        await twin.stop()
        let clash = hub.said("same client id")
        #expect(clash.count == 1 && clash.first?.contains("'podbridge-twin'") == true, "\(clash)")
        // The first losses are reported as such; the flapping after the diagnosis is not repeated.
        #expect(hub.said("connection to the broker lost").count <= 2, "\(hub.said("connection to the broker lost"))")
        await hub.stop()
    }

    /// A hub killed with its pod plugged in left `link` retained with `"connected": true`; started
    /// again with the pod unplugged, it said only `availability offline`, so Home Assistant's Link
    /// sensor (which reads `link`) showed Connected for good. Now every (re)connection publishes
    /// the link of each known pod that is not connected, also to a broker that lost everything.
    @Test func aKnownPodNotPluggedInIsPublishedAsNotConnected() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port, filters: ["podbridge/#"])
        try await listener.waitConnected()
        try listener.publish("podbridge/VPOD0001/link", #"{"connected": true, "since": "2026-11-16T22:00:00Z"}"#, retain: true)
        let hub = try await Self.startWithoutPod(broker: broker, knownPods: ["VPOD0001"])
        let documented: Set<String> = ["connected", "since", "endpoint", "reason", "firmware", "boot_count", "clock_set", "counters"]
        func checkLink(_ listener: Listener) -> Bool {
            guard let link = json(listener.last("podbridge/VPOD0001/link")) else { return false }
            return link["connected"] as? Bool == false && Set(link.keys) == documented && link["firmware"] as? String == "1.0.0"
                && (link["reason"] as? String)?.contains("last seen 2026-11-16T22:00:00Z") == true
                && (link["counters"] as? [String: Any])?["dropped_frames"] as? Int == 0
        }
        #expect(await eventually(60) { checkLink(listener) }, "link: \(String(describing: listener.last("podbridge/VPOD0001/link")?.text))")
        #expect(listener.last("podbridge/VPOD0001/availability")?.text == "offline")
        let late = try Listener(port: broker.port, filters: ["podbridge/VPOD0001/link"])
        #expect(await eventually(30) { checkLink(late) && late.last("podbridge/VPOD0001/link")?.retain == true })
        await late.stop()

        // The broker restarts without persistence: the link is there again once the hub is back.
        broker.stop()
        #expect(await eventually(60) { hub.said("connection to the broker lost").count == 1 })
        listener.clear()
        try broker.start()
        #expect(await eventually(60) { checkLink(listener) }, "hub said \(hub.lines.all.suffix(6))")
        await hub.stop()
        await listener.stop()
    }

    /// Home Assistant's birth topic is a setting of its own, `homeassistant/status` by default
    /// whatever the discovery prefix: a hub with prefix `ha` listened on `ha/status` alone and
    /// announced nothing again after Home Assistant restarted. It listens on both now.
    @Test func homeAssistantsBirthIsHeardOnItsDefaultTopicWithACustomPrefix() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port, filters: ["ha/#"])
        try await listener.waitConnected()
        let hub = try await Self.startWithoutPod(broker: broker, knownPods: ["VPOD0001"]) { $0.mqtt.discoveryPrefix = "ha" }
        let occupancy = "ha/binary_sensor/podbridge_VPOD0001/left_occupancy/config"
        #expect(await eventually(60) { listener.all(occupancy).count == 1 }, "hub said \(hub.lines.all.suffix(6))")
        for birth in ["homeassistant/status", "ha/status"] {
            let before = listener.all(occupancy).count
            try listener.publish(birth, "online")
            #expect(await eventually(60) { listener.all(occupancy).count == before + 1 }, "\(birth): nothing announced again")
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(listener.all(occupancy).count == 3)
        await hub.stop()
        await listener.stop()
    }

    /// The `podbridge` executable built beside the test bundle.
    static func podbridgeURL() -> URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("podbridge")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }
}

/// Every log line the hub wrote, in order.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

struct LineCapture: LogHandler {
    let sink: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { sink.append("\(event.level): \(event.message)") }
}
