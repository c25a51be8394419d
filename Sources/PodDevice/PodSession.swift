// One open link to a pod: frames in and out over a `Transport`, requests matched to
// responses by request id, with the spec's timeout / retransmit / BUSY rules. A session
// ends when its transport does; `PodConnection` makes a new one after a reconnect.
import PodProtocol

/// Signals a session sends its owner besides frames.
enum SessionSignal: Sendable {
    /// The pod sent BOOT: it reset and forgot clock, schedules and stream (`boots` counts them).
    case podRebooted(boots: Int)
    /// The transport ended (unplug, close, error).
    case ended(reason: String)
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
    private var endReason: String?
    private(set) var boots = 0
    private var reader: Task<Void, Never>?
    private var stats = LinkCounters()

    private struct Waiter {
        let type: MessageType
        let token: UInt64
        let continuation: CheckedContinuation<WaitResult, Never>
        let timer: Task<Void, Never>
    }
    private enum WaitResult {
        case response(Response)
        case wrongType(String)
        case timedOut
        case ended(String)
    }
    private var tokens: UInt64 = 0

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
                end(reason: (error as? TransportError)?.description ?? "\(error)")
                return
            }
        }
    }

    private func receive(_ bytes: [UInt8]) {
        let now = Wallclock.nowMicros()
        var frames: [DecodedFrame] = []
        bytes.withUnsafeBytes { decoder.decode($0) { frames.append($0) } }
        for frame in frames {
            if let recorder, let raw = frame.raw { recorder.record(.podToHub, frame: raw, at: now) }
            switch frame.message {
            case .response(let response):
                deliver(response, requestID: frame.header.requestID)
            case .event(let event) where event.kind == .boot:
                boots += 1
                stats.podReboots &+= 1
                onFrame(frame, now)
                signalContinuation.yield(.podRebooted(boots: boots))
            default:
                onFrame(frame, now)
            }
        }
    }

    private func deliver(_ response: Response, requestID: UInt16) {
        guard let waiter = pending.removeValue(forKey: requestID) else {
            stats.lateResponses &+= 1
            return
        }
        waiter.timer.cancel()
        if response.request != waiter.type {
            waiter.continuation.resume(returning: .wrongType("\(response.request) under the id of \(waiter.type)"))
        } else {
            waiter.continuation.resume(returning: .response(response))
        }
    }

    /// Sends `message` and waits for its response: re-sends on timeout (same id,
    /// RETRANSMIT), re-asks after BUSY (new id), throws on any other nack.
    func request(_ message: Message) async throws(PodLinkError) -> Response {
        guard let type = MessageType(rawValue: message.typeCode), type.isRequest else {
            throw .unexpectedResponse(request: .ping, detail: "not a request: type \(message.typeCode)")
        }
        var busyRetries = 0
        while true {
            if let endReason { throw .disconnected(endReason) }
            let id = allocateRequestID()
            var attempt = 0
            attempts: while true {
                try await send(message, requestID: id, retransmit: attempt > 0)
                switch await waitForResponse(id: id, type: type) {
                case .response(let response):
                    if response.status == .busy, busyRetries < timing.retries {
                        busyRetries += 1
                        try? await Task.sleep(for: timing.busyDelay)
                        break attempts
                    }
                    if response.status != .ok {
                        stats.nacks &+= 1
                        throw .nack(request: type, status: response.status)
                    }
                    return response
                case .wrongType(let detail):
                    throw .unexpectedResponse(request: type, detail: detail)
                case .ended(let reason):
                    throw .disconnected(reason)
                case .timedOut:
                    attempt += 1
                    if attempt > timing.retries {
                        stats.timeouts &+= 1
                        throw .timeout(request: type, attempts: attempt)
                    }
                    stats.retransmits &+= 1
                }
            }
        }
    }

    /// Writes the spec's leading 0x00 (ends any half frame the pod was receiving).
    func sendDelimiter() async throws(PodLinkError) {
        do { try await transport.write([0]) } catch { throw .disconnected("\(error)") }
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
            throw .unexpectedResponse(request: MessageType(rawValue: message.typeCode) ?? .ping, detail: "cannot encode: \(error)")
        }
        if let recorder, let frame = COBS.decode(Array(bytes.dropLast())) {
            recorder.record(.hubToPod, frame: frame, at: Wallclock.nowMicros())
        }
        do { try await transport.write(bytes) } catch { throw .disconnected("\(error)") }
    }

    private func waitForResponse(id: UInt16, type: MessageType) async -> WaitResult {
        if let endReason { return .ended(endReason) }
        tokens &+= 1
        let token = tokens
        let timeout = timing.responseTimeout
        return await withCheckedContinuation { (c: CheckedContinuation<WaitResult, Never>) in
            let timer = Task { [weak self] in
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                await self?.expire(id: id, token: token)
            }
            pending[id] = Waiter(type: type, token: token, continuation: c, timer: timer)
        }
    }

    private func expire(id: UInt16, token: UInt64) {
        guard let waiter = pending[id], waiter.token == token else { return }
        pending[id] = nil
        waiter.continuation.resume(returning: .timedOut)
    }

    private func end(reason: String) {
        guard endReason == nil else { return }
        endReason = reason
        for (_, waiter) in pending {
            waiter.timer.cancel()
            waiter.continuation.resume(returning: .ended(reason))
        }
        pending.removeAll()
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
        c.add(decoder.counters)
        return c
    }
}
