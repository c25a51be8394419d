// One open link to a pod: frames in and out over a `Transport`, requests matched to
// responses by request id, with the spec's timeout / retransmit / BUSY rules. A session
// ends when its transport does; `PodConnection` makes a new one after a reconnect.
import PodProtocol
import SleepDomain

/// Signals a session sends its owner besides frames.
enum SessionSignal: Sendable {
    /// The pod sent BOOT: it reset and forgot clock, schedules and stream (`boots` counts them).
    case podRebooted(boots: Int)
    /// A beat of the owner's liveness clock (see `PodConnection`); nothing arrived with it.
    case tick
    /// The transport ended (unplug, close, error).
    case ended(reason: TransportError)
}

actor PodSession {
    nonisolated let endpoint: String
    nonisolated let signals: AsyncStream<SessionSignal>
    private let signalContinuation: AsyncStream<SessionSignal>.Continuation
    private let transport: any Transport
    private let timing: LinkTiming
    private let onFrame: @Sendable (DecodedFrame, UInt64) -> Void
    private let recorder: CaptureRecorder?

    private var encoder = FrameEncoder()
    private let decoder = FrameDecoder()
    private var nextRequestID: UInt16 = 1
    private var pending: [UInt16: Waiter] = [:]
    private var endReason: TransportError?
    /// What HELLO announced (sides, piezo channels per side): streamed frames beyond it are
    /// dropped and counted as malformed (§6, v1.1). Nil until HELLO is answered.
    private var announced: (sides: UInt8, channels: UInt8)?
    private(set) var boots = 0
    /// HELLOs the pod acknowledged on this link: each opened a session (§7.1). A request
    /// answered NO_SESSION under an older count needs no new start-up: one ran since.
    private(set) var sessions = 0
    private var reader: Task<Void, Never>?
    private var stats = LinkCounters()
    /// When the last valid frame of any kind arrived (liveness, §7.7).
    private(set) var lastFrameAt = ContinuousClock.now

    /// One outstanding request, registered before its first byte is written and kept until
    /// the request returns, across its retransmissions (they reuse the id). An answer that
    /// arrives while no attempt is waiting (during the write, or just as a timer fired) is
    /// kept in `result`, so it is never mistaken for a lost one and re-asked.
    private struct Waiter {
        let type: MessageType
        var continuation: CheckedContinuation<WaitResult, Never>?
        var result: WaitResult?
        var timer: Task<Void, Never>?
        var attempt: UInt64 = 0
        /// An answer was handed to the request: any further one (to a retransmission, or a
        /// duplicate in the same read) is late, even before the request has returned.
        var answered = false
    }
    private enum WaitResult {
        case response(Response)
        case wrongType(String)
        case timedOut
        case ended(TransportError)
    }
    private var attempts: UInt64 = 0

    init(transport: any Transport, timing: LinkTiming, recorder: CaptureRecorder?,
         onFrame: @escaping @Sendable (DecodedFrame, UInt64) -> Void) {
        self.transport = transport
        self.endpoint = transport.endpoint
        self.timing = timing
        self.recorder = recorder
        self.onFrame = onFrame
        (signals, signalContinuation) = AsyncStream<SessionSignal>.makeStream()
        decoder.keepsRawFrames = recorder != nil
    }

    /// Starts reading. Separate from init so the actor is fully set up first.
    func start() {
        guard reader == nil else { return }
        reader = Task { await self.readLoop() }
    }

    private func readLoop() async {
        while true {
            do {
                let bytes = try await transport.read()
                receive(bytes)
            } catch {
                end(reason: TransportError(error))
                return
            }
        }
    }

    /// Decodes what one read brought and hands each frame on as the decoder completes it
    /// (no array of frames per read).
    private func receive(_ bytes: [UInt8]) {
        let now = SystemClock().unixMicros()
        let before = decoder.counters.frames
        bytes.withUnsafeBytes { decoder.decode($0) { handle($0, receivedMicros: now) } }
        recorder?.flush()
        if decoder.counters.frames != before { lastFrameAt = .now }
    }

    private func handle(_ frame: DecodedFrame, receivedMicros now: UInt64) {
        if let recorder, let raw = frame.raw { recorder.record(.podToHub, frame: raw, at: now) }
        switch frame.message {
        case .response(let response):
            deliver(.response(response), type: response.request, requestID: frame.header.requestID)
        case .malformed(let type, let reason) where type & MessageType.responseBit != 0:
            // An answer whose body cannot be read (e.g. a HELLO reply with an empty serial)
            // is still the answer: the request fails with the reason instead of timing out.
            let request = MessageType(rawValue: type & ~MessageType.responseBit)
            deliver(.wrongType("unreadable \(request.map { "\($0)" } ?? "response") body: \(reason)"),
                    type: request, requestID: frame.header.requestID)
        case let message where announced.map { !message.fits(sides: $0.sides, channelsPerSide: $0.channels) } ?? false:
            stats.beyondAnnounced &+= 1
        case .event(let event) where event.kind == .boot:
            boots += 1
            stats.podReboots &+= 1
            onFrame(frame, now)
            signalContinuation.yield(.podRebooted(boots: boots))
        default:
            onFrame(frame, now)
        }
    }

    private func deliver(_ result: WaitResult, type: MessageType?, requestID: UInt16) {
        guard var waiter = pending[requestID] else {
            stats.lateResponses &+= 1
            return
        }
        var result = result
        if case .response = result, type != waiter.type {
            result = .wrongType("\(type.map { "\($0)" } ?? "?") under the id of \(waiter.type)")
        }
        if waiter.answered {
            stats.lateResponses &+= 1  // a second answer, however soon after the first
        } else if let c = waiter.continuation {
            waiter.timer?.cancel()
            waiter.timer = nil
            waiter.continuation = nil
            waiter.answered = true
            pending[requestID] = waiter
            c.resume(returning: result)
        } else if waiter.result == nil {
            waiter.result = result
            pending[requestID] = waiter
        } else {
            stats.lateResponses &+= 1  // a second answer (to a retransmission)
        }
    }

    /// Sends `message` and waits for its response: re-sends on timeout (same id,
    /// RETRANSMIT), re-asks after BUSY (new id), throws on any other nack.
    /// `retries` overrides the timing's (0 = one attempt, as when closing the link).
    func request(_ message: Message, retries: Int? = nil) async throws(PodLinkError) -> Response {
        guard let type = MessageType(rawValue: message.typeCode), type.isRequest else {
            throw .invalidRequest("type \(message.typeCode) is not a request")
        }
        let maxRetries = retries ?? timing.retries
        var busyRetries = 0
        while true {
            if let endReason { throw .disconnected(endReason) }
            let id = allocateRequestID()
            pending[id] = Waiter(type: type)
            defer { pending[id] = nil }
            var attempt = 0
            attempts: while true {
                // An answer that came in after the last attempt timed out is still an answer.
                let outcome: WaitResult
                if let early = pending[id]?.result {
                    pending[id]?.answered = true
                    outcome = early
                } else {
                    if attempt > 0 { stats.retransmits &+= 1 }
                    try await send(message, requestID: id, retransmit: attempt > 0)
                    outcome = await waitForResponse(id: id)
                }
                switch outcome {
                case .response(let response):
                    if response.status == .busy, busyRetries < timing.retries {
                        busyRetries += 1
                        try? await Task.sleep(for: timing.busyDelay)
                        break attempts  // §7.2: a request re-sent after BUSY gets a new id
                    }
                    if response.status != .ok {
                        // NO_SESSION and a v1.0 NOT_READY are the connection's to act on (§7.2).
                        stats.nacks &+= 1
                        throw .nack(request: type, status: response.status)
                    }
                    if type == .hello { sessions += 1 }
                    return response
                case .wrongType(let detail):
                    throw .unexpectedResponse(request: type, detail: detail)
                case .ended(let reason):
                    throw .disconnected(reason)
                case .timedOut:
                    attempt += 1
                    if attempt > maxRetries {
                        stats.timeouts &+= 1
                        throw .timeout(request: type, attempts: attempt)
                    }
                }
            }
        }
    }

    /// Bounds later streamed frames by what the pod announced in HELLO.
    func announce(sides: UInt8, channelsPerSide: UInt8) { announced = (sides, channelsPerSide) }

    /// Writes the spec's leading 0x00 (ends any half frame the pod was receiving).
    func sendDelimiter() async throws(PodLinkError) {
        do { try await transport.write([0]) } catch { throw .disconnected(TransportError(error)) }
    }

    /// Forgets the pod's sequence baseline: after a reboot found without its BOOT event, the
    /// pod counts from 0 again and its frames must not all look out of order.
    func resetSequence() { decoder.resetSequence() }

    /// A beat of the owner's liveness clock, delivered in order with the other signals.
    func tick() {
        guard endReason == nil else { return }
        signalContinuation.yield(.tick)
    }

    private func allocateRequestID() -> UInt16 {
        // 1...65535, skipping ids still outstanding.
        repeat {
            let id = nextRequestID
            nextRequestID = nextRequestID == UInt16.max ? 1 : nextRequestID + 1
            if pending[id] == nil { return id }
        } while true
    }

    private func send(_ message: Message, requestID: UInt16, retransmit: Bool) async throws(PodLinkError) {
        let bytes: [UInt8]
        do {
            bytes = try encoder.encode(message, requestID: requestID, flags: retransmit ? [.retransmit] : [])
        } catch {
            throw .invalidRequest("cannot encode \(message.typeCode): \(error)")
        }
        if let recorder, let frame = COBS.decode(Array(bytes.dropLast())) {
            recorder.record(.hubToPod, frame: frame, at: SystemClock().unixMicros())
            recorder.flush()
        }
        do { try await transport.write(bytes) } catch { throw .disconnected(TransportError(error)) }
    }

    private func waitForResponse(id: UInt16) async -> WaitResult {
        if let endReason { return .ended(endReason) }
        attempts &+= 1
        let token = attempts
        let timeout = timing.responseTimeout
        return await withCheckedContinuation { (c: CheckedContinuation<WaitResult, Never>) in
            guard var waiter = pending[id] else { return c.resume(returning: .ended(.closed)) }
            if let result = waiter.result {
                waiter.result = nil
                waiter.answered = true
                pending[id] = waiter
                return c.resume(returning: result)
            }
            waiter.attempt = token
            waiter.continuation = c
            waiter.timer = Task { [weak self] in
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                await self?.expire(id: id, token: token)
            }
            pending[id] = waiter
        }
    }

    private func expire(id: UInt16, token: UInt64) {
        guard var waiter = pending[id], waiter.attempt == token, let c = waiter.continuation else { return }
        waiter.continuation = nil
        waiter.timer = nil
        pending[id] = waiter
        c.resume(returning: .timedOut)
    }

    private func end(reason: TransportError) {
        guard endReason == nil else { return }
        endReason = reason
        for (id, var waiter) in pending {
            waiter.timer?.cancel()
            if let c = waiter.continuation {
                waiter.continuation = nil
                pending[id] = waiter
                c.resume(returning: .ended(reason))
            } else if waiter.result == nil {
                waiter.result = .ended(reason)
                pending[id] = waiter
            }
        }
        signalContinuation.yield(.ended(reason: reason))
        signalContinuation.finish()
    }

    /// Closes the transport; the reader then ends the session.
    func close() {
        transport.close()
    }

    /// Decoder counters plus this session's request statistics.
    func counters() -> LinkCounters {
        var c = stats
        c.decoder = decoder.counters
        return c
    }
}
