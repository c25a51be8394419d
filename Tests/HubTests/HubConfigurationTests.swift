import Foundation
@testable import Hub
import Logging
import SleepAnalysis
import Testing

@Suite struct HubConfigurationTests {
    @Test func aPartialFileKeepsTheDefaultsOfEverythingLeftOut() throws {
        let json = #"{"timeZone": "Europe/Berlin", "sessions": {"maxGapMinutes": 30}, "schedule": {"inference": {"minimumNights": 2}}}"#
        let config = try HubConfiguration.decode(Data(json.utf8), path: "test.json")
        #expect(config.timeZone == "Europe/Berlin")
        #expect(config.sessions.maxGapMinutes == 30)
        #expect(config.sessions.minSessionMinutes == HubConfiguration().sessions.minSessionMinutes)
        #expect(config.sessions.maxDataGapMinutes == SessionRules.defaultMaxDataGap / 60)
        #expect(config.schedule.inference.minimumNights == 2)
        #expect(config.schedule.inference.lookbackDays == HubConfiguration().schedule.inference.lookbackDays)
        #expect(config.databasePath == "state/podbridge.sqlite")
    }

    @Test func optionalKeysMayBeSet() throws {
        let json = #"{"pod": {"path": "/dev/sleeppod"}, "upload": {"baseURL": "http://127.0.0.1:8080", "token": "t"}}"#
        let config = try HubConfiguration.decode(Data(json.utf8), path: "test.json")
        #expect(config.pod.path == "/dev/sleeppod")
        #expect(config.upload.baseURL == "http://127.0.0.1:8080")
    }

    @Test func mistakesAreNamed() {
        #expect(throws: ConfigurationError.unknownKey(path: "c.json", key: "sessions.maxGap")) {
            try HubConfiguration.decode(Data(#"{"sessions": {"maxGap": 3}}"#.utf8), path: "c.json")
        }
        #expect(throws: ConfigurationError.badValue(key: "timeZone", reason: "unknown zone 'Mars/Olympus'")) {
            try HubConfiguration.decode(Data(#"{"timeZone": "Mars/Olympus"}"#.utf8), path: "c.json")
        }
        #expect(throws: ConfigurationError.self) {
            try HubConfiguration.decode(Data(#"{"export": {"format": "xml"}}"#.utf8), path: "c.json")
        }
        #expect(throws: ConfigurationError.self) {
            try HubConfiguration.decode(Data("not json".utf8), path: "c.json")
        }
        #expect(throws: ConfigurationError.badValue(key: "sessions.maxDataGapMinutes", reason: "minutes, > 0, got 0.0")) {
            try HubConfiguration.decode(Data(#"{"sessions": {"maxDataGapMinutes": 0}}"#.utf8), path: "c.json")
        }
        // Refused on reading, so by every command, not only when a schedule is worked out.
        #expect(throws: ConfigurationError.badValue(key: "schedule.conversion", reason: "alarm intensity must be in 0…100, is 500")) {
            try HubConfiguration.decode(Data(#"{"schedule": {"conversion": {"alarm": {"intensity": 500}}}}"#.utf8), path: "c.json")
        }
    }

    @Test func environmentOverridesTheFile() throws {
        var config = HubConfiguration()
        try config.applyEnvironment(["PODBRIDGE_STATE_DIRECTORY": "/var/lib/podbridge", "PODBRIDGE_POD_PATH": "/dev/x"])
        #expect(config.databasePath == "/var/lib/podbridge/podbridge.sqlite")
        #expect(config.exportDirectory == "/var/lib/podbridge/exports")
        #expect(config.pod.path == "/dev/x")
    }

    /// A database put elsewhere takes the exports with it; a state directory of its own is not
    /// made (a user who runs `podbridge run --db ~/pod/hub.sqlite` finds no `./state`).
    @Test func theExportsFollowTheDatabase() throws {
        var config = HubConfiguration()
        #expect(config.exportDirectory == "state/exports")
        config.database = "/srv/pod/hub.sqlite"
        #expect(config.exportDirectory == "/srv/pod/exports")
        config.database = "hub.sqlite"
        #expect(config.exportDirectory == "exports")
        config.export.directory = "/media/usb/nights"
        #expect(config.exportDirectory == "/media/usb/nights")
    }

    @Test func aSecretFromTheEnvironmentCompletesTheFileBeforeItIsChecked() throws {
        // Under systemd the secrets sit in the environment, the rest in the file: a file that
        // is valid only with them is checked once they are in.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("config.json").path
        try Data(#"{"api": {"listen": "0.0.0.0:8380"}, "mqtt": {"host": "h", "password": "p"}}"#.utf8).write(to: URL(fileURLWithPath: file))
        let complete = try HubConfiguration.resolve(
            file: file, environment: ["PODBRIDGE_API_TOKEN": "secret", "PODBRIDGE_MQTT_USERNAME": "u"], systemPath: "/nonexistent")
        #expect(complete.api.token == "secret" && complete.mqtt.username == "u")
        #expect(throws: ConfigurationError.self) {
            try HubConfiguration.resolve(file: file, environment: ["PODBRIDGE_MQTT_USERNAME": "u"], systemPath: "/nonexistent")
        }
        #expect(throws: ConfigurationError.self) {
            try HubConfiguration.resolve(file: file, environment: ["PODBRIDGE_API_TOKEN": "secret"], systemPath: "/nonexistent")
        }
    }

    /// A command's options come last: one overrides a variable, and stands in for a bad one
    /// (`analyze --tz` with a wrong $PODBRIDGE_TIME_ZONE in the shell).
    @Test func optionsOverrideTheEnvironmentBeforeTheCheck() throws {
        let bad = ["PODBRIDGE_TIME_ZONE": "Mars/Olympus"]
        #expect(throws: ConfigurationError.self) {
            try HubConfiguration.resolve(file: nil, environment: bad, systemPath: "/nonexistent")
        }
        let fixed = try HubConfiguration.resolve(file: nil, environment: bad, systemPath: "/nonexistent") { $0.timeZone = "Asia/Tokyo" }
        #expect(fixed.timeZone == "Asia/Tokyo")
        // The options are checked as well: a bad one is not let through.
        #expect(throws: ConfigurationError.self) {
            try HubConfiguration.resolve(file: nil, environment: [:], systemPath: "/nonexistent") { $0.timeZone = "Nowhere/Else" }
        }
    }

    @Test func eachMistakeSaysWhichKeyAndWhatItWants() throws {
        func message(_ json: String) -> String {
            do { _ = try HubConfiguration.decode(Data(json.utf8), path: "c.json"); return "accepted" } catch { return error.description }
        }
        // A fraction for a whole number: the decoder names no key ("not valid JSON" before).
        #expect(message(#"{"schedule": {"smartWake": {"left": {"windowMinutes": 1.5}}}}"#)
                == "configuration c.json: schedule.smartWake.left.windowMinutes: expected a whole number, got 1.5")
        #expect(message(#"{"retention": {"epochDays": 1.5}}"#) == "configuration c.json: retention.epochDays: expected a whole number, got 1.5")
        // A fraction where a fraction is fine is still fine.
        #expect(message(#"{"sessions": {"maxGapMinutes": 1.5}}"#) == "accepted")
        // Types in words, not Swift's.
        #expect(message(#"{"mqtt": null}"#).hasSuffix("mqtt: expected an object"), "\(message(#"{"mqtt": null}"#))")
        #expect(message(#"{"schedule": {"inference": {"weekendWakeDays": [6, 7]}}}"#)
                .hasSuffix("schedule.inference.weekendWakeDays: expected a whole number 0–255"))
        // Checked when read, by every command, not only by run and sync.
        #expect(message(#"{"upload": {"baseURL": "ftp//x"}}"#).contains("upload.baseURL: must be http(s)://host"))
        #expect(message(#"{"schedule": {"inference": {"minimumNights": 0}}}"#)
                .hasSuffix("schedule.inference: minimumNights must be ≥ 1, is 0"), "\(message(#"{"schedule": {"inference": {"minimumNights": 0}}}"#))")
        // A directory given as the file.
        #expect(throws: ConfigurationError.unreadable(path: "/tmp", reason: "it is a directory, not a JSON file")) {
            try HubConfiguration.load(path: "/tmp")
        }
    }

    /// `logLevel` takes swift-log's level names, and a wrong one is refused with them listed.
    @Test func theLogLevelIsOneOfSwiftLogs() throws {
        #expect(HubConfiguration.logLevels == Logger.Level.allCases.map(\.rawValue))
        var config = HubConfiguration()
        for level in ["trace", "debug", "info", "notice", "warning", "error", "critical"] {
            config.logLevel = level
            try config.validate()
        }
        config.logLevel = "verbose"
        #expect(throws: ConfigurationError.badValue(
            key: "logLevel", reason: "expected one of trace, debug, info, notice, warning, error, critical, got 'verbose'")) {
            try config.validate()
        }
    }

    @Test func theBackendTokenIsReadUnderEitherName() throws {
        // `sync` has long read PODBRIDGE_BACKEND_TOKEN; the daemon read only the other.
        for name in ["PODBRIDGE_UPLOAD_TOKEN", "PODBRIDGE_BACKEND_TOKEN"] {
            var config = HubConfiguration()
            try config.applyEnvironment([name: "t0ken"])
            #expect(config.upload.token == "t0ken", "\(name)")
        }
    }

    @Test func bothTokenVariablesSetTheUploadTokenOneWins() throws {
        var config = HubConfiguration()
        try config.applyEnvironment(["PODBRIDGE_UPLOAD_TOKEN": "upload", "PODBRIDGE_BACKEND_TOKEN": "backend"])
        #expect(config.upload.token == "upload")
    }

    /// A bad value from the environment was reported under its JSON key alone, which a user
    /// who set only the variable (a systemd drop-in, a container) finds nowhere.
    @Test(arguments: [
        ("PODBRIDGE_TIME_ZONE", "Mars/Olympus", "configuration: timeZone (from $PODBRIDGE_TIME_ZONE): unknown zone 'Mars/Olympus'"),
        ("PODBRIDGE_UPLOAD_URL", "ftp://x", "configuration: upload.baseURL (from $PODBRIDGE_UPLOAD_URL): must be http(s)"),
        ("PODBRIDGE_MQTT_BASE_TOPIC", "pod/#", "configuration: mqtt.baseTopic (from $PODBRIDGE_MQTT_BASE_TOPIC): must be a topic"),
        ("PODBRIDGE_MQTT_PORT", "0", "configuration: mqtt.port (from $PODBRIDGE_MQTT_PORT): must be 1–65535, got 0"),
    ])
    func aBadValueFromTheEnvironmentNamesTheVariable(_ name: String, _ value: String, _ says: String) {
        var config = HubConfiguration()
        var message = ""
        do { try config.applyEnvironment([name: value]) } catch { message = error.description }
        #expect(message.hasPrefix(says), "\(message)")
    }

    @Test func aBadValueFromTheFileIsNotBlamedOnTheEnvironment() throws {
        var config = try HubConfiguration.decode(Data(#"{"timeZone": "Europe/Berlin"}"#.utf8), path: "c.json")
        config.timeZone = "Mars/Olympus"
        var message = ""
        do { try config.applyEnvironment(["PODBRIDGE_API_TOKEN": "t"]) } catch { message = error.description }
        #expect(message == "configuration: timeZone: unknown zone 'Mars/Olympus'", "\(message)")
    }

    @Test func pollingIntervalsThatWouldSpinOrTrapAreRefused() {
        for (key, json) in [("upload.pollSeconds", #"{"upload": {"pollSeconds": 0}}"#),
                            ("upload.pollSeconds", #"{"upload": {"pollSeconds": -1}}"#),
                            ("upload.pollSeconds", #"{"upload": {"pollSeconds": 1e300}}"#),
                            ("pod.rescanSeconds", #"{"pod": {"rescanSeconds": 0.01}}"#),
                            ("pod.reconnectMaxSeconds", #"{"pod": {"reconnectMaxSeconds": 1e300}}"#)] {
            var named: String?
            do { _ = try HubConfiguration.decode(Data(json.utf8), path: "c.json") } catch {
                if case .badValue(let k, _) = error { named = k }
            }
            #expect(named == key, "\(json)")
        }
    }

    @Test func mqttIsOffUntilAHostIsSetAndTheTwoLineConfigurationIsEnough() throws {
        #expect(HubConfiguration().mqtt.host == nil)
        let json = #"{"mqtt": {"host": "ha.local", "username": "podbridge", "password": "secret"}}"#
        let config = try HubConfiguration.decode(Data(json.utf8), path: "c.json")
        #expect(config.mqtt.host == "ha.local" && config.mqtt.port == 1883 && config.mqtt.password == "secret")
        #expect(config.mqtt.baseTopic == "podbridge" && config.mqtt.discoveryPrefix == "homeassistant")
        #expect(config.mqtt.publishEverySeconds == 10)
        #expect(config.mqttClientID.hasPrefix("podbridge-"))
    }

    /// Two hubs on one machine, each with its own base topic as docs/mqtt.md asks, get client
    /// ids of their own by default (with one id, the broker closed one hub's connection at
    /// each of the other's connects); a configured id is used as it is.
    @Test func theDefaultMQTTClientIDFollowsANonDefaultBaseTopic() {
        var first = HubConfiguration()
        var second = HubConfiguration()
        second.mqtt.baseTopic = "home/bed 2"
        let host = "podbridge-" + ProcessInfo.processInfo.hostName.prefix { $0 != "." }
        #expect(first.mqttClientID == HubConfiguration.brokerSafeClientID(host))
        #expect(second.mqttClientID == HubConfiguration.brokerSafeClientID(host + "-home-bed-2"))
        first.mqtt.baseTopic = "podbridge-left"
        #expect(first.mqttClientID == HubConfiguration.brokerSafeClientID(host + "-podbridge-left"))
        #expect(first.mqttClientID != second.mqttClientID)
        #expect(first.mqttClientID.utf8.count <= 23 && second.mqttClientID.utf8.count <= 23)
        second.mqtt.clientID = "hub-2"
        #expect(second.mqttClientID == "hub-2")
    }

    /// A broker need only take ids of up to 23 characters (MQTT 3.1.1): a longer default is cut
    /// and marked with its hash, so it stays distinct and stable.
    @Test func aLongDefaultClientIDIsCutToWhatEveryBrokerTakes() {
        #expect(HubConfiguration.brokerSafeClientID("podbridge-box") == "podbridge-box")
        #expect(HubConfiguration.brokerSafeClientID("podbridge-1234567890123") == "podbridge-1234567890123")
        let left = HubConfiguration.brokerSafeClientID("podbridge-bedroom-hub-podbridge-left")
        let right = HubConfiguration.brokerSafeClientID("podbridge-bedroom-hub-podbridge-right")
        #expect(left.utf8.count == 23 && right.utf8.count == 23 && left != right)
        #expect(left.hasPrefix("podbridge-bedroo-"))
        #expect(left == HubConfiguration.brokerSafeClientID("podbridge-bedroom-hub-podbridge-left"))
        // FNV-1a 32 of the id, low 24 bits (computed apart, in Python): the same on every machine and run.
        #expect(HubConfiguration.brokerSafeClientID("podbridge-aaaaaaaaaaaaaaaaaaaaaa") == "podbridge-aaaaaa-4b2fee")
    }

    @Test func mqttEnvironmentOverridesAndMistakes() throws {
        var config = HubConfiguration()
        try config.applyEnvironment(["PODBRIDGE_MQTT_HOST": "broker", "PODBRIDGE_MQTT_PORT": "8883",
                                     "PODBRIDGE_MQTT_USERNAME": "u", "PODBRIDGE_MQTT_PASSWORD": "p",
                                     "PODBRIDGE_MQTT_CLIENT_ID": "hub-1", "PODBRIDGE_MQTT_BASE_TOPIC": "home/bed",
                                     "PODBRIDGE_MQTT_DISCOVERY_PREFIX": "ha", "PODBRIDGE_MQTT_PUBLISH_EVERY_SECONDS": "5"])
        #expect(config.mqtt.host == "broker" && config.mqtt.port == 8883 && config.mqtt.username == "u")
        #expect(config.mqttClientID == "hub-1" && config.mqtt.baseTopic == "home/bed" && config.mqtt.discoveryPrefix == "ha")
        #expect(config.mqtt.publishEverySeconds == 5)
        var bad = HubConfiguration()
        // Named as every variable's bad value is: the key, and the variable that set it.
        #expect(throws: ConfigurationError.badValue(key: "mqtt.port (from $PODBRIDGE_MQTT_PORT)", reason: "not a number: 'eighty'")) {
            try bad.applyEnvironment(["PODBRIDGE_MQTT_PORT": "eighty"])
        }
        for json in [#"{"mqtt": {"port": 0}}"#, #"{"mqtt": {"baseTopic": "pod/#"}}"#, #"{"mqtt": {"discoveryPrefix": "ha/"}}"#,
                     #"{"mqtt": {"password": "p"}}"#, #"{"mqtt": {"tls": "/nonexistent/ca.pem"}}"#,
                     #"{"mqtt": {"publishEverySeconds": 0}}"#, #"{"mqtt": {"hots": "x"}}"#] {
            #expect(throws: ConfigurationError.self, "accepted \(json)") { try HubConfiguration.decode(Data(json.utf8), path: "c.json") }
        }
    }

    @Test func acceleratedClockRunsFromItsStart() {
        let origin = Date(timeIntervalSince1970: 1_000)
        let clock = HubClock(start: Date(timeIntervalSince1970: 5_000), speed: 100, origin: origin)
        #expect(clock.isAccelerated)
        #expect(clock.realDuration(of: 100) == .seconds(1))
    }

    @Test func elapsedTimeIsTheMonotonicClocksAtTheHubClocksSpeed() {
        // An origin far in the past: what `now()` reads does not enter a monotonic measure.
        let clock = HubClock(start: Date(timeIntervalSince1970: 5_000), speed: 300, origin: Date(timeIntervalSince1970: 0))
        let threeHoursAgo = clock.mark(secondsAgo: 3 * 3600)
        let elapsed = clock.seconds(since: threeHoursAgo)
        // 36 s of real time at 300×, plus the few real milliseconds this test took (× 300).
        #expect(elapsed >= 3 * 3600 && elapsed < 3 * 3600 + 60, "\(elapsed)")
        #expect(clock.seconds(since: clock.mark(secondsAgo: -50)) < 60)  // no instant in the future
    }
}
