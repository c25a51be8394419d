import Foundation
import SleepDomain
import SleepSchedule

/// Everything `podbridge run` can be told, with defaults that work.
///
/// Read from a JSON file (`--config PATH`, else `/etc/podbridge/config.json` if present),
/// where any key may be left out, then overridden by `PODBRIDGE_*` environment variables
/// (see `applyEnvironment`). docs/configuration.md lists every key.
package struct HubConfiguration: Codable, Sendable, Equatable {
    /// Where the database and exports live (systemd's StateDirectory).
    package var stateDirectory: String = "state"
    /// SQLite file; default `<stateDirectory>/podbridge.sqlite`. The exports follow it
    /// (`exportDirectory`), so a hub given only `--db` writes nothing under `./state`.
    package var database: String?
    /// The hub's time zone: wake dates and exports. Default: the system's.
    package var timeZone: String?
    package var pod = PodSettings()
    package var sessions = SessionSettings()
    package var schedule = ScheduleSettings()
    package var export = ExportSettings()
    package var upload = UploadSettings()
    package var retention = RetentionSettings()
    package var api = APISettings()
    package var mqtt = MQTTSettings()
    package var homekit = HomeKitSettings()
    /// Seconds between live-reading lines on the console.
    package var progressSeconds: Double = 2
    /// The log's least level (`trace` … `critical`, as swift-log names them). Default: `info`
    /// when standard error is the journal's (systemd), `warning` in a terminal, where the console
    /// already prints each event.
    package var logLevel: String?
    /// What `logLevel` may be: swift-log's levels, least first. Written out, so the configuration
    /// builds without swift-log (`make fuzz` compiles this file on its own);
    /// `HubConfigurationTests` keeps it equal to `Logger.Level.allCases`.
    package static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    package init() {}

    package struct PodSettings: Codable, Sendable, Equatable {
        /// A tty to use instead of udev discovery (e.g. the virtual pod's link path).
        package var path: String?
        /// Only this pod (USB serial); default the first pod found.
        package var serial: String?
        /// USB ids to match, hex (firmware-protocol.md §1).
        package var usbVendorID = "1209"
        package var usbProductID = "0001"
        /// Use the vendor bulk interface (libusb) rather than the tty when both exist.
        package var preferUSB = false
        /// Re-enumerate this often when no udev daemon sends hot-plug events.
        package var rescanSeconds: Double = 5
        /// Longest wait between reconnect attempts (the backoff doubles up to it).
        package var reconnectMaxSeconds: Double = 30
        package init() {}
    }

    package struct SessionSettings: Codable, Sendable, Equatable {
        /// An absence longer than this ends a session (shorter ones are bathroom trips).
        package var maxGapMinutes: Double = 20
        /// Sessions shorter than this are dropped.
        package var minSessionMinutes: Double = 15
        /// While someone is in bed, preliminary stages are stored this often (data time).
        package var preliminaryEveryMinutes: Double = 30
        /// A hole in the data (the pod's link down, the hub stopped, the pod unplugged) that a
        /// session is kept across; a longer one ends it, at its last data.
        /// (`SessionRules.defaultMaxDataGap`; a literal here, so the configuration fuzzer builds
        /// this file without the analysis module. `HubConfigurationTests` keeps them equal.)
        package var maxDataGapMinutes: Double = 180
        package init() {}
    }

    package struct ScheduleSettings: Codable, Sendable, Equatable {
        /// Push power schedules and alarms to the pod.
        package var enabled = true
        /// The pod's time zone when it differs from the hub's.
        package var podTimeZone: String?
        package var inference = ScheduleInferenceConfiguration()
        package var conversion = PodScheduleConfiguration()
        package var push = PushPolicyConfiguration()
        /// Smart wake per side (docs/smart-wake.md); `podbridge schedule set --window` and the
        /// API override it per pod side in the store.
        package var smartWake = SmartWakeSettings()
        /// Presence-driven power (docs/schedule.md §5): the bed follows the sleeper inside the
        /// pod's schedule.
        package var presencePower = PresencePowerConfiguration()
        package init() {}
    }

    /// Presence-driven power of both sides: off unless `enabled`; each side's rules and the
    /// safety limits (`PresencePowerSettings`, `PresencePowerRules`).
    package struct PresencePowerConfiguration: Codable, Sendable, Equatable {
        package var enabled = false
        package var left = PresencePowerSettings()
        package var right = PresencePowerSettings()
        package var rules = PresencePowerRules()
        package init() {}
        package subscript(side: BedSide) -> PresencePowerSettings { side == .right ? right : left }
    }

    /// Smart wake of both sides: off (a fixed alarm) unless a window is set.
    package struct SmartWakeSettings: Codable, Sendable, Equatable {
        package var left = SideWakeSettings()
        package var right = SideWakeSettings()
        package init() {}
        package subscript(side: String) -> SideWakeSettings { side == "right" ? right : left }
    }

    /// One side's smart wake.
    package struct SideWakeSettings: Codable, Sendable, Equatable {
        /// Minutes before the alarm (the latest wake time) in which the hub may wake the
        /// sleeper at a good moment; 0 = the fixed alarm. At most 120.
        package var windowMinutes = 0
        /// After the alarm stops, ring again while the side is still occupied.
        package var untilOutOfBed = false
        /// Minutes after the alarm stopped before it rings again (still in bed).
        package var repeatAfterMinutes: Double = 5
        /// Repeats at most.
        package var maxRepeats = 3
        package init() {}
    }

    package struct ExportSettings: Codable, Sendable, Equatable {
        /// Each finished night is written here; default `exports` beside the database
        /// (`<stateDirectory>/exports` unless `database` puts it elsewhere).
        package var directory: String?
        /// json, csv or blocks.
        package var format = "json"
        package init() {}
    }

    package struct UploadSettings: Codable, Sendable, Equatable {
        /// Sleep backend base URL; upload is off while this is unset.
        package var baseURL: String?
        package var token: String?
        package var pollSeconds: Double = 60
        package init() {}
    }

    package struct RetentionSettings: Codable, Sendable, Equatable {
        /// Per-epoch detail older than this is pruned; sessions and blocks are kept.
        package var epochDays = 90
        package init() {}
    }

    package struct APISettings: Codable, Sendable, Equatable {
        /// Serve the local API (REST, live streams, metrics, dashboard) inside `podbridge run`.
        package var enabled = true
        /// `host:port` to listen on; loopback unless a token is set (docs/api.md).
        package var listen = "127.0.0.1:8380"
        /// Bearer token every request but `/healthz` must carry. Required off loopback.
        package var token: String?
        /// A connection is closed when it has not sent a whole request head this long after it
        /// opened or after its last answer (live streams are not cut by it; docs/api.md).
        package var idleTimeoutSeconds: Double = 30
        /// Web pages on other origins (`scheme://host[:port]`) that may call the API from the
        /// browser (CORS): a Home Assistant card, a page of one's own. Needs `token`; no `*`.
        package var allowedOrigins: [String] = []
        package init() {}

        /// The token requests must carry, nil when none is set (an empty one is none).
        package var requiredToken: String? {
            guard let token, !token.isEmpty else { return nil }
            return token
        }

        /// `listen` parsed, and refused beyond this machine without a token. The configuration's
        /// check and the API service both ask this, so no path starts an open API.
        package func listenAddress() throws(ConfigurationError) -> ListenAddress {
            let address: ListenAddress
            do { address = try ListenAddress(parsing: listen) } catch {
                throw .badValue(key: "api.listen", reason: error.description)
            }
            if !address.isLoopback && requiredToken == nil {
                throw .badValue(key: "api.token", reason: "the API listens on \(listen), beyond this machine: "
                                + "set a token (api.token or PODBRIDGE_API_TOKEN) or listen on 127.0.0.1")
            }
            return address
        }

        /// The least length of a token that is not called weak: 16 random characters (64 bits
        /// as hex) are beyond guessing over a network; "1234" is not.
        package static let strongTokenLength = 16

        /// A warning for a token short enough to guess (said at start, not refused: a hub on
        /// loopback alone may keep a short one), nil otherwise.
        package var weakTokenWarning: String? {
            guard let token = requiredToken, token.count < Self.strongTokenLength else { return nil }
            // The command makes 32 hex characters (128 bits): twice the least, as one should pick.
            return "api.token is \(token.count) characters long, short enough to guess: use "
                + "\(Self.strongTokenLength) or more random ones (openssl rand -hex 16)"
        }

        /// `allowedOrigins` as browsers send them (`WebOrigin.description`), each checked, and
        /// none without a token. The configuration's check and the API service both ask this.
        package func allowedWebOrigins() throws(ConfigurationError) -> Set<String> {
            var origins: Set<String> = []
            for origin in allowedOrigins {
                do { origins.insert(try WebOrigin(parsing: origin).description) } catch {
                    throw .badValue(key: "api.allowedOrigins", reason: error.description)
                }
            }
            // Without a token the hub refuses other sites' requests (LoopbackOnlyMiddleware): a
            // page it let read its answers would read them with no token at all.
            if !origins.isEmpty && requiredToken == nil {
                throw .badValue(key: "api.allowedOrigins", reason: "pages on other origins may use only an API with a token: "
                                + "set a token (api.token or PODBRIDGE_API_TOKEN) or leave api.allowedOrigins empty")
            }
            return origins
        }
    }

    /// MQTT with Home Assistant discovery (docs/mqtt.md); off while `host` is unset.
    package struct MQTTSettings: Codable, Sendable, Equatable {
        /// The broker's host name or address; MQTT is off while this is unset.
        package var host: String?
        package var port = 1883
        package var username: String?
        package var password: String?
        /// A CA certificate file (PEM): when set, the broker is reached over TLS and must
        /// present a certificate that CA signed.
        package var tls: String?
        /// The client id the broker knows the hub by; default `podbridge-<host name>`, plus
        /// `-<base topic>` when `baseTopic` is not the default (`HubConfiguration.mqttClientID`).
        package var clientID: String?
        /// The root of every podbridge topic.
        package var baseTopic = "podbridge"
        /// Home Assistant's discovery prefix.
        package var discoveryPrefix = "homeassistant"
        /// How often live vitals are published per side (presence changes go out at once).
        package var publishEverySeconds: Double = 10
        package init() {}
    }

    /// The HomeKit accessory bridge (docs/homekit.md); off unless `enabled`.
    package struct HomeKitSettings: Codable, Sendable, Equatable {
        package var enabled = false
        /// The TCP port HAP listens on (all addresses); 0 picks a free one.
        package var port = 51826
        /// The bridge's name in Apple Home and in the DNS-SD advertisement.
        package var name = "podbridge"
        /// Advertise `_hap._tcp` through Avahi (off only for tests that connect directly).
        package var advertise = true
        package init() {}
    }

    // MARK: Derived values

    package var databasePath: String { database ?? (stateDirectory as NSString).appendingPathComponent("podbridge.sqlite") }
    package var exportDirectory: String {
        export.directory ?? ((databasePath as NSString).deletingLastPathComponent as NSString).appendingPathComponent("exports")
    }
    package var hubTimeZone: TimeZone { timeZone.flatMap(TimeZone.init(identifier:)) ?? .current }
    package var podTimeZone: TimeZone { schedule.podTimeZone.flatMap(TimeZone.init(identifier:)) ?? hubTimeZone }
}

// MARK: Loading

package enum ConfigurationError: Error, CustomStringConvertible, Equatable {
    case unreadable(path: String, reason: String)
    case invalid(path: String, reason: String)
    case unknownKey(path: String, key: String)
    case badValue(key: String, reason: String)

    package var description: String {
        switch self {
        case .unreadable(let p, let r): "cannot read configuration \(p): \(r)"
        case .invalid(let p, let r): "configuration \(p): \(r)"
        case .unknownKey(let p, let k): "configuration \(p): unknown key '\(k)' (see docs/configuration.md)"
        case .badValue(let k, let r): "configuration: \(k): \(r)"
        }
    }
}

extension HubConfiguration {
    /// Keys whose default is absent (nil), so they do not appear in the encoded defaults.
    static let optionalKeys: Set<String> = [
        "database", "timeZone", "logLevel", "pod.path", "pod.serial", "schedule.podTimeZone", "export.directory",
        "upload.baseURL", "upload.token", "api.token",
        "mqtt.host", "mqtt.username", "mqtt.password", "mqtt.tls", "mqtt.clientID",
    ]

    /// Reads `path` over the defaults: a key left out keeps its default; an unknown key is an
    /// error (a typo must not silently do nothing).
    /// `validating: false` leaves the checks of values to the caller, for settings the
    /// environment may still complete (a token, a user name).
    package static func load(path: String, validating: Bool = true) throws(ConfigurationError) -> HubConfiguration {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .unreadable(path: path, reason: "it is a directory, not a JSON file")
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .unreadable(path: path, reason: (error as NSError).code == NSFileReadNoSuchFileError
                              ? "no such file" : error.localizedDescription)
        }
        return try decode(data, path: path, validating: validating)
    }

    static func decode(_ data: Data, path: String, validating: Bool = true) throws(ConfigurationError) -> HubConfiguration {
        do {
            let defaults = try JSONSerialization.jsonObject(with: JSONEncoder().encode(HubConfiguration())) as! [String: Any]
            guard let user = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ConfigurationError.invalid(path: path, reason: "the top level must be an object")
            }
            let merged = try merge(defaults, user, prefix: "", path: path)
            let config: HubConfiguration
            do {
                config = try JSONDecoder().decode(HubConfiguration.self, from: JSONSerialization.data(withJSONObject: merged))
            } catch let error as DecodingError {
                // A fraction for a whole number fails with no key ("not valid JSON"): find it.
                if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
                   let (key, value) = Self.fractionForWholeNumber(in: merged) {
                    throw ConfigurationError.invalid(path: path, reason: "\(key): expected a whole number, got \(value)")
                }
                throw error
            }
            if validating { try config.validate() }
            return config
        } catch let error as ConfigurationError {
            throw error
        } catch let error as DecodingError {
            throw .invalid(path: path, reason: reason(error))
        } catch {
            // JSONSerialization's own words ("Invalid value around character 24."), placed at a
            // line and column, not "The data is not in the correct format." with a domain and code.
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            throw .invalid(path: path, reason: "not valid JSON: " + (detail.map { located($0, in: data) } ?? error.localizedDescription))
        }
    }

    /// Foundation places a syntax error at a byte offset ("around character 212"); a person
    /// editing the file looks for a line and column.
    static func located(_ detail: String, in data: Data) -> String {
        // No regex literal: the fuzz build compiles this file with plain swiftc (Makefile, `fuzz`).
        guard let marker = detail.range(of: "character "),
              let offset = Int(detail[marker.upperBound...].prefix { $0.isASCII && $0.isNumber }), offset <= data.count
        else { return detail }
        let before = data.prefix(offset)
        let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
        let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
        let sentence = detail.hasSuffix(".") ? String(detail.dropLast()) : detail
        return "\(sentence) (line \(line), column \(column))"
    }

    /// A value of the wrong kind, said with the key it sits under.
    static func reason(_ error: DecodingError) -> String {
        func key(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case let .typeMismatch(type, context), let .valueNotFound(type, context):
            return "\(key(context)): expected \(kind(type))"
        case let .keyNotFound(missing, context):
            return "\(key(context)): '\(missing.stringValue)' is missing"
        case let .dataCorrupted(context):
            return "\(key(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is Bool.Type: "true or false"
        case is Int.Type: "a whole number"
        case is UInt8.Type: "a whole number 0–255"
        case is Double.Type: "a number"
        case is String.Type, is String?.Type: "a string"
        case is [String: Any].Type: "an object"
        default: String(describing: type).hasPrefix("Array") ? "a list" : "a \(type)"
        }
    }

    /// The key of a fractional number that decodes only once made whole (the field is an
    /// integer), with the number; nil when no fraction is to blame.
    private static func fractionForWholeNumber(in merged: [String: Any]) -> (String, Any)? {
        func fractions(_ value: Any, _ path: [String]) -> [[String]] {
            if let d = value as? [String: Any] { return d.keys.sorted().flatMap { fractions(d[$0]!, path + [$0]) } }
            if let n = value as? NSNumber, n.doubleValue.isFinite, n.doubleValue != n.doubleValue.rounded() { return [path] }
            return []
        }
        func replacing(_ d: [String: Any], _ path: ArraySlice<String>) -> [String: Any] {
            var d = d
            guard let first = path.first else { return d }
            if path.count == 1, let n = d[first] as? NSNumber { d[first] = n.doubleValue.rounded(.down) }
            else if let inner = d[first] as? [String: Any] { d[first] = replacing(inner, path.dropFirst()) }
            return d
        }
        func value(_ d: [String: Any], _ path: [String]) -> Any? {
            path.dropLast().reduce(d as Any?) { ($0 as? [String: Any])?[$1] }.flatMap { ($0 as? [String: Any])?[path.last!] }
        }
        for path in fractions(merged, []) {
            let whole = replacing(merged, path[...])
            guard let data = try? JSONSerialization.data(withJSONObject: whole) else { continue }
            do { _ = try JSONDecoder().decode(HubConfiguration.self, from: data) } catch let DecodingError.dataCorrupted(c)
                where c.codingPath.isEmpty { continue } catch {}
            return (path.joined(separator: "."), value(merged, path) ?? "?")
        }
        return nil
    }

    private static func merge(_ base: [String: Any], _ over: [String: Any], prefix: String,
                              path: String) throws -> [String: Any] {
        var result = base
        for (key, value) in over {
            let full = prefix.isEmpty ? key : prefix + "." + key
            guard let existing = base[key] else {
                guard optionalKeys.contains(full) else { throw ConfigurationError.unknownKey(path: path, key: full) }
                result[key] = value
                continue
            }
            if let b = existing as? [String: Any], let o = value as? [String: Any] {
                result[key] = try merge(b, o, prefix: full, path: path)
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// A variable that overrides a setting: its name, the key it sets, and how (refusing a
    /// value that is not of the setting's kind).
    struct Variable: Sendable {
        let name: String, key: String
        let set: @Sendable (inout HubConfiguration, String) throws(ConfigurationError) -> Void
    }

    /// The variables that override the file, in the order they apply (the upload token from
    /// `PODBRIDGE_UPLOAD_TOKEN`, else `PODBRIDGE_BACKEND_TOKEN`).
    static let variables: [Variable] = [
        .init(name: "PODBRIDGE_STATE_DIRECTORY", key: "stateDirectory") { $0.stateDirectory = $1 },
        .init(name: "PODBRIDGE_DATABASE", key: "database") { $0.database = $1 },
        .init(name: "PODBRIDGE_TIME_ZONE", key: "timeZone") { $0.timeZone = $1 },
        .init(name: "PODBRIDGE_LOG_LEVEL", key: "logLevel") { $0.logLevel = $1 },
        .init(name: "PODBRIDGE_POD_PATH", key: "pod.path") { $0.pod.path = $1 },
        .init(name: "PODBRIDGE_POD_SERIAL", key: "pod.serial") { $0.pod.serial = $1 },
        .init(name: "PODBRIDGE_UPLOAD_URL", key: "upload.baseURL") { $0.upload.baseURL = $1 },
        .init(name: "PODBRIDGE_BACKEND_TOKEN", key: "upload.token") { $0.upload.token = $1 },
        .init(name: "PODBRIDGE_UPLOAD_TOKEN", key: "upload.token") { $0.upload.token = $1 },
        .init(name: "PODBRIDGE_API_LISTEN", key: "api.listen") { $0.api.listen = $1 },
        .init(name: "PODBRIDGE_API_TOKEN", key: "api.token") { $0.api.token = $1 },
        .init(name: "PODBRIDGE_API_ALLOWED_ORIGINS", key: "api.allowedOrigins") {
            $0.api.allowedOrigins = $1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        },
        .init(name: "PODBRIDGE_MQTT_HOST", key: "mqtt.host") { $0.mqtt.host = $1 },
        .init(name: "PODBRIDGE_MQTT_PORT", key: "mqtt.port") { (config, value) throws(ConfigurationError) in
            guard let port = Int(value) else { throw .badValue(key: "mqtt.port (from $PODBRIDGE_MQTT_PORT)", reason: "not a number: '\(value)'") }
            config.mqtt.port = port
        },
        .init(name: "PODBRIDGE_MQTT_USERNAME", key: "mqtt.username") { $0.mqtt.username = $1 },
        .init(name: "PODBRIDGE_MQTT_PASSWORD", key: "mqtt.password") { $0.mqtt.password = $1 },
        .init(name: "PODBRIDGE_MQTT_TLS", key: "mqtt.tls") { $0.mqtt.tls = $1 },
        .init(name: "PODBRIDGE_MQTT_CLIENT_ID", key: "mqtt.clientID") { $0.mqtt.clientID = $1 },
        .init(name: "PODBRIDGE_MQTT_BASE_TOPIC", key: "mqtt.baseTopic") { $0.mqtt.baseTopic = $1 },
        .init(name: "PODBRIDGE_MQTT_DISCOVERY_PREFIX", key: "mqtt.discoveryPrefix") { $0.mqtt.discoveryPrefix = $1 },
        .init(name: "PODBRIDGE_MQTT_PUBLISH_EVERY_SECONDS", key: "mqtt.publishEverySeconds") { (config, value) throws(ConfigurationError) in
            guard let seconds = Double(value) else {
                throw .badValue(key: "mqtt.publishEverySeconds (from $PODBRIDGE_MQTT_PUBLISH_EVERY_SECONDS)", reason: "not a number: '\(value)'")
            }
            config.mqtt.publishEverySeconds = seconds
        },
    ]

    /// `variables` override the file. A value a variable made invalid is reported under the
    /// variable's name beside the key: a user who never wrote `timeZone` in a file looks for
    /// PODBRIDGE_TIME_ZONE.
    /// `options` (a command line's) are applied after the variables and before the check, so an
    /// option stands in for a variable's bad value as it overrides a good one.
    package mutating func applyEnvironment(_ env: [String: String],
                                           options: (inout HubConfiguration) -> Void = { _ in }) throws(ConfigurationError) {
        var setBy: [String: String] = [:]
        for variable in Self.variables {
            guard let value = env[variable.name], !value.isEmpty else { continue }
            try variable.set(&self, value)
            setBy[variable.key] = variable.name
        }
        options(&self)
        do {
            try validate()
        } catch let .badValue(key, reason) where setBy[key] != nil {
            throw .badValue(key: "\(key) (from $\(setBy[key]!))", reason: reason)
        }
    }

    package func validate() throws(ConfigurationError) {
        if let tz = timeZone, TimeZone(identifier: tz) == nil { throw .badValue(key: "timeZone", reason: "unknown zone '\(tz)'") }
        if let logLevel, !Self.logLevels.contains(logLevel) {
            throw .badValue(key: "logLevel", reason: "expected one of \(Self.logLevels.joined(separator: ", ")), got '\(logLevel)'")
        }
        if let tz = schedule.podTimeZone, TimeZone(identifier: tz) == nil {
            throw .badValue(key: "schedule.podTimeZone", reason: "unknown zone '\(tz)'")
        }
        for (key, hex) in [("pod.usbVendorID", pod.usbVendorID), ("pod.usbProductID", pod.usbProductID)] {
            guard hex.count == 4, UInt16(hex, radix: 16) != nil else {
                throw .badValue(key: key, reason: "expected 4 hex digits, got '\(hex)'")
            }
        }
        for (key, minutes, zeroAllowed) in [("maxGapMinutes", sessions.maxGapMinutes, false),
                                            ("minSessionMinutes", sessions.minSessionMinutes, true),
                                            ("preliminaryEveryMinutes", sessions.preliminaryEveryMinutes, false),
                                            ("maxDataGapMinutes", sessions.maxDataGapMinutes, false)] {
            guard minutes.isFinite, zeroAllowed ? minutes >= 0 : minutes > 0 else {
                throw .badValue(key: "sessions." + key, reason: "minutes, \(zeroAllowed ? "≥ 0" : "> 0"), got \(minutes)")
            }
        }
        guard ["json", "csv", "blocks"].contains(export.format) else {
            throw .badValue(key: "export.format", reason: "expected json, csv or blocks, got '\(export.format)'")
        }
        // Bounded: each becomes a sleep of whole nanoseconds, and 0 would spin.
        for (key, seconds, least) in [("pod.rescanSeconds", pod.rescanSeconds, 0.1),
                                      ("pod.reconnectMaxSeconds", pod.reconnectMaxSeconds, 0.1),
                                      ("upload.pollSeconds", upload.pollSeconds, 1),
                                      ("api.idleTimeoutSeconds", api.idleTimeoutSeconds, 0.1)] {
            guard seconds.isFinite, seconds >= least, seconds <= 86_400 else {
                throw .badValue(key: key, reason: "\(least == 1 ? "1" : "0.1") … 86400 seconds, got \(seconds)")
            }
        }
        guard retention.epochDays >= 1 else { throw .badValue(key: "retention.epochDays", reason: "must be ≥ 1") }
        if let base = upload.baseURL {
            let url = URL(string: base.hasSuffix("/") ? String(base.dropLast()) : base)
            guard let url, ["http", "https"].contains(url.scheme?.lowercased() ?? ""), !(url.host ?? "").isEmpty else {
                throw .badValue(key: "upload.baseURL", reason: "must be http(s)://host[:port][/path], got '\(base)'")
            }
        }
        if api.enabled {
            _ = try api.listenAddress()
            _ = try api.allowedWebOrigins()
        }
        try validateMQTT()
        guard progressSeconds > 0 else { throw .badValue(key: "progressSeconds", reason: "must be > 0") }
        for (name, wake) in [("left", schedule.smartWake.left), ("right", schedule.smartWake.right)] {
            let key = "schedule.smartWake.\(name)"
            guard (0...120).contains(wake.windowMinutes) else {
                throw .badValue(key: key + ".windowMinutes", reason: "0 (off) … 120 minutes, got \(wake.windowMinutes)")
            }
            guard wake.repeatAfterMinutes.isFinite, (0.5...60).contains(wake.repeatAfterMinutes) else {
                throw .badValue(key: key + ".repeatAfterMinutes", reason: "0.5 … 60 minutes, got \(wake.repeatAfterMinutes)")
            }
            guard (0...10).contains(wake.maxRepeats) else {
                throw .badValue(key: key + ".maxRepeats", reason: "0 … 10, got \(wake.maxRepeats)")
            }
        }
        do { try schedule.inference.validate() } catch {
            throw .badValue(key: "schedule.inference", reason: Self.reason(error))
        }
        for (name, side) in [("left", schedule.presencePower.left), ("right", schedule.presencePower.right)] {
            do { try side.validate() } catch {
                throw .badValue(key: "schedule.presencePower.\(name)", reason: Self.reason(error))
            }
        }
        do { try schedule.presencePower.rules.validate() } catch {
            throw .badValue(key: "schedule.presencePower.rules", reason: Self.reason(error))
        }
        // Checked here, not only when a schedule is converted: every command refuses it.
        do { try schedule.conversion.validate() } catch {
            throw .badValue(key: "schedule.conversion", reason: Self.reason(error))
        }
    }

    /// A schedule error's words without its "invalid schedule configuration: " lead (the
    /// configuration error says that already, with the file and key).
    private static func reason(_ error: ScheduleError) -> String {
        if case .invalidConfiguration(let message) = error { return message }
        return error.description
    }
}

// MARK: MQTT settings

extension HubConfiguration {
    func validateMQTT() throws(ConfigurationError) {
        guard (0...65535).contains(homekit.port) else { throw .badValue(key: "homekit.port", reason: "must be 0–65535, got \(homekit.port)") }
        guard !homekit.name.isEmpty, homekit.name.utf8.count <= 63 else {
            throw .badValue(key: "homekit.name", reason: "must be 1–63 bytes long")
        }
        guard (1...65535).contains(mqtt.port) else { throw .badValue(key: "mqtt.port", reason: "must be 1–65535, got \(mqtt.port)") }
        guard mqtt.publishEverySeconds > 0, mqtt.publishEverySeconds <= 86_400 else {
            throw .badValue(key: "mqtt.publishEverySeconds", reason: "must be > 0 and at most a day")
        }
        for (key, topic) in [("mqtt.baseTopic", mqtt.baseTopic), ("mqtt.discoveryPrefix", mqtt.discoveryPrefix)] {
            guard !topic.isEmpty, !topic.contains("+"), !topic.contains("#"), !topic.hasPrefix("/"), !topic.hasSuffix("/"),
                  !topic.contains("//"), !topic.unicodeScalars.contains(where: { $0.value == 0 }) else {
                throw .badValue(key: key, reason: "must be a topic without wildcards, empty levels or leading/trailing '/', got '\(topic)'")
            }
        }
        if let host = mqtt.host, host.isEmpty || host.contains(where: \.isWhitespace) {
            throw .badValue(key: "mqtt.host", reason: "must be a host name or address, got '\(host)'")
        }
        if let id = mqtt.clientID, id.isEmpty || id.utf8.count > 65535 {
            throw .badValue(key: "mqtt.clientID", reason: "must not be empty")
        }
        if mqtt.password != nil && mqtt.username == nil {
            throw .badValue(key: "mqtt.password", reason: "a password needs mqtt.username")
        }
        if let ca = mqtt.tls, !FileManager.default.isReadableFile(atPath: ca) {
            throw .badValue(key: "mqtt.tls", reason: "cannot read the CA file '\(ca)'")
        }
    }

    /// The MQTT client id: the configured one, else `podbridge-<host name>`, followed by
    /// `-<base topic>` when the base topic is not the default one. A broker closes the older
    /// of two connections with one id, so two hubs on one machine (a two-bed box) with the
    /// host name alone took the broker from each other every second; set up as docs/mqtt.md
    /// says, with a base topic each, they now differ. Characters other than letters, digits,
    /// `-` and `_` become `-` (`home/bed` gives `podbridge-box-home-bed`).
    package var mqttClientID: String {
        if let id = mqtt.clientID { return id }
        let host = "podbridge-" + ProcessInfo.processInfo.hostName.prefix { $0 != "." }
        guard mqtt.baseTopic != MQTTSettings().baseTopic else { return Self.brokerSafeClientID(host) }
        let base = mqtt.baseTopic.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "-" }
        return Self.brokerSafeClientID(host + "-" + String(base))
    }

    /// MQTT 3.1.1 obliges a broker to accept client ids of 1–23 characters only, so a longer
    /// default is cut to 16 and ended with 6 hex digits of its FNV-1a hash: two defaults that
    /// differ past the cut (two base topics on one host) still differ, and an id stays the same
    /// across restarts.
    static func brokerSafeClientID(_ id: String) -> String {
        guard id.utf8.count > 23 else { return id }
        var hash: UInt32 = 0x811C_9DC5
        for byte in id.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        let digits = String(hash & 0xFF_FFFF, radix: 16)
        return String(id.utf8.prefix(16))! + "-" + String(repeating: "0", count: 6 - digits.count) + digits
    }
}

// MARK: One resolution for every command

extension HubConfiguration {
    /// Where the configuration file is looked for when none is given.
    package static let systemPath = "/etc/podbridge/config.json"

    /// The configuration every command uses (`run`, `export`, `sync`, `schedule`,
    /// `analyze`, and the API): the defaults, then the file (`file`, else `PODBRIDGE_CONFIG`,
    /// else `systemPath` if it exists), then the `PODBRIDGE_*` environment, then validated as
    /// a whole (a token or user name may come from the environment, the rest from the file).
    /// A command's own options come in `options`, applied last and checked with the rest.
    package static func resolve(file: String?, environment: [String: String],
                               systemPath: String = HubConfiguration.systemPath,
                               options: (inout HubConfiguration) -> Void = { _ in }) throws(ConfigurationError) -> HubConfiguration {
        var settings: HubConfiguration
        if let path = file ?? environment["PODBRIDGE_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) {
            settings = try load(path: path, validating: false)
        } else if FileManager.default.fileExists(atPath: systemPath) {
            settings = try load(path: systemPath, validating: false)
        } else {
            settings = HubConfiguration()
        }
        try settings.applyEnvironment(environment, options: options)
        try settings.validate()
        return settings
    }
}
