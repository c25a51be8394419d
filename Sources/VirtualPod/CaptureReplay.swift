import PodProtocol

/// Plays back the pod → hub frames of a recorded capture (§9) with their original spacing,
/// as the virtual pod's data instead of the physiology model.
///
/// The replay starts when a hub first starts a stream, so a hub that connects late misses
/// nothing. Streams and events are re-sent with the pod's own sequence numbers (its
/// responses are interleaved with them), but every loss the recording shows (a sequence gap
/// between recorded pod frames) is reproduced as a gap. Ticks are moved by one constant so
/// the recording continues from the pod's tick at the start of the replay: the spacing of
/// every sample is exact and the hub's clock anchor places the data in its own time.
/// Recorded responses are not replayed: the virtual pod answers the hub that listens now.
package struct CaptureReplay: Sendable {
    struct Item: Sendable {
        /// Model ticks after the replay start (receive-time offset × 500).
        var due: UInt64
        var message: Message
        /// Frames the recording lost just before this one.
        var lostBefore: UInt16
    }

    private(set) var items: [Item] = []
    private(set) var next = 0
    /// The recorded pod's tick at the replay's time 0.
    private(set) var tickBase: UInt64 = 0
    /// Records that were hub → pod, responses, or did not pass their CRC: not replayed.
    private(set) var skipped = 0
    /// What the recorded pod said it was in its HELLO reply, if the capture holds one.
    package private(set) var recordedInfo: PodInfo?

    package init(records: [Capture.Record]) {
        var lastSeq: UInt16?
        var firstTime: UInt64?
        var base: UInt64?
        for record in records {
            guard record.direction == .podToHub else { skipped += 1; continue }
            guard case .success(let frame) = FrameDecoder.parse(frame: record.frame) else { skipped += 1; continue }
            let t0 = firstTime ?? record.receivedMicros
            firstTime = t0
            let due = record.receivedMicros >= t0 ? (record.receivedMicros - t0) * UInt64(Wire.tickRate) / 1_000_000 : 0
            var lost: UInt16 = 0
            let seq = frame.header.sequence
            let isBoot: Bool
            if case .event(let e) = frame.message, e.kind == .boot { isBoot = true } else { isBoot = false }
            if let last = lastSeq, !isBoot {
                let gap = seq &- last &- 1
                if gap < 0x8000 { lost = gap }
            }
            lastSeq = seq
            if recordedInfo == nil, case .response(let r) = frame.message, case .hello(let info) = r.body {
                recordedInfo = info
            }
            switch frame.message {
            case .piezo, .capacitance, .environment, .event, .log:
                items.append(Item(due: due, message: frame.message, lostBefore: lost))
                if base == nil, let tick = Self.tick(of: frame.message) {
                    base = tick >= due ? tick - due : 0
                }
            default:
                skipped += 1
            }
        }
        tickBase = base ?? 0
    }

    var isFinished: Bool { next >= items.count }
    var nextDue: UInt64? { next < items.count ? items[next].due : nil }

    /// Hands out the items due at or before `replayTick`.
    mutating func take(through replayTick: UInt64, _ body: (Item) -> Void) {
        while next < items.count, items[next].due <= replayTick {
            let item = items[next]
            next += 1
            body(item)
        }
    }

    /// `message` with its tick(s) moved from the recording's time line to the pod's:
    /// `pod = podReference + (recorded − recordedReference)`.
    static func retimed(_ message: Message, recordedReference: UInt64, podReference: UInt64) -> Message {
        func move(_ t: UInt64) -> UInt64 { t >= recordedReference ? podReference + (t - recordedReference) : podReference }
        switch message {
        case .piezo(var p): p.firstTick = move(p.firstTick); return .piezo(p)
        case .capacitance(var c): c.tick = move(c.tick); return .capacitance(c)
        case .environment(var e): e.tick = move(e.tick); return .environment(e)
        case .event(var e): e.tick = move(e.tick); return .event(e)
        case .log(var l): l.tick = move(l.tick); return .log(l)
        default: return message
        }
    }

    static func tick(of message: Message) -> UInt64? {
        switch message {
        case .piezo(let p): p.firstTick
        case .capacitance(let c): c.tick
        case .environment(let e): e.tick
        case .event(let e): e.tick
        case .log(let l): l.tick
        default: nil
        }
    }
}
