import Foundation
import HomeKit
import Hub
import SleepDomain
import SleepStore

/// The accessory in `podbridge run`: answers each connection's HAP requests (pairing, the
/// database, characteristics), keeps the pairing state and stores it on every change, and pushes
/// `EVENT/1.0` notifications to subscribed sessions when the hub's bus changes a value. Values
/// come from the bus's state and the store (alarm on/off); writes go through `HubControl`, as
/// MQTT's commands do. Bytes leave through each connection's outbound queue, sealed in order.
package actor HomeKitBridge {
    private var state: HAPPairingState
    private let file: HomeKitStateFile
    private let bus: HubBus
    private let control: HubControl
    private let store: NightStore
    private let reporter: HubReporter
    private let name: String
    private var database: HAPAccessoryDatabase
    private var connections: [Int: Connection] = [:]
    private var nextConnection = 0
    /// The connection in the middle of a pair-setup: one at a time (the specification's kTLVError_Busy).
    private var setupOwner: Int?
    /// The last value each notifying characteristic had, to push changes only.
    private var lastValues: [HAPCharacteristicID: HAPValue] = [:]
    private var alarmEnabled: [String: Bool] = [:]
    /// Told the pairing state after every change (the advertisement's `sf` and `c#`).
    private let stateChanged: @Sendable (HAPPairingState) -> Void

    private struct Connection {
        let outbound: AsyncStream<[UInt8]>.Continuation
        /// Plain request bytes not yet a whole request.
        var buffer: [UInt8] = []
        /// Encrypted bytes not yet a whole frame.
        var encrypted: [UInt8] = []
        var cipher: HAPSessionCipher?
        var controllerID: String?
        var setup = PairSetup()
        var verify = PairVerify()
        var subscriptions: Set<HAPCharacteristicID> = []
    }

    package init(state: HAPPairingState, file: HomeKitStateFile, name: String, bus: HubBus, control: HubControl, store: NightStore,
                 reporter: HubReporter, stateChanged: @escaping @Sendable (HAPPairingState) -> Void = { _ in }) {
        self.state = state
        self.file = file
        self.name = name
        self.bus = bus
        self.control = control
        self.store = store
        self.reporter = reporter
        self.stateChanged = stateChanged
        database = HAPAccessoryDatabase(bridgeName: name, bridgeSerial: state.accessoryID, firmware: HubVersion.current, sides: [])
    }

    package var pairingState: HAPPairingState { state }

    // MARK: Connections

    /// A new connection; its bytes to send come out of the returned stream.
    package func open() -> (id: Int, outbound: AsyncStream<[UInt8]>) {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        nextConnection += 1
        connections[nextConnection] = Connection(outbound: continuation)
        return (nextConnection, stream)
    }

    package func close(_ id: Int) {
        connections.removeValue(forKey: id)?.outbound.finish()
        if setupOwner == id { setupOwner = nil }
    }

    /// Bytes from connection `id`: every complete request in them is answered. A framing,
    /// decryption or HTTP error ends the connection.
    package func received(_ bytes: [UInt8], on id: Int) async {
        guard var connection = connections[id] else { return }
        do {
            if var cipher = connection.cipher {
                connection.encrypted += bytes
                connection.buffer += try cipher.open(&connection.encrypted)
                connection.cipher = cipher
            } else {
                connection.buffer += bytes
            }
            var requests: [HAPHTTPRequest] = []
            while let request = try HAPHTTPRequest.take(from: &connection.buffer) { requests.append(request) }
            connections[id] = connection
            for request in requests { await answer(request, on: id) }
        } catch {
            close(id)
        }
    }

    private func send(_ bytes: [UInt8], on id: Int) {
        guard var connection = connections[id] else { return }
        if var cipher = connection.cipher {
            connection.outbound.yield(cipher.seal(bytes))
            connection.cipher = cipher
            connections[id] = connection
        } else {
            connection.outbound.yield(bytes)
        }
    }

    // MARK: Requests

    private func answer(_ request: HAPHTTPRequest, on id: Int) async {
        guard connections[id] != nil else { return }
        switch (request.method, request.path) {
        case ("POST", "/pair-setup"): await pairSetup(request, on: id)
        case ("POST", "/pair-verify"): pairVerify(request, on: id)
        case (_, "/pair-setup"), (_, "/pair-verify"), (_, "/pairings"), (_, "/accessories"), (_, "/characteristics"):
            guard let controller = connections[id]?.controllerID, state.pairings[controller] != nil else {
                // A controller that is not paired (or not verified on this connection) gets nothing.
                send(HAPHTTPResponse.encode(status: 470, contentType: HAPHTTPResponse.jsonType, body: Array(#"{"status":-70401}"#.utf8)), on: id)
                return
            }
            switch (request.method, request.path) {
            case ("POST", "/pairings"): pairings(request, controller: controller, on: id)
            case ("GET", "/accessories"): await accessories(on: id)
            case ("GET", "/characteristics"): await readCharacteristics(request, on: id)
            case ("PUT", "/characteristics"): await writeCharacteristics(request, on: id)
            default: send(HAPHTTPResponse.encode(status: 405), on: id)
            }
        default:
            send(HAPHTTPResponse.encode(status: 404), on: id)
        }
    }

    private func pairSetup(_ request: HAPHTTPRequest, on id: Int) async {
        guard let tlv = try? TLV8.decode(request.body) else { return send(HAPHTTPResponse.encode(status: 400), on: id) }
        if tlv.byte(.state) == 1, let owner = setupOwner, owner != id, connections[owner] != nil {
            return sendTLV(PairSetup.error(2, .busy).response, on: id)
        }
        if tlv.byte(.state) == 1 { setupOwner = id }
        guard let connection = connections[id] else { return }
        // SRP's big-number work (seconds in a debug build) off the actor: other sessions'
        // requests and events go on meanwhile. One pair-setup at a time (`setupOwner`).
        let (setup, current) = (connection.setup, state)
        var (advanced, outcome) = await Task.detached {
            var setup = setup
            let outcome = setup.handle(tlv, state: current)
            return (setup, outcome)
        }.value
        guard connections[id] != nil else { return }
        connections[id]?.setup = advanced
        if outcome.paired != nil, state.isPaired {
            // Another controller paired while this one's M5 was worked out.
            outcome = PairSetup.error(6, .unavailable)
            advanced = PairSetup()
            connections[id]?.setup = advanced
        }
        if outcome.failedAttempt {
            state.failedSetupAttempts += 1
            save()
            reporter.warning("HomeKit: a pair-setup with a wrong setup code was refused (\(state.failedSetupAttempts) of \(HAPPairingState.maxFailedAttempts))")
        }
        if let paired = outcome.paired {
            state.pairings[paired.id] = .init(publicKey: paired.publicKey, isAdmin: true)
            state.failedSetupAttempts = 0
            save()
            reporter.event("HomeKit: paired with a controller")
        }
        if outcome.response.byte(.error) != nil || outcome.paired != nil { setupOwner = nil }
        sendTLV(outcome.response, on: id)
    }

    private func pairVerify(_ request: HAPHTTPRequest, on id: Int) {
        guard let tlv = try? TLV8.decode(request.body) else { return send(HAPHTTPResponse.encode(status: 400), on: id) }
        guard var connection = connections[id] else { return }
        let outcome = connection.verify.handle(tlv, state: state)
        connections[id] = connection
        sendTLV(outcome.response, on: id)
        // The answer went out in the clear; everything after it is encrypted.
        if let verified = outcome.verified {
            connections[id]?.cipher = HAPSessionCipher(sharedSecret: verified.sharedSecret, isAccessory: true)
            connections[id]?.controllerID = verified.controllerID
        }
    }

    private func pairings(_ request: HAPHTTPRequest, controller: String, on id: Int) {
        guard let tlv = try? TLV8.decode(request.body) else { return send(HAPHTTPResponse.encode(status: 400), on: id) }
        let outcome = PairingsRequest.handle(tlv, controllerID: controller, state: &state)
        if outcome.changed { save() }
        sendTLV(outcome.response, on: id)
        for removed in outcome.removed {
            for (other, connection) in connections where connection.controllerID == removed && other != id { close(other) }
        }
        if outcome.removed.contains(controller) { close(id) }
        if outcome.changed, !state.isPaired { announceUnpaired() }
    }

    private func sendTLV(_ tlv: TLV8, on id: Int) {
        send(HAPHTTPResponse.encode(status: 200, contentType: HAPHTTPResponse.tlvType, body: tlv.encoded()), on: id)
    }

    private func accessories(on id: Int) async {
        await refreshDatabase()
        let body = database.json { self.value(of: $0) }
        send(HAPHTTPResponse.encode(status: 200, contentType: HAPHTTPResponse.jsonType, body: body), on: id)
    }

    private func readCharacteristics(_ request: HAPHTTPRequest, on id: Int) async {
        guard let ids = HAPCharacteristicQuery.ids(query: request.query) else {
            return send(HAPHTTPResponse.encode(status: 400), on: id)
        }
        let results: [(HAPCharacteristicID, Result<HAPValue, HAPStatusError>)] = ids.map { cid in
            guard let characteristic = database.characteristics[cid] else { return (cid, .failure(HAPStatusError(.notFound))) }
            guard characteristic.readable else { return (cid, .failure(HAPStatusError(.writeOnly))) }
            guard let value = value(of: characteristic) else { return (cid, .failure(HAPStatusError(.communicationFailure))) }
            return (cid, .success(value))
        }
        let answer = HAPCharacteristicsBody.readAnswer(results)
        send(HAPHTTPResponse.encode(status: answer.status, contentType: HAPHTTPResponse.jsonType, body: answer.body), on: id)
    }

    private func writeCharacteristics(_ request: HAPHTTPRequest, on id: Int) async {
        guard let write = HAPWriteRequest.decode(request.body) else { return send(HAPHTTPResponse.encode(status: 400), on: id) }
        var results: [(HAPCharacteristicID, HAPStatus)] = []
        for item in write.characteristics {
            guard let characteristic = database.characteristics[item.id] else {
                results.append((item.id, .notFound))
                continue
            }
            if let ev = item.ev {
                guard characteristic.notifies, let on = ev.asBool else {
                    results.append((item.id, .notificationNotSupported))
                    continue
                }
                if on { connections[id]?.subscriptions.insert(item.id) } else { connections[id]?.subscriptions.remove(item.id) }
            }
            if let value = item.value {
                guard characteristic.writable else {
                    results.append((item.id, .readOnly))
                    continue
                }
                results.append((item.id, await perform(characteristic.role, value: value)))
                continue
            }
            results.append((item.id, .success))
        }
        let answer = HAPCharacteristicsBody.writeAnswer(results)
        send(HAPHTTPResponse.encode(status: answer.status, contentType: answer.body.isEmpty ? nil : HAPHTTPResponse.jsonType,
                                    body: answer.body), on: id)
        await publishChanges()
    }

    /// A write: to the pod through `HubControl`, as an MQTT command would.
    private func perform(_ role: HAPRole, value: HAPValue) async -> HAPStatus {
        do throws(HubControl.ControlError) {
            switch role {
            case .identify:
                reporter.event("HomeKit: identify")
                return .success
            case .power(let serial, let side):
                guard let on = value.asBool else { return .invalidValue }
                return Self.status(try await control.send(.power(side: side, on: on, level: 100), toPod: serial))
            case .alarm(let serial, let side):
                guard let on = value.asBool else { return .invalidValue }
                _ = try await control.setAlarmEnabled(podSerial: serial, sides: [side], enabled: on)
                alarmEnabled["\(serial)/\(side)"] = on
                return .success
            case .snooze(let serial, let side):
                guard let on = value.asBool else { return .invalidValue }
                // Momentary: it reads off again at once; only "on" does something.
                guard on else { return .success }
                return Self.status(try await control.send(.snooze(side: side, seconds: 540), toPod: serial))
            case .stopAlarm(let serial, let side):
                guard let on = value.asBool else { return .invalidValue }
                guard on else { return .success }
                return Self.status(try await control.send(.stopAlarm(side: side), toPod: serial))
            case .constant, .occupancy:
                return .readOnly
            }
        } catch {
            reporter.warning("HomeKit: a write was not carried out: \(error)")
            return .communicationFailure
        }
    }

    private static func status(_ answer: HubControl.PodAnswer) -> HAPStatus {
        if case .ack = answer { return .success }
        return .communicationFailure
    }

    // MARK: Values and events

    private func value(of characteristic: HAPCharacteristic) -> HAPValue? {
        let pods = bus.state.pods
        switch characteristic.role {
        case .identify: return nil
        case .constant(let value): return value
        case .occupancy(let serial, let side):
            let pod = pods[serial]
            let inBed = pod?.inBed[side] ?? pod?.live[side]?.present ?? false
            return .int(inBed ? 1 : 0)
        case .power(let serial, let side): return .bool(pods[serial]?.power[side] ?? false)
        case .alarm(let serial, let side): return .bool(alarmEnabled["\(serial)/\(side)"] ?? true)
        case .snooze, .stopAlarm: return .bool(false)
        }
    }

    /// The database from the pods the bus knows and those given accessory IDs before (so a
    /// controller's cached database holds across a restart before the pod reconnects);
    /// `c#` bumped when its structure changed.
    package func refreshDatabase() async {
        var sides: [HAPPodSide] = []
        var firmware: [String: String] = [:]
        var counts: [String: Int] = [:]
        for (serial, pod) in bus.state.pods {
            firmware[serial] = pod.pod.firmware
            counts[serial] = pod.pod.sides
        }
        for key in state.accessoryIDs.keys {
            let serial = String(key.split(separator: "/").first ?? "")
            if counts[serial] == nil { counts[serial] = 2 }
        }
        for (serial, count) in counts.sorted(by: { $0.key < $1.key }) {
            for side in BedSide.allCases where side.index < max(1, count) {
                let aid = state.accessoryID(serial: serial, side: side.rawValue)
                sides.append(HAPPodSide(serial: serial, side: side, aid: aid, firmware: firmware[serial] ?? "unknown"))
                if alarmEnabled["\(serial)/\(side)"] == nil {
                    alarmEnabled["\(serial)/\(side)"] = (try? await store.alarmEnabled(podSerial: serial, side: side)) ?? true
                }
            }
        }
        let next = HAPAccessoryDatabase(bridgeName: name, bridgeSerial: state.accessoryID, firmware: HubVersion.current, sides: sides)
        let before = (state.configurationNumber, state.databaseDigest, state.accessoryIDs)
        database = next
        state.noteDatabase(digest: next.digest)
        if before != (state.configurationNumber, state.databaseDigest, state.accessoryIDs) { save() }
    }

    /// Pushes the values that changed to the sessions subscribed to them.
    package func publishChanges() async {
        var changed: [HAPCharacteristicID: HAPValue] = [:]
        for characteristic in database.characteristics.values where characteristic.notifies {
            guard let value = value(of: characteristic) else { continue }
            if lastValues[characteristic.id] != value {
                if lastValues[characteristic.id] != nil { changed[characteristic.id] = value }
                lastValues[characteristic.id] = value
            }
        }
        guard !changed.isEmpty else { return }
        for (id, connection) in connections where connection.cipher != nil {
            let mine = changed.filter { connection.subscriptions.contains($0.key) }.sorted { $0.key < $1.key }
            guard !mine.isEmpty else { continue }
            let body = HAPCharacteristicsBody.encode(mine.map { HAPCharacteristicResult(id: $0.key, value: $0.value) })
            send(HAPHTTPResponse.encode(status: 200, contentType: HAPHTTPResponse.jsonType, body: body, event: true), on: id)
        }
    }

    /// A hub event: the database when pods come, values when they change.
    package func handle(_ event: HubEvent) async {
        switch event {
        case .podConnected:
            await refreshDatabase()
            await publishChanges()
        case .presence, .live, .powerSet, .powerReported, .podDisconnected:
            await publishChanges()
        case .schedulePushed(let notice):
            for side in BedSide.allCases {
                if let on = try? await store.alarmEnabled(podSerial: notice.serial, side: side) { alarmEnabled["\(notice.serial)/\(side)"] = on }
            }
            await publishChanges()
        default:
            break
        }
    }

    // MARK: State

    private func save() {
        do { try file.save(state) } catch { reporter.warning("HomeKit: \(error)") }
        stateChanged(state)
    }

    /// Says the setup code and payload on the console while unpaired (what a user scans or types).
    package func announceUnpaired() {
        guard !state.isPaired else { return }
        reporter.event("HomeKit: not paired; add \"\(name)\" in Apple Home with setup code \(state.setupCode.formatted) "
                       + "(QR payload \(SetupPayload.uri(code: state.setupCode, setupID: state.setupID)))")
    }
}
