import PodProtocol

/// Builds capture bytes (firmware-protocol.md §9) from messages in memory: how tests and
/// benchmarks turn a generated night into the exact input `podbridge analyze --capture`
/// reads. Each direction has its own sequence counter, as on a real link.
package struct CaptureBuilder: Sendable {
    package private(set) var bytes: [UInt8]
    private var pod = FrameEncoder()
    private var hub = FrameEncoder()
    private var stuffed: [UInt8] = []

    package init(reservingCapacity capacity: Int = 0) {
        bytes = Capture.magic
        bytes.reserveCapacity(capacity)
    }

    /// Appends one record holding `message` as an unstuffed frame.
    package mutating func append(_ message: Message, direction: Capture.Direction = .podToHub,
                                requestID: UInt16 = 0, receivedMicros: UInt64) throws(FrameEncoder.EncodingError) {
        stuffed.removeAll(keepingCapacity: true)
        if direction == .podToHub {
            try pod.encode(message, requestID: requestID, appendingTo: &stuffed)
        } else {
            try hub.encode(message, requestID: requestID, appendingTo: &stuffed)
        }
        // The encoder stuffs and delimits; a capture holds the frame as received, unstuffed.
        let frame = COBS.decode(Array(stuffed.dropLast())) ?? []
        bytes += Capture.encode(Capture.Record(receivedMicros: receivedMicros, direction: direction, frame: frame))
    }

    /// Appends the SET_CLOCK exchange: the hub's request and the pod's answer with `anchor`.
    package mutating func appendClockExchange(_ anchor: ClockAnchor, requestID: UInt16,
                                             receivedMicros: UInt64) throws(FrameEncoder.EncodingError) {
        try append(.setClock(ClockSetting(unixMillis: anchor.unixMillis, utcOffsetMinutes: anchor.utcOffsetMinutes)),
                   direction: .hubToPod, requestID: requestID, receivedMicros: receivedMicros)
        try append(.response(Response(request: .setClock, status: .ok, body: .clock(anchor))),
                   requestID: requestID, receivedMicros: receivedMicros + 2_000)
    }
}
