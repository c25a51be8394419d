import CMosquitto
import Dispatch
import Foundation
import HubMQTT
import Synchronization

/// A small MQTT 3.1.1 client over Debian's libmosquitto, for Swift concurrency.
///
/// One thread of its own runs libmosquitto's network loop (`mosquitto_loop`) and owns the
/// connection: it connects, and whenever the connection fails or drops it waits (doubling
/// from `reconnectMin` up to `reconnectMax`) and connects again, for as long as the client
/// runs: a broker that restarts, or refuses the credentials for a while, is never given up
/// on. libmosquitto's callbacks arrive on that thread and become `events`, an `AsyncStream`
/// the owner reads in order. `publish` and `subscribe` may be called from any task: the
/// library is told it is threaded (`mosquitto_threaded_set`), so they only queue packets.
///
/// Lifetime (the one rule that keeps libmosquitto's memory safe): the `mosquitto` handle is
/// destroyed exactly once, in `deinit`. The network thread holds the client strongly while
/// it runs, and every caller of `publish`/`subscribe` holds it too, so `deinit` — and with it
/// `mosquitto_destroy` — can only run once no loop and no call is using the handle. The
/// callbacks' context is the client's `Callbacks` object, which the client owns and which
/// therefore outlives every callback. `stop()` only ends the loop (a clean DISCONNECT first).
package final class MQTTClient: Sendable {
    package let configuration: MQTTClientConfiguration
    /// What happened on the connection, in order. Ends after `stop()`.
    package let events: AsyncStream<MQTTClientEvent>

    private let handle: Handle
    private let callbacks: Callbacks
    /// Signalled by `stop()` to cut a backoff wait short.
    private let wake = DispatchSemaphore(value: 0)
    private let phase = Mutex(Phase.created)
    /// Resumed once the network thread has ended (the continuations of `stop()` callers).
    private let finishedWaiters = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    private enum Phase { case created, running, stopping, stopped }

    /// Prepares the client (identity, credentials, TLS, last will); nothing is sent before `start()`.
    package init(configuration: MQTTClientConfiguration) throws(MQTTError) {
        _ = Self.libraryReady
        self.configuration = configuration
        let (stream, continuation) = AsyncStream.makeStream(of: MQTTClientEvent.self)
        events = stream
        let callbacks = Callbacks(continuation: continuation)
        self.callbacks = callbacks
        guard let mosq = mosquitto_new(configuration.clientID, true, Unmanaged.passUnretained(callbacks).toOpaque()) else {
            continuation.finish()
            throw MQTTError(operation: "create the MQTT client", code: Int32(MOSQ_ERR_NOMEM.rawValue))
        }
        // From here on `deinit` destroys the handle, whatever happens below.
        handle = Handle(mosq)
        try Self.check("declare threads", mosquitto_threaded_set(mosq, true))
        if let user = configuration.username {
            try Self.check("set the MQTT username and password", mosquitto_username_pw_set(mosq, user, configuration.password))
        }
        if let ca = configuration.caFile {
            try Self.check("use the TLS CA file \(ca)", mosquitto_tls_set(mosq, ca, nil, nil, nil, nil))
        }
        if let will = configuration.will {
            try Self.check("set the last will", will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(mosq, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain)
            })
        }
        mosquitto_connect_callback_set(mosq) { _, context, code in
            Callbacks.from(context).connected(code: code)
        }
        mosquitto_disconnect_callback_set(mosq) { _, context, code in
            Callbacks.from(context).disconnected(code: code)
        }
        mosquitto_publish_callback_set(mosq) { _, context, mid in
            Callbacks.from(context).delivered(mid: mid)
        }
        mosquitto_message_callback_set(mosq) { _, context, message in
            guard let message else { return }
            Callbacks.from(context).received(message.pointee)
        }
    }

    deinit {
        // No network thread runs (it holds `self`) and no call is under way (callers hold `self`).
        mosquitto_destroy(handle.pointer)
        callbacks.continuation.finish()
    }

    /// Starts the network thread: connect now, reconnect with backoff whenever needed.
    package func start() {
        let start = phase.withLock { p -> Bool in
            guard p == .created else { return false }
            p = .running
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in
            networkLoop()
            threadEnded()
        }
        thread.name = "mqtt"
        thread.start()
    }

    /// Queues a message. Fails (`MOSQ_ERR_NO_CONN`) while not connected: state topics are
    /// re-published on every connect, so nothing is queued across a disconnection.
    package func publish(_ message: MQTTMessage) throws(MQTTError) {
        var mid: Int32 = 0
        let code = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle.pointer, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos.rawValue,
                              message.retain)
        }
        try Self.check("publish to \(message.topic)", code)
        callbacks.queued(mid: mid)
    }

    /// Subscribes to a topic filter (wildcards allowed). Subscriptions do not outlive a
    /// connection (clean session): subscribe again on every `.connected`.
    package func subscribe(_ filter: String, qos: MQTTQoS) throws(MQTTError) {
        try Self.check("subscribe to \(filter)", mosquitto_subscribe(handle.pointer, nil, filter, qos.rawValue))
    }

    /// Sends what is queued, disconnects cleanly (so the broker does not publish the last
    /// will), ends the network thread and `events`. Idempotent; returns once the thread ended.
    package func stop() async {
        let wasRunning = phase.withLock { p -> Bool in
            switch p {
            case .created: p = .stopped; return false
            case .running: p = .stopping; return true
            case .stopping, .stopped: return true
            }
        }
        guard wasRunning else {
            callbacks.continuation.finish()
            return
        }
        wake.signal()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let resumeNow = finishedWaiters.withLock { state -> Bool in
                if state.done { return true }
                state.waiters.append(done)
                return false
            }
            if resumeNow { done.resume() }
        }
    }

    private func threadEnded() {
        phase.withLock { $0 = .stopped }
        callbacks.continuation.finish()
        let waiters = finishedWaiters.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for w in waiters { w.resume() }
    }

    // MARK: The network thread

    private var isStopping: Bool { phase.withLock { $0 != .running } }

    private func networkLoop() {
        let mosq = handle.pointer
        var delay = configuration.reconnectMin
        var firstAttempt = true
        while !isStopping {
            let code = firstAttempt
                ? mosquitto_connect(mosq, configuration.host, Int32(configuration.port), Int32(configuration.keepAliveSeconds))
                : mosquitto_reconnect(mosq)
            firstAttempt = false
            if code == MOSQ_ERR_SUCCESS.rawValue {
                var loop = Int32(MOSQ_ERR_SUCCESS.rawValue)
                while loop == MOSQ_ERR_SUCCESS.rawValue && !isStopping {
                    loop = mosquitto_loop(mosq, 200, 1)
                }
                if isStopping { break }
                if callbacks.takeWasConnected() { delay = configuration.reconnectMin }
                // A refused CONNACK was already reported by the connect callback.
                if loop != MOSQ_ERR_CONN_REFUSED.rawValue { callbacks.connectionLost(code: loop) }
            } else {
                callbacks.continuation.yield(.connectFailed(reason: MQTTError(
                    operation: "connect to \(configuration.host):\(configuration.port)", code: code).description))
            }
            callbacks.continuation.yield(.retrying(after: delay))
            let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
            delay = min(delay * 2, configuration.reconnectMax)
        }
        // Flush what is queued (the `offline` state) until the broker has taken it all (QoS 1:
        // its PUBACK read), then a clean DISCONNECT; bounded. Waiting for the acknowledgements
        // matters: libmosquitto closes the socket right after writing the DISCONNECT, and a
        // close with a PUBACK still unread sends a TCP reset, on which the broker may drop the
        // connection before it reads the DISCONNECT, and publish the will after all.
        if callbacks.isConnected {
            let deadline = ContinuousClock.now + .seconds(2)
            while mosquitto_want_write(mosq) || callbacks.hasUndelivered, ContinuousClock.now < deadline,
                  mosquitto_loop(mosq, 50, 1) == MOSQ_ERR_SUCCESS.rawValue {}
            mosquitto_disconnect(mosq)
            while callbacks.isConnected, ContinuousClock.now < deadline,
                  mosquitto_loop(mosq, 50, 1) == MOSQ_ERR_SUCCESS.rawValue {}
        }
    }

    private static func check(_ operation: String, _ code: Int32) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError(operation: operation, code: code) }
    }

    private static let libraryReady: Bool = {
        mosquitto_lib_init()
        return true
    }()
}

// MARK: Types

package struct MQTTClientConfiguration: Sendable {
    package var host: String
    package var port: Int
    package var clientID: String
    package var username: String?
    package var password: String?
    /// PEM file of the CA that signed the broker's certificate; TLS is on when set.
    package var caFile: String?
    package var keepAliveSeconds: Int
    /// Published by the broker if this client goes away without a clean disconnect.
    package var will: MQTTMessage?
    package var reconnectMin: Duration
    package var reconnectMax: Duration

    package init(host: String, port: Int = 1883, clientID: String, username: String? = nil, password: String? = nil,
                 caFile: String? = nil, keepAliveSeconds: Int = 30, will: MQTTMessage? = nil,
                 reconnectMin: Duration = .seconds(1), reconnectMax: Duration = .seconds(30)) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.password = password
        self.caFile = caFile
        self.keepAliveSeconds = keepAliveSeconds
        self.will = will
        self.reconnectMin = reconnectMin
        self.reconnectMax = reconnectMax
    }
}

package enum MQTTClientEvent: Sendable, Hashable {
    /// The broker accepted the connection (CONNACK 0): subscribe and publish now.
    case connected
    /// The broker answered but refused (bad credentials, not authorised, bad client id).
    case refused(reason: String)
    /// No connection could be made (nothing listening, name lookup, TLS).
    case connectFailed(reason: String)
    /// An accepted connection ended (`requested`: by our own DISCONNECT, on `stop()`).
    case disconnected(reason: String, requested: Bool = false)
    /// The next attempt comes after this wait.
    case retrying(after: Duration)
    case message(MQTTMessage)
}

/// A libmosquitto call that failed, with the library's own words for why.
package struct MQTTError: Error, CustomStringConvertible, Sendable {
    package let operation: String
    package let code: Int32
    /// errno when the library says the cause is a system error (read when the error is made).
    package let systemError: Int32

    package init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
        systemError = code == MOSQ_ERR_ERRNO.rawValue ? errno : 0
    }

    package var description: String {
        let reason = code == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(systemError)) : String(cString: mosquitto_strerror(code))
        return "cannot \(operation): \(reason)"
    }
}

// MARK: Callback bridge

/// The libmosquitto handle: its pointer, shared across threads as libmosquitto allows for a
/// threaded client. Never changes; destroyed by the client's `deinit` alone.
private final class Handle: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// What libmosquitto's C callbacks (on the network thread) reach through their context
/// pointer: they copy what they are given and yield it to the event stream.
private final class Callbacks: Sendable {
    let continuation: AsyncStream<MQTTClientEvent>.Continuation
    private let connectedNow = Mutex(false)
    private let acceptedSinceAsked = Mutex(false)
    /// Message ids published on this connection and not yet taken by the broker (QoS 0:
    /// written; QoS 1: acknowledged), and ids whose callback came before `publish` returned.
    private let inFlight = Mutex<(pending: Set<Int32>, early: Set<Int32>)>(([], []))

    init(continuation: AsyncStream<MQTTClientEvent>.Continuation) { self.continuation = continuation }

    static func from(_ context: UnsafeMutableRawPointer?) -> Callbacks {
        Unmanaged<Callbacks>.fromOpaque(context!).takeUnretainedValue()
    }

    var isConnected: Bool { connectedNow.withLock { $0 } }

    func connected(code: Int32) {
        if code == 0 {
            connectedNow.withLock { $0 = true }
            acceptedSinceAsked.withLock { $0 = true }
            continuation.yield(.connected)
        } else {
            continuation.yield(.refused(reason: String(cString: mosquitto_connack_string(code))))
        }
    }

    var hasUndelivered: Bool { inFlight.withLock { !$0.pending.isEmpty } }

    /// `publish` returned `mid`: pending until its callback (which may already have come).
    func queued(mid: Int32) {
        inFlight.withLock { f in
            if f.early.remove(mid) == nil { f.pending.insert(mid) }
        }
    }

    /// libmosquitto's on_publish: the broker has taken message `mid`.
    func delivered(mid: Int32) {
        inFlight.withLock { f in
            if f.pending.remove(mid) == nil { f.early.insert(mid) }
        }
    }

    /// What was in flight on a connection that ended is not waited for.
    private func forgetInFlight() { inFlight.withLock { $0 = ([], []) } }

    func disconnected(code: Int32) {
        forgetInFlight()
        guard connectedNow.withLock({ c in defer { c = false }; return c }) else { return }
        continuation.yield(code == 0 ? .disconnected(reason: "disconnected by the hub", requested: true)
                                : .disconnected(reason: String(cString: mosquitto_strerror(code))))
    }

    /// The loop ended without the disconnect callback having said so.
    func connectionLost(code: Int32) {
        forgetInFlight()
        guard connectedNow.withLock({ c in defer { c = false }; return c }) else { return }
        continuation.yield(.disconnected(reason: String(cString: mosquitto_strerror(code))))
    }

    /// Whether a connection was accepted since the last call (then the backoff starts over).
    func takeWasConnected() -> Bool { acceptedSinceAsked.withLock { a in defer { a = false }; return a } }

    func received(_ message: mosquitto_message) {
        let topic = String(cString: message.topic)
        let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
        continuation.yield(.message(MQTTMessage(topic: topic, payload: payload,
                                                qos: MQTTQoS(rawValue: message.qos) ?? .atLeastOnce, retain: message.retain)))
    }
}
