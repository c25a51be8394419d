import Foundation
import Hub
import HubMQTT
import Logging
import SleepDomain
import SleepSchedule
import SleepStore

/// What MQTT does with the hub: publishes its state (from the bus's `HubState`, its events
/// and the store) to the topics of `MQTTTopics`, announces the pods to Home Assistant, and
/// carries out validated commands through the hub's one `HubControl`.
///
/// Everything retained is published again on every (re)connection to the broker, and the
/// discovery configs also when Home Assistant announces itself (`online` on `<prefix>/status`
/// or `homeassistant/status`). Otherwise a retained topic is published only when its payload
/// changes (the broker keeps the last one): one publish per change, however many events
/// lead to it. Runs on this actor, fed in order by `MQTTService`.
package actor MQTTBridge {
    let client: MQTTClient
    let topics: MQTTTopics
    let configuration: HubConfiguration
    let bus: HubBus
    let control: HubControl
    let store: NightStore
    let reporter: HubReporter
    let discovery: HomeAssistantDiscovery
    /// The hub's clock (simulated in tests and demos): what "the next alarm" is counted from.
    let clock: HubClock
    /// Whether the configuration has weekend nights (`schedule.inference.weekendWakeDays`).
    let separateWeekend: Bool

    private var connected = false
    /// Each retained topic's payload as last published on this connection: a repeat is not
    /// published again (Home Assistant and the broker already hold it).
    private var retainedPayloads: [String: [UInt8]] = [:]
    /// Each side state as last published, without its `time`: the vitals timer publishes a
    /// side only when something but the second it was read in changed.
    private var publishedSideStates: [SideKey: JSONValue] = [:]
    /// Per pod and side: whether the alarm rings now (ALARM_STARTED until snoozed, stopped or failed).
    private var ringing: [SideKey: Bool] = [:]
    /// Per pod and side: what the retained schedule is made of, read from the store, so the
    /// next alarm can be worked out again as time passes without reading the store again.
    private var scheduleFacts: [SideKey: ScheduleFacts] = [:]
    /// Per pod and side: the newest store read of the schedule started, and the newest one
    /// published. Reads can overlap (a command and a push's notice): an older one finishing
    /// later must not publish its older schedule over the newer.
    private var scheduleReadsStarted: [SideKey: Int] = [:]
    private var scheduleReadPublished: [SideKey: Int] = [:]
    /// Failures since the last accepted connection (the first is a warning, repeats are quieter).
    private var failuresInARow = 0
    private var lastFailure: String?
    /// Per pod and side: when the sleeper got into bed (data time).
    private var inBedSince: [SideKey: Date] = [:]
    /// Per pod and side: the presence last published, so a change goes out at once.
    private var publishedPresent: [SideKey: Bool] = [:]
    private var lastNights: [SideKey: JSONValue] = [:]
    /// The newest wake event per side, published again (retained) on every (re)connect.
    private var lastWakes: [SideKey: WakeNotice] = [:]
    /// Pods the store knows (by serial), refreshed on every connection and pod connect: the
    /// pods this hub has served, the only ones whose retained topics it may empty or update.
    private var storedPods: [String: PodRecord] = [:]
    /// Pods (topic levels) another hub publishes under this base topic, each warned about once.
    private var foreignPods: Set<String> = []
    /// When the connection in force was accepted, and how many in a row the broker closed
    /// soon after accepting them (another client with our id takes it over at each connect).
    private var connectedAt: ContinuousClock.Instant?
    private var shortConnectionsInARow = 0
    private var clientIDClashWarned = false
    /// Messages published since start (what the demo and the tests count).
    package private(set) var publishedCount = 0

    struct SideKey: Hashable {
        var serial: String
        var side: BedSide
    }

    /// The stored facts of one side's retained schedule.
    struct ScheduleFacts {
        var inForce: PodScheduleState?
        var alarms: [AlarmEntry]
        var zone: TimeZone
        var weekday: SleepTimes?
        var weekend: SleepTimes?
        var alarmEnabled: Bool
        var wakeWindowMinutes: Int
    }

    init(client: MQTTClient, topics: MQTTTopics, configuration: HubConfiguration, bus: HubBus, control: HubControl,
         store: NightStore, reporter: HubReporter, dashboardURL: String?, clock: HubClock = HubClock()) {
        self.client = client
        self.topics = topics
        self.configuration = configuration
        self.bus = bus
        self.control = control
        self.store = store
        self.reporter = reporter
        self.clock = clock
        separateWeekend = !configuration.schedule.inference.weekendWakeDays.isEmpty
        discovery = HomeAssistantDiscovery(topics: topics, configurationURL: dashboardURL, softwareVersion: HubVersion.current,
                                           separateWeekend: separateWeekend)
    }

    static func availabilityMessage(_ topics: MQTTTopics, online: Bool) -> MQTTMessage {
        MQTTMessage(topic: topics.availability, text: online ? "online" : "offline", qos: .atLeastOnce, retain: true)
    }

    func announceStart() {
        let mqtt = configuration.mqtt
        reporter.event("MQTT: connecting to \(mqtt.tls == nil ? "mqtt" : "mqtts")://\(mqtt.host ?? "?"):\(mqtt.port) as "
                       + "\(configuration.mqttClientID)\(mqtt.username.map { " (user \($0))" } ?? ""), topics under "
                       + "\(topics.base)/, Home Assistant discovery under \(topics.discoveryPrefix)/")
    }

    // MARK: The broker connection

    func handle(_ event: MQTTClientEvent) async {
        switch event {
        case .connected:
            connected = true
            connectedAt = .now
            // A broker without persistence may have lost everything: all of it goes out again.
            retainedPayloads = [:]
            publishedSideStates = [:]
            failuresInARow = 0
            lastFailure = nil
            if clientIDClashWarned {
                reporter.logger.debug("MQTT: connected to \(configuration.mqtt.host ?? "?"):\(configuration.mqtt.port) again")
            } else {
                reporter.event("MQTT: connected to \(configuration.mqtt.host ?? "?"):\(configuration.mqtt.port)")
            }
            publish(Self.availabilityMessage(topics, online: true))
            for filter in topics.commandFilters { subscribe(filter) }
            for topic in topics.homeAssistantStatus { subscribe(topic) }
            subscribe(topics.discoveryFilter)
            subscribe(topics.podAvailabilityFilter)
            await refreshStoredPods()
            publishDiscovery()
            await publishAllStates()
        case .refused(let reason):
            failure("MQTT: the broker \(configuration.mqtt.host ?? "?"):\(configuration.mqtt.port) refused the connection: "
                    + "\(reason) (check mqtt.username and mqtt.password); retrying")
        case .connectFailed(let reason):
            failure("MQTT: \(reason); retrying")
        case .disconnected(_, requested: true):
            connected = false
            connectedAt = nil
        case .disconnected(let reason, requested: false):
            connected = false
            connectionLost(reason: reason)
        case .retrying(let delay):
            reporter.logger.debug("MQTT: next connection attempt in \(delay)")
        case .message(let message):
            await received(message)
        }
    }

    /// A failure is logged as a warning the first time and whenever its reason changes;
    /// repeats of the same one go to the debug log (the client keeps retrying with backoff).
    private func failure(_ text: String) {
        failuresInARow += 1
        if text != lastFailure {
            reporter.warning(text)
        } else {
            reporter.logger.debug("\(text) (\(failuresInARow) times)")
        }
        lastFailure = text
    }

    /// A connection the broker closed. Closed again and again within moments of being accepted,
    /// it is most likely taken over by another client with the same client id (mosquitto closes
    /// the older of two; both reconnect, every second): said once, with the id, instead of a
    /// "lost" warning every second that never named the cause.
    private func connectionLost(reason: String) {
        let lasted = connectedAt.map { ContinuousClock.now - $0 }
        connectedAt = nil
        if let lasted, lasted < Self.shortConnection {
            shortConnectionsInARow += 1
        } else {
            shortConnectionsInARow = 0
            clientIDClashWarned = false
        }
        guard shortConnectionsInARow >= Self.shortConnectionsToSuspectClash else {
            reporter.warning("MQTT: connection to the broker lost (\(reason)); reconnecting")
            return
        }
        guard !clientIDClashWarned else {
            reporter.logger.debug("MQTT: connection to the broker lost (\(reason)) \(shortConnectionsInARow) times in a row; reconnecting")
            return
        }
        clientIDClashWarned = true
        reporter.warning("MQTT: the broker closed the connection \(shortConnectionsInARow) times in a row right after accepting it "
                         + "(\(reason)): another client may be using the same client id '\(configuration.mqttClientID)' "
                         + "(a second hub? give each hub its own mqtt.baseTopic, or its own mqtt.clientID; docs/mqtt.md); "
                         + "reconnecting")
    }

    /// A connection closed sooner than this after it was accepted counts towards a client-id clash.
    static let shortConnection: Duration = .seconds(10)
    /// How many such connections in a row make the clash the likely cause.
    static let shortConnectionsToSuspectClash = 3

    /// Before a clean disconnect: the hub says it is going away (the will is only for crashes).
    func goingOffline() {
        guard connected else { return }
        for (serial, pod) in bus.state.pods {
            publish(MQTTMessage(topic: topics.podAvailability(serial), text: "offline", qos: .atLeastOnce, retain: true))
            // The retained link state would otherwise say connected for as long as the hub is gone.
            // Published for every pod, also one the bus already shows disconnected: on shutdown
            // the link can close before the bridge has published that (CI saw it once).
            var gone = pod
            if pod.connected { gone.lastDisconnectReason = "the hub stopped" }
            gone.connected = false
            publish(MQTTMessage(topic: topics.link(serial), payload: MQTTPayloads.link(gone).encoded, qos: .atLeastOnce, retain: true))
        }
        publish(Self.availabilityMessage(topics, online: false))
    }

    // MARK: Discovery

    private func refreshStoredPods() async {
        guard let records = try? await store.pods() else { return }
        storedPods = Dictionary(records.map { ($0.serial, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The pods announced to Home Assistant: the configured one (`pod.serial`), else every pod
    /// this hub has seen (store) or sees now (bus). The configs of any other pod this hub has
    /// served are removed (`discoveryConfigSeen`).
    private func podsToAnnounce() -> [HomeAssistantDiscovery.Pod] {
        var pods: [String: HomeAssistantDiscovery.Pod] = [:]
        for (serial, record) in storedPods { pods[serial] = .init(serial: serial, firmware: record.firmware, sides: 2) }
        for (serial, state) in bus.state.pods {
            pods[serial] = .init(serial: serial, firmware: state.pod.firmware, sides: state.pod.sides)
        }
        if let only = configuration.pod.serial { pods = pods.filter { $0.key == only } }
        return pods.values.sorted { $0.serial < $1.serial }
    }

    /// `force`: published even when unchanged (Home Assistant restarted and asks for them).
    private func publishDiscovery(force: Bool = false) {
        for pod in podsToAnnounce() {
            for message in discovery.messages(for: pod) { publish(message, force: force) }
        }
    }

    private func announce(_ serial: String) {
        guard let pod = podsToAnnounce().first(where: { $0.serial == serial }) else { return }
        for message in discovery.messages(for: pod) { publish(message) }
    }

    /// The topic levels of every pod this hub has served: its store's, and any on the bus now.
    private func knownPodLevels() -> Set<String> {
        Set(storedPods.keys.map(MQTTTopics.topicLevel)).union(bus.state.pods.keys.map(MQTTTopics.topicLevel))
    }

    /// A retained config under the discovery prefix, announced under this base topic (its
    /// availability names our `status`), for a pod not announced now: emptied when this hub has
    /// served that pod (one removed from the configuration). A pod it has never served is
    /// another hub's on the same base topic, and is left alone: removing it made two such hubs
    /// delete each other's devices for good. A hub on another base topic is not ours to judge.
    private func discoveryConfigSeen(_ message: MQTTMessage) {
        guard !message.payload.isEmpty, let level = topics.serialInDiscoveryTopic(message.topic),
              HomeAssistantDiscovery.isAnnounced(by: topics, config: message.payload) else { return }
        let served = podsToAnnounce().map { MQTTTopics.topicLevel($0.serial) }
        guard !served.contains(level) else { return }
        guard knownPodLevels().contains(level) else {
            foreignPodSeen(level)
            return
        }
        reporter.event("MQTT: removing Home Assistant entity \(message.topic) (pod \(level) is no longer served)")
        publish(HomeAssistantDiscovery.removal(topic: message.topic))
    }

    /// A pod's availability under this base topic: one this hub has never served is another hub's.
    private func podAvailabilitySeen(level: String, _ message: MQTTMessage) {
        guard !message.payload.isEmpty, !knownPodLevels().contains(level) else { return }
        foreignPodSeen(level)
    }

    /// Two hubs on one base topic share `<base>/status` (each one's `offline` marks the other's
    /// entities unavailable) and `<base>/error`: said once per pod, with what to do.
    private func foreignPodSeen(_ level: String) {
        guard foreignPods.insert(level).inserted else { return }
        reporter.warning("MQTT: another hub publishes pod \(level) under base topic '\(topics.base)' on this broker "
                         + "(this hub has never served it, so leaves its entities alone): give each hub its own "
                         + "mqtt.baseTopic (docs/mqtt.md); until then the two share \(topics.availability) and \(topics.commandErrors)")
    }

    // MARK: States

    /// Every retained state, from what the hub knows now and what the store holds.
    private func publishAllStates() async {
        let state = bus.state
        for pod in podsToAnnounce() {
            let serial = pod.serial
            if let podState = state.pods[serial] {
                publishLink(podState)
            } else {
                publish(MQTTMessage(topic: topics.podAvailability(serial), text: "offline", qos: .atLeastOnce, retain: true))
                // The retained link may still say connected (a hub killed with the pod plugged
                // in), or be gone (a broker restarted without persistence): Home Assistant's
                // Link sensor reads it alone.
                if let record = storedPods[serial] {
                    publish(MQTTMessage(topic: topics.link(serial), payload: MQTTPayloads.link(notConnected: record).encoded,
                                        qos: .atLeastOnce, retain: true))
                }
            }
            for side in sides(pod.sides) {
                publishSideState(serial: serial, side: side, state: state)
                await publishSchedule(serial: serial, side: side)
                await publishPresencePowerState(serial: serial, side: side)
                await publishLastNight(serial: serial, side: side)
                if let wake = lastWakes[SideKey(serial: serial, side: side)] { publishWake(wake) }
            }
        }
    }

    /// The live vitals of every connected pod side, and the next alarm of every side as time
    /// passes (the `publishEverySeconds` timer); each only when it changed.
    func publishVitals() {
        guard connected else { return }
        let state = bus.state
        for (serial, pod) in state.pods where pod.connected {
            for side in sides(pod.pod.sides) { publishSideState(serial: serial, side: side, state: state) }
        }
        for key in scheduleFacts.keys { publishScheduleFacts(key) }
    }

    private func publishWake(_ notice: WakeNotice) {
        publish(MQTTMessage(topic: topics.wake(notice.serial, notice.side.rawValue), payload: MQTTPayloads.wake(notice).encoded,
                            qos: .atLeastOnce, retain: true))
    }

    private func publishPresencePower(_ notice: PresencePowerNotice) {
        publish(MQTTMessage(topic: topics.presencePower(notice.serial, notice.side.rawValue),
                            payload: MQTTPayloads.presencePower(notice).encoded, qos: .atLeastOnce, retain: true))
    }

    private func publishPresencePowerState(serial: String, side: BedSide, _ inForce: PresencePowerInForce) {
        publish(MQTTMessage(topic: topics.presencePowerState(serial, side.rawValue),
                            payload: MQTTPayloads.presencePowerState(inForce).encoded, qos: .atLeastOnce, retain: true))
    }

    /// The side's presence-driven power as the store and the configuration say.
    private func publishPresencePowerState(serial: String, side: BedSide) async {
        let inForce = await PresencePowerInForce.resolve(store: store, configuration: configuration.schedule.presencePower,
                                                         podSerial: serial, side: side)
        publishPresencePowerState(serial: serial, side: side, inForce)
    }

    private func sides(_ count: Int) -> [BedSide] { count >= 2 ? [.left, .right] : [.left] }

    private func publishLink(_ pod: HubState.PodState) {
        let serial = pod.pod.serial
        publish(MQTTMessage(topic: topics.podAvailability(serial), text: pod.connected ? "online" : "offline",
                            qos: .atLeastOnce, retain: true))
        publish(MQTTMessage(topic: topics.link(serial), payload: MQTTPayloads.link(pod).encoded, qos: .atLeastOnce, retain: true))
    }

    private func publishSideState(serial: String, side: BedSide, state: HubState) {
        let pod = state.pods[serial]
        let key = SideKey(serial: serial, side: side)
        // Nothing known yet (a hub just started, before the pod's first second): the broker's
        // retained state stands, rather than an all-null one that reads "bed empty" for a moment.
        guard pod?.live[side] != nil || pod?.inBed[side] != nil || pod?.power[side] != nil else { return }
        let payload = MQTTPayloads.sideState(live: pod?.live[side], inBed: pod?.inBed[side], inBedSince: inBedSince[key],
                                             stage: pod?.stage[side], power: pod?.power[side], alarmRinging: ringing[key] ?? false)
        publishedPresent[key] = MQTTPayloads.present(live: pod?.live[side], inBed: pod?.inBed[side])
        guard case .object(var timeless) = payload else { return }
        timeless["time"] = nil
        guard publishedSideStates[key] != .object(timeless) else { return }
        if publish(MQTTMessage(topic: topics.sideState(serial, side.rawValue), payload: payload.encoded, qos: .atMostOnce, retain: true)) {
            publishedSideStates[key] = .object(timeless)
        }
    }

    /// Reads the side's schedule facts from the store and publishes them (if they changed).
    private func publishSchedule(serial: String, side: BedSide) async {
        let key = SideKey(serial: serial, side: side)
        let read = (scheduleReadsStarted[key] ?? 0) + 1
        scheduleReadsStarted[key] = read
        let inForce = (try? await store.podSchedule(podSerial: serial, side: side)) ?? nil
        let times = await sleepTimes(serial: serial, side: side)
        let alarmOn = (try? await store.alarmEnabled(podSerial: serial, side: side)) ?? true
        let wake = await EffectiveWakeSettings.resolve(store: store, settings: configuration.schedule, podSerial: serial, side: side)
        // A later read already published newer facts while this one waited on the store.
        guard read > (scheduleReadPublished[key] ?? 0) else { return }
        scheduleReadPublished[key] = read
        let zone = inForce.flatMap { TimeZone(identifier: $0.timeZoneID) } ?? configuration.podTimeZone
        let alarms = inForce.flatMap { try? PodSchedule.fromStoredJSON($0.scheduleJSON) }?.alarms ?? []
        scheduleFacts[key] = ScheduleFacts(inForce: inForce, alarms: alarms, zone: zone, weekday: times?.weekday,
                                           weekend: separateWeekend ? times?.weekend : nil, alarmEnabled: alarmOn,
                                           wakeWindowMinutes: wake.windowMinutes)
        publishScheduleFacts(key)
    }

    /// The retained schedule from the facts last read, with the next alarm as of now.
    private func publishScheduleFacts(_ key: SideKey) {
        guard let facts = scheduleFacts[key] else { return }
        let next = facts.alarmEnabled ? MQTTPayloads.nextAlarm(facts.alarms, zone: facts.zone, after: clock.now()) : nil
        publish(MQTTMessage(topic: topics.schedule(key.serial, key.side.rawValue),
                            payload: MQTTPayloads.schedule(facts.inForce, times: facts.weekday, weekendTimes: facts.weekend,
                                                           alarmEnabled: facts.alarmEnabled,
                                                           wakeWindowMinutes: facts.wakeWindowMinutes, nextAlarm: next).encoded,
                            qos: .atLeastOnce, retain: true))
    }

    /// The weekday and weekend bedtime and wake the side's schedule is built from: the manual
    /// ones when set, else what inference (or the default) gives — as the schedule service
    /// decided them (read through `HubControl`; the bridge never infers).
    private func sleepTimes(serial: String, side: BedSide) async -> (weekday: SleepTimes, weekend: SleepTimes)? {
        guard let decision = await control.scheduleDecisions(podSerial: serial)[side] else { return nil }
        return (decision.inference.decision(for: .weekday).times, decision.inference.decision(for: .weekend).times)
    }

    private func publishLastNight(serial: String, side: BedSide) async {
        let key = SideKey(serial: serial, side: side)
        if lastNights[key] == nil, let stored = await latestStoredNight(serial: serial, side: side) {
            lastNights[key] = MQTTPayloads.lastNight(stored)
        }
        guard let payload = lastNights[key] else { return }
        publish(MQTTMessage(topic: topics.lastNight(serial, side.rawValue), payload: payload.encoded, qos: .atLeastOnce, retain: true))
    }

    private func latestStoredNight(serial: String, side: BedSide) async -> StoredSession? {
        let sessions = (try? await store.allSessions(side: side)) ?? []
        return sessions.filter { $0.podSerial == serial && $0.isFinal }.max { $0.end < $1.end }
    }

    // MARK: The hub's events

    func handle(_ event: HubEvent) async {
        switch event {
        case .podConnected(let pod, _, _):
            guard connected else { return }
            await refreshStoredPods()
            announce(pod.serial) // again: the firmware may have changed
            if let state = bus.state.pods[pod.serial] { publishLink(state) }
            for side in sides(pod.sides) {
                await publishSchedule(serial: pod.serial, side: side)
                await publishPresencePowerState(serial: pod.serial, side: side)
                await publishLastNight(serial: pod.serial, side: side)
            }
        case .podDisconnected(let serial, _, _):
            guard connected, let state = bus.state.pods[serial] else { return }
            publishLink(state)
        case .linkProblem:
            // A pod that cannot be opened has said no serial to publish it under; the log,
            // `/readyz` and the dashboard say what is wrong.
            break
        case .linkCounters(let serial, _), .clockSet(let serial, _):
            guard connected, let state = bus.state.pods[serial] else { return }
            publishLink(state)
        case .live(let serial, let side, let second):
            // Vitals go out by the timer, at most every publishEverySeconds; a change of
            // presence at once (Home Assistant's occupancy: someone got up, or lay down).
            guard connected, let published = publishedPresent[SideKey(serial: serial, side: side)],
                  published != second.present else { return }
            publishSideState(serial: serial, side: side, state: bus.state)
        case .powerSet(let serial, let side, _, _), .powerReported(let serial, let side, _):
            guard connected else { return }
            publishSideState(serial: serial, side: side, state: bus.state)
        case .presence(let serial, let side, let inBed, let at):
            let key = SideKey(serial: serial, side: side)
            inBedSince[key] = inBed ? at : nil
            guard connected else { return }
            publishSideState(serial: serial, side: side, state: bus.state)
        case .preliminaryStage(let serial, let side, _, _):
            guard connected else { return }
            publishSideState(serial: serial, side: side, state: bus.state)
        case .alarm(let notice):
            // A pod-wide event (no side) is each side's.
            let affected = notice.side.map { [$0] } ?? sides(bus.state.pods[notice.serial]?.pod.sides ?? 2)
            for side in affected { ringing[SideKey(serial: notice.serial, side: side)] = notice.kind == .fired }
            guard connected else { return }
            publish(MQTTMessage(topic: topics.alarmEvents(notice.serial), payload: MQTTPayloads.alarm(notice).encoded,
                                qos: .atLeastOnce, retain: false))
            for side in affected {
                publish(MQTTMessage(topic: topics.sideAlarmEvents(notice.serial, side.rawValue),
                                    payload: MQTTPayloads.alarmEvent(notice, side: side).encoded, qos: .atLeastOnce, retain: false))
                publishSideState(serial: notice.serial, side: side, state: bus.state)
                publishScheduleFacts(SideKey(serial: notice.serial, side: side))
            }
        case .wake(let notice):
            lastWakes[SideKey(serial: notice.serial, side: notice.side)] = notice
            guard connected else { return }
            publishWake(notice)
            publish(MQTTMessage(topic: topics.wakeEvents(notice.serial, notice.side.rawValue),
                                payload: MQTTPayloads.wakeEvent(notice).encoded, qos: .atLeastOnce, retain: false))
        case .schedulePushed(let notice):
            guard connected else { return }
            for side in sides(bus.state.pods[notice.serial]?.pod.sides ?? 2) {
                await publishSchedule(serial: notice.serial, side: side)
            }
        case .scheduleAcknowledged(let serial, let side):
            // Stored after the push's own notice: without this the retained schedule could
            // keep "acknowledged": false for good (seen once trying it as a user).
            guard connected else { return }
            await publishSchedule(serial: serial, side: side)
        case .nightFinished(let night):
            let key = SideKey(serial: night.serial, side: night.side)
            lastNights[key] = MQTTPayloads.lastNight(night)
            guard connected else { return }
            await publishLastNight(serial: night.serial, side: night.side)
        case .presencePower(let notice):
            // The switch's state follows from the `.powerSet` the command published; this is the why.
            guard connected else { return }
            publishPresencePower(notice)
            // Away counted from empty nights may have changed with it.
            await publishPresencePowerState(serial: notice.serial, side: notice.side)
        case .presencePowerSettings(let serial, let side, let inForce):
            guard connected else { return }
            publishPresencePowerState(serial: serial, side: side, inForce)
        case .wakeSettings:
            // A command of ours publishes the schedule after it; the API's changes show with the next push.
            break
        }
    }

    // MARK: Messages from the broker

    private func received(_ message: MQTTMessage) async {
        if topics.homeAssistantStatus.contains(message.topic) {
            if message.text.trimmingCharacters(in: .whitespacesAndNewlines) == "online" {
                reporter.event("MQTT: Home Assistant came online; publishing discovery again")
                publishDiscovery(force: true)
                await publishAllStates()
            }
            return
        }
        if topics.serialInDiscoveryTopic(message.topic) != nil || message.topic.hasPrefix(topics.discoveryPrefix + "/") {
            discoveryConfigSeen(message)
            return
        }
        if let level = topics.serialInPodAvailabilityTopic(message.topic) {
            podAvailabilitySeen(level: level, message)
            return
        }
        // An empty message clears a retained command on the broker (forwarded to us as it
        // passes): nothing to do, and nothing wrong.
        if message.payload.isEmpty { return }
        // A command retained by mistake must not fire again on every reconnect.
        if message.retain {
            refuse(topic: message.topic, payload: message.text, reason: "retained commands are ignored (publish with retain off)")
            return
        }
        switch MQTTCommand.parse(topic: message.topic, payload: message.payload, topics: topics) {
        case .failure(let error):
            refuse(topic: error.topic, payload: error.payload, reason: error.reason)
        case .success(let command):
            await execute(command, topic: message.topic, payload: message.text)
        }
    }

    /// A command refused before it reached any pod: on `<base>/error`, in the log, and as the
    /// side's `refused` command event when the topic names a pod this hub serves and a side.
    private func refuse(topic: String, payload: String, reason: String, command: String? = nil) {
        reporter.warning("MQTT: command on \(topic) refused: \(reason)")
        publish(MQTTMessage(topic: topics.commandErrors,
                            payload: MQTTPayloads.commandError(topic: topic, payload: String(payload.prefix(200)), reason: reason).encoded,
                            qos: .atLeastOnce, retain: false))
        guard let named = topics.serialAndSide(ofCommandTopic: topic),
              let serial = knownSerial(level: named.serialLevel) else { return }
        publish(MQTTMessage(topic: topics.commandEvents(serial, named.side),
                            payload: MQTTPayloads.commandEvent(command: command, result: "refused", detail: reason).encoded,
                            qos: .atLeastOnce, retain: false))
    }

    /// The serial of a pod this hub announces or sees, by its topic level.
    private func knownSerial(level: String) -> String? {
        (podsToAnnounce().map(\.serial) + bus.state.pods.keys).first { MQTTTopics.topicLevel($0) == level }
    }

    private func execute(_ command: MQTTCommand, topic: String, payload: String) async {
        guard let serial = knownSerial(level: command.serialLevel) else {
            refuse(topic: topic, payload: payload, reason: "no pod \(MQTTCommand.quoted(command.serialLevel)) is known to this hub")
            return
        }
        let side: BedSide = command.side == .left ? .left : .right
        guard side == .left || (bus.state.pods[serial]?.pod.sides ?? 2) >= 2 else {
            refuse(topic: topic, payload: payload, reason: "pod \(serial) has one side: left")
            return
        }
        do throws(HubControl.ControlError) {
            switch command.action {
            case .power(let on, let level):
                let answer = try await control.send(.power(side: side, on: on, level: level ?? 100), toPod: serial)
                // The state follows from the hub's `.powerSet`, as for a command from the API.
                result(command, serial: serial, answer)
            case .snooze(let seconds):
                result(command, serial: serial, try await control.send(.snooze(side: side, seconds: seconds ?? 540), toPod: serial))
            case .stopAlarm:
                result(command, serial: serial, try await control.send(.stopAlarm(side: side), toPod: serial))
            case .bedtime(let time), .wake(let time), .weekendBedtime(let time), .weekendWake(let time):
                let weekendCommand: Bool
                switch command.action {
                case .weekendBedtime, .weekendWake: weekendCommand = true
                default: weekendCommand = false
                }
                guard separateWeekend || !weekendCommand else {
                    refuse(topic: topic, payload: payload, reason: "no weekend nights are configured (schedule.inference.weekendWakeDays "
                           + "is empty): set the bedtime and wake time", command: command.name)
                    return
                }
                // Each time not named keeps its value in force: the manual one, else the
                // inferred (or default) one, weekday and weekend alike. Setting the weekday
                // bedtime never moves the weekend's.
                let manual = (try? await store.manualSchedule(podSerial: serial, side: side)) ?? nil
                let current = await sleepTimes(serial: serial, side: side)
                var bedtime = manual?.weekdayBedtime ?? current?.weekday.bedtime.description
                var wake = manual?.weekdayWake ?? current?.weekday.wake.description
                var weekendBedtime = manual?.weekendBedtime ?? current?.weekend.bedtime.description
                var weekendWake = manual?.weekendWake ?? current?.weekend.wake.description
                switch command.action {
                case .bedtime: bedtime = time
                case .wake: wake = time
                case .weekendBedtime: weekendBedtime = time
                default: weekendWake = time
                }
                guard let bedtime, let wake, let weekendBedtime, let weekendWake else {
                    refuse(topic: topic, payload: payload, reason: "no schedule in force to keep the other times from", command: command.name)
                    return
                }
                let lines = try await control.setManualSchedule(
                    podSerial: serial, sides: [side], bedtime: bedtime, wake: wake,
                    weekendBedtime: separateWeekend ? weekendBedtime : nil, weekendWake: separateWeekend ? weekendWake : nil)
                publishResult(command, serial: serial, result: "ok", detail: Self.oneLine(lines))
                await publishSchedule(serial: serial, side: side)
            case .clearSchedule:
                let lines = try await control.clearManualSchedule(podSerial: serial, sides: [side])
                publishResult(command, serial: serial, result: "ok", detail: Self.oneLine(lines))
                await publishSchedule(serial: serial, side: side)
            case .alarm(let on):
                let lines = try await control.setAlarmEnabled(podSerial: serial, sides: [side], enabled: on)
                publishResult(command, serial: serial, result: "ok", detail: Self.oneLine(lines))
                await publishSchedule(serial: serial, side: side)
            case .wakeWindow(let minutes):
                let lines = try await control.setWake(podSerial: serial, sides: [side], windowMinutes: minutes, untilOutOfBed: nil)
                publishResult(command, serial: serial, result: "ok", detail: Self.oneLine(lines))
                await publishSchedule(serial: serial, side: side)
            case .presencePower(let field, let value):
                // The state goes out with the hub's `.presencePowerSettings`, as for a change from the API.
                let inForce = try await control.setPresencePower(podSerial: serial, side: side,
                                                                 change: Self.presencePowerChange(field, value))
                publishResult(command, serial: serial, result: "ok",
                              detail: "presence-driven power \(inForce.enabled ? "on" : "off")\(inForce.isAway ? ", away" : "")")
            }
        } catch {
            switch error {
            case .invalidArgument(let why):
                refuse(topic: topic, payload: payload, reason: why, command: command.name)
            default:
                reporter.warning("MQTT: \(command.name) for pod \(serial) \(side) failed: \(error)")
                publishResult(command, serial: serial, result: "error", detail: error.description)
            }
        }
    }

    static func presencePowerChange(_ field: MQTTCommand.PresencePowerField, _ value: Int) -> PresencePowerChangeRequest {
        var change = PresencePowerChangeRequest()
        switch field {
        case .enabled: change.enabled = value != 0
        case .keepOnWhileOccupied: change.keepOnWhileOccupied = value != 0
        case .keepOnAfterLeavingMinutes: change.keepOnAfterLeavingMinutes = value
        case .offWhenLeft: change.offWhenLeft = value != 0
        case .offWhenLeftMinutes: change.offWhenLeftMinutes = value
        case .awayAfterNights: change.awayAfterNights = value
        case .away: change.away = value != 0
        }
        return change
    }

    private func result(_ command: MQTTCommand, serial: String, _ answer: HubControl.PodAnswer) {
        switch answer {
        case .ack:
            reporter.event("MQTT: \(command.name) for pod \(serial) \(command.side.rawValue): acknowledged by the pod")
            publishResult(command, serial: serial, result: "ack", detail: nil)
        case .nack(let status, let code):
            reporter.warning("MQTT: \(command.name) for pod \(serial) \(command.side.rawValue): refused by the pod (\(status), \(code))")
            publishResult(command, serial: serial, result: "nack", detail: status)
        }
    }

    /// What the command line would print, as one line: each line trimmed (its indentation is
    /// the terminal's), joined by "; ".
    static func oneLine(_ lines: [String]) -> String {
        lines.flatMap { $0.split(whereSeparator: \.isNewline) }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// A valid command's outcome: on the pod's `command/result` and as the side's command event.
    private func publishResult(_ command: MQTTCommand, serial: String, result: String, detail: String?) {
        if result == "ok" { reporter.event("MQTT: \(command.name) for pod \(serial) \(command.side.rawValue): \(detail ?? "done")") }
        publish(MQTTMessage(topic: topics.commandResults(serial),
                            payload: MQTTPayloads.commandResult(command, serial: serial, result: result, detail: detail).encoded,
                            qos: .atLeastOnce, retain: false))
        publish(MQTTMessage(topic: topics.commandEvents(serial, command.side.rawValue),
                            payload: MQTTPayloads.commandEvent(command: command.name, result: result, detail: detail).encoded,
                            qos: .atLeastOnce, retain: false))
    }

    // MARK: Client calls

    /// Publishes `message`; a retained one only when its payload differs from the one last
    /// published on the topic (unless `force`). Returns whether it went out.
    @discardableResult
    private func publish(_ message: MQTTMessage, force: Bool = false) -> Bool {
        if message.retain, !force, retainedPayloads[message.topic] == message.payload { return false }
        do {
            try client.publish(message)
            publishedCount += 1
            if message.retain { retainedPayloads[message.topic] = message.payload }
            reporter.logger.trace("MQTT published \(message.topic) \(message.text)")
            return true
        } catch {
            // Not connected: everything retained is published again on the next connection.
            reporter.logger.debug("MQTT: \(error)")
            return false
        }
    }

    private func subscribe(_ filter: String) {
        do { try client.subscribe(filter, qos: .atLeastOnce) } catch { reporter.warning("MQTT: \(error)") }
    }
}
