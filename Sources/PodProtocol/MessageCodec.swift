import SleepDomain

/// Payload layouts of every message (firmware-protocol.md §6), both directions.
///
/// Decoding follows the compatibility rules of §5: bytes after the last known field are
/// ignored (a newer sender may append fields), a payload shorter than the known fields is
/// `.truncated`, an out-of-range field is `.invalidValue`.
enum MessageCodec {
    static let temperatureAbsent: Int16 = 0x7FFF
    static let humidityAbsent: UInt16 = 0xFFFF
    static let noSide: UInt8 = 0xFF
    static let maxSerialLength = PodSerial.maxLength
    static let maxNonceLength = 32

    // MARK: Encoding

    /// The payload bytes of `message`.
    static func payload(of message: Message) -> [UInt8] {
        var w = ByteWriter()
        switch message {
        case .hello(let h):
            w.u8(h.minVersion); w.u8(h.maxVersion)
            if let minor = h.maxMinor { w.u8(minor) }
        case .ping(let nonce):
            w.raw(nonce)
        case .getStatus, .stopStream:
            break
        case .setClock(let c):
            w.i64(c.unixMillis); w.i16(c.utcOffsetMinutes)
        case .setPowerSchedule(let s):
            writePower(s, &w)
        case .setAlarm(let a):
            writeAlarm(a, &w)
        case .clearAlarm(let side), .getSchedule(let side):
            w.u8(side.wireValue)
        case .snooze(let side, let seconds):
            w.u8(side.wireValue); w.u16(seconds)
        case .startStream(let mask):
            w.u8(mask.rawValue)
        case .setPower(let p):
            w.u8(p.side.wireValue); w.u8(p.on ? 1 : 0); w.u8(p.level)
        case .triggerAlarm(let t):
            w.u8(t.side.wireValue); w.u8(t.intensity); w.u8(t.pattern.rawValue); w.u16(t.durationSeconds)
        case .response(let r):
            w.u8(r.status.rawValue)
            writeBody(r.body, &w)
        case .piezo(let p):
            w = ByteWriter(capacity: 14 + 4 * p.samples.count)
            w.u8(p.side.wireValue); w.u8(p.channels); w.u16(p.gain); w.u64(p.firstTick)
            w.u16(UInt16(truncatingIfNeeded: p.count))
            w.samples(p.samples)
        case .capacitance(let c):
            w.u8(c.side.wireValue); w.u8(UInt8(truncatingIfNeeded: c.values.count)); w.u64(c.tick)
            w.samples(c.values)
        case .environment(let e):
            w.u64(e.tick)
            for i in 0..<2 {
                w.i16((i < e.bedCentiCelsius.count ? e.bedCentiCelsius[i] : nil) ?? temperatureAbsent)
            }
            w.i16(e.ambientCentiCelsius ?? temperatureAbsent)
            w.u16(e.humidityCentiPercent ?? humidityAbsent)
        case .event(let e):
            w.u64(e.tick); w.u8(e.kind.code); w.u8(e.side?.wireValue ?? noSide); w.u16(e.argument)
        case .log(let l):
            w.u64(l.tick); w.u8(l.level); w.raw(Array(l.text.utf8))
        case .unknown(_, let payload):
            w.raw(payload)
        case .malformed:
            break
        }
        return w.bytes
    }

    private static func writePower(_ s: PowerSchedule, _ w: inout ByteWriter) {
        w.u8(s.side.wireValue); w.u8(s.days.rawValue)
        w.u8(UInt8(s.on.hour)); w.u8(UInt8(s.on.minute)); w.u8(UInt8(s.off.hour)); w.u8(UInt8(s.off.minute)); w.u8(s.level)
    }

    private static func writeAlarm(_ a: AlarmSetting, _ w: inout ByteWriter) {
        w.u8(a.side.wireValue); w.u8(a.days.rawValue); w.u8(UInt8(a.time.hour)); w.u8(UInt8(a.time.minute))
        w.u8(a.intensity); w.u8(a.pattern.rawValue); w.u16(a.durationSeconds)
    }

    private static func writeBody(_ body: ResponseBody, _ w: inout ByteWriter) {
        switch body {
        case .none:
            break
        case .hello(let i):
            w.u8(i.protocolVersion); w.u8(i.firmware.major); w.u8(i.firmware.minor); w.u8(i.firmware.patch)
            w.u8(i.sides); w.u8(i.piezoChannelsPerSide); w.u16(i.sampleRate); w.u16(i.capacitanceRateMilliHz)
            w.u32(i.features.rawValue); w.u32(i.bootCount); w.u64(i.tick)
            let serial = Array(i.serial.utf8.prefix(maxSerialLength))
            w.u8(UInt8(serial.count)); w.raw(serial)
            if let minor = i.protocolMinor { w.u8(minor) }
        case .pong(let nonce):
            w.raw(nonce)
        case .status(let s):
            w.u64(s.tick); w.u8(s.clockValid ? 1 : 0); w.i64(s.unixMillis); w.i16(s.utcOffsetMinutes)
            w.u32(s.uptimeSeconds); w.u32(s.bootCount); w.u8(s.streaming.rawValue); w.u8(s.powerMask)
            w.u8(s.alarmArmedMask); w.u8(s.alarmActiveMask); w.u32(s.framesDropped)
        case .clock(let c):
            w.u64(c.tick); w.i64(c.unixMillis); w.i16(c.utcOffsetMinutes)
        case .schedule(let r):
            w.u8(r.side.wireValue)
            if let p = r.power {
                w.u8(p.days.rawValue); w.u8(UInt8(p.on.hour)); w.u8(UInt8(p.on.minute))
                w.u8(UInt8(p.off.hour)); w.u8(UInt8(p.off.minute)); w.u8(p.level)
            } else {
                w.raw([0, 0, 0, 0, 0, 0])
            }
            if let a = r.alarm {
                w.u8(a.days.rawValue); w.u8(UInt8(a.time.hour)); w.u8(UInt8(a.time.minute))
                w.u8(a.intensity); w.u8(a.pattern.rawValue); w.u16(a.durationSeconds)
            } else {
                w.raw([0, 0, 0, 0, 0, 0, 0])
            }
        }
    }

    // MARK: Decoding

    /// The message of type `type` in `payload`; unknown types come back as `.unknown`.
    static func message(type: UInt8, payload: UnsafeRawBufferPointer) -> Message {
        do {
            return try decode(type: type, payload)
        } catch {
            return .malformed(type: type, reason: error)
        }
    }

    private static func decode(type: UInt8, _ payload: UnsafeRawBufferPointer) throws(PayloadError) -> Message {
        var r = ByteReader(payload)
        if type & MessageType.responseBit != 0 {
            guard let request = MessageType(rawValue: type & ~MessageType.responseBit), request.isRequest else {
                return .unknown(type: type, payload: r.rest())
            }
            return .response(try response(to: request, &r))
        }
        guard let known = MessageType(rawValue: type) else {
            return .unknown(type: type, payload: r.rest())
        }
        switch known {
        case .hello:
            let minVersion = try r.u8(), maxVersion = try r.u8()
            return .hello(HelloRequest(minVersion: minVersion, maxVersion: maxVersion,
                                       maxMinor: r.remaining > 0 ? try r.u8() : nil))
        case .ping:
            let nonce = r.rest()
            guard nonce.count <= maxNonceLength else { throw .invalidValue(field: "nonce length") }
            return .ping(nonce: nonce)
        case .getStatus:
            return .getStatus
        case .setClock:
            let ms = try r.i64()
            let offset = try r.i16()
            guard (-720...840).contains(offset) else { throw .invalidValue(field: "utc_offset") }
            return .setClock(ClockSetting(unixMillis: ms, utcOffsetMinutes: offset))
        case .setPowerSchedule:
            let side = try readSide(&r)
            let days = try readDays(&r)
            return .setPowerSchedule(PowerSchedule(side: side, days: days, on: try readTime(&r, "on"),
                                                   off: try readTime(&r, "off"), level: try readPercent(&r, "level")))
        case .setAlarm:
            let side = try readSide(&r)
            return .setAlarm(try readAlarmFields(side: side, &r))
        case .clearAlarm:
            return .clearAlarm(side: try readSide(&r))
        case .snooze:
            return .snooze(side: try readSide(&r), seconds: try r.u16())
        case .startStream:
            return .startStream(StreamMask(rawValue: try r.u8()))
        case .stopStream:
            return .stopStream
        case .setPower:
            let side = try readSide(&r)
            let on = try r.u8()
            guard on <= 1 else { throw .invalidValue(field: "on") }
            return .setPower(PowerCommand(side: side, on: on == 1, level: try readPercent(&r, "level")))
        case .getSchedule:
            return .getSchedule(side: try readSide(&r))
        case .triggerAlarm:
            let side = try readSide(&r)
            let intensity = try readPercent(&r, "intensity")
            guard let pattern = AlarmPattern(rawValue: try r.u8()) else { throw .invalidValue(field: "pattern") }
            let duration = try r.u16()
            guard (1...3600).contains(duration) else { throw .invalidValue(field: "duration") }
            return .triggerAlarm(AlarmTrigger(side: side, intensity: intensity, pattern: pattern, durationSeconds: duration))
        case .piezo:
            let side = try readSide(&r)
            let channels = try r.u8()
            guard (1...8).contains(channels) else { throw .invalidValue(field: "channels") }
            let gain = try r.u16()
            let first = try r.u64()
            let count = Int(try r.u16())
            return .piezo(PiezoBlock(side: side, channels: channels, gain: gain, firstTick: first,
                                     samples: try r.samples(count * Int(channels))))
        case .capacitance:
            let side = try readSide(&r)
            let count = Int(try r.u8())
            let tick = try r.u64()
            return .capacitance(CapacitanceReading(side: side, tick: tick, values: try r.samples(count)))
        case .environment:
            let tick = try r.u64()
            let left = try r.i16(), right = try r.i16(), ambient = try r.i16(), humidity = try r.u16()
            func t(_ v: Int16) -> Int16? { v == temperatureAbsent ? nil : v }
            return .environment(EnvironmentReading(tick: tick, bedLeft: t(left), bedRight: t(right), ambient: t(ambient),
                                                   humidity: humidity == humidityAbsent ? nil : humidity))
        case .event:
            let tick = try r.u64()
            let kind = PodEvent.Kind(code: try r.u8())
            let sideByte = try r.u8()
            let side: BedSide?
            if sideByte == noSide { side = nil } else {
                guard let s = BedSide(wireValue: sideByte) else { throw .invalidValue(field: "side") }
                side = s
            }
            return .event(PodEvent(tick: tick, kind: kind, side: side, argument: try r.u16()))
        case .log:
            let tick = try r.u64()
            let level = try r.u8()
            return .log(LogLine(tick: tick, level: level, text: String(decoding: r.rest(), as: UTF8.self)))
        }
    }

    private static func response(to request: MessageType, _ r: inout ByteReader) throws(PayloadError) -> Response {
        let statusByte = try r.u8()
        // A status this receiver does not know is still a failure: report it as internal.
        let status = Status(rawValue: statusByte) ?? .internalError
        guard status == .ok else { return Response(request: request, status: status) }
        let body: ResponseBody
        switch request {
        case .hello:
            let version = try r.u8()
            let fw = FirmwareVersion(try r.u8(), try r.u8(), try r.u8())
            let sides = try r.u8(), channels = try r.u8()
            let rate = try r.u16(), capRate = try r.u16()
            let features = FeatureSet(rawValue: try r.u32())
            let boots = try r.u32()
            let tick = try r.u64()
            let length = Int(try r.u8())
            // §6.2: 1–32 bytes; an empty serial cannot identify a pod (the hub keys pods on it).
            guard (1...maxSerialLength).contains(length) else { throw .invalidValue(field: "serial length") }
            let serial = String(decoding: try r.bytes(length), as: UTF8.self)
            let minor: UInt8? = r.remaining > 0 ? try r.u8() : nil
            body = .hello(PodInfo(protocolVersion: version, firmware: fw, sides: sides, piezoChannelsPerSide: channels,
                                  sampleRate: rate, capacitanceRateMilliHz: capRate, features: features,
                                  bootCount: boots, tick: tick, serial: serial, protocolMinor: minor))
        case .ping:
            body = .pong(r.rest())
        case .getStatus:
            body = .status(PodStatus(tick: try r.u64(), clockValid: try r.u8() != 0, unixMillis: try r.i64(),
                                     utcOffsetMinutes: try r.i16(), uptimeSeconds: try r.u32(), bootCount: try r.u32(),
                                     streaming: StreamMask(rawValue: try r.u8()), powerMask: try r.u8(),
                                     alarmArmedMask: try r.u8(), alarmActiveMask: try r.u8(), framesDropped: try r.u32()))
        case .setClock:
            body = .clock(ClockAnchor(tick: try r.u64(), unixMillis: try r.i64(), utcOffsetMinutes: try r.i16()))
        case .getSchedule:
            let side = try readSide(&r)
            let powerDays = try readDays(&r)
            let on = try readTime(&r, "on"), off = try readTime(&r, "off")
            let level = try readPercent(&r, "level")
            let power = powerDays.isEmpty ? nil
                : PowerSchedule(side: side, days: powerDays, on: on, off: off, level: level)
            let alarmDays = try readDays(&r)
            let alarm = try readAlarmFields(side: side, days: alarmDays, &r)
            body = .schedule(ScheduleReport(side: side, power: power, alarm: alarmDays.isEmpty ? nil : alarm))
        default:
            body = .none
        }
        return Response(request: request, status: status, body: body)
    }

    private static func readAlarmFields(side: BedSide, days: WeekdayMask? = nil,
                                        _ r: inout ByteReader) throws(PayloadError) -> AlarmSetting {
        let mask: WeekdayMask
        if let days { mask = days } else { mask = try readDays(&r) }
        let time = try readTime(&r, "alarm")
        let intensity = try readPercent(&r, "intensity")
        guard let pattern = AlarmPattern(rawValue: try r.u8()) else { throw .invalidValue(field: "pattern") }
        let duration = try r.u16()
        // An empty (cleared) slot reports duration 0; a set alarm lasts 1…3600 s.
        guard duration <= 3600, duration > 0 || mask.isEmpty else { throw .invalidValue(field: "duration") }
        return AlarmSetting(side: side, days: mask, time: time, intensity: intensity, pattern: pattern,
                            durationSeconds: duration)
    }

    private static func readSide(_ r: inout ByteReader) throws(PayloadError) -> BedSide {
        guard let side = BedSide(wireValue: try r.u8()) else { throw .invalidValue(field: "side") }
        return side
    }

    private static func readDays(_ r: inout ByteReader) throws(PayloadError) -> WeekdayMask {
        let byte = try r.u8()
        // Bit 7 is reserved (§5): reject it rather than drop it.
        guard byte & 0x80 == 0 else { throw .invalidValue(field: "weekday mask") }
        return WeekdayMask(rawValue: byte)
    }

    private static func readTime(_ r: inout ByteReader, _ field: String) throws(PayloadError) -> TimeOfDay {
        let h = try r.u8(), m = try r.u8()
        guard let t = TimeOfDay(hour: Int(h), minute: Int(m)) else { throw .invalidValue(field: field) }
        return t
    }

    private static func readPercent(_ r: inout ByteReader, _ field: String) throws(PayloadError) -> UInt8 {
        let v = try r.u8()
        guard v <= 100 else { throw .invalidValue(field: field) }
        return v
    }
}
