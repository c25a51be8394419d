@testable import Hub
import NightModel
import PodAnalysis
import PodDevice
import PodProtocol
import SleepDomain
import Synchronization
import Testing

/// The link's front runs streamed frames through the router on the link's reader and hands
/// the follower seconds, not frames, at the rate HELLO announced.
@Suite struct LinkSignalFrontTests {
    /// Everything the front forwarded, in order.
    final class Forwarded: Sendable {
        let inputs = Mutex<[PodLinkService.FollowerInput]>([])
        var seconds: [BedSide: [Double]] {
            inputs.withLock { all in
                var out: [BedSide: [Double]] = [:]
                for case .signal(let o) in all { out[o.side, default: []] += o.output.seconds.map(\.time) }
                return out
            }
        }
        var frames: Int { inputs.withLock { $0.filter { if case .link(.frame) = $0 { true } else { false } }.count } }
    }

    static let anchorMillis: Int64 = 1_750_000_000_000

    static func info(rate: UInt16) -> PodInfo {
        PodInfo(firmware: FirmwareVersion(1, 2, 3), sides: 2, piezoChannelsPerSide: 1, sampleRate: rate,
                capacitanceRateMilliHz: 2000, features: .all, bootCount: 1, tick: 900, serial: "POD-RATE-1")
    }

    static func frame(_ message: Message) -> LinkEvent {
        .frame(DecodedFrame(header: FrameHeader(sequence: 0, type: message.typeCode), message: message), receivedMicros: 0)
    }

    /// `seconds` of a night in bed as a pod at `rate` Hz streams it (the model's 500-Hz piezo
    /// taken at every 500/rate-th sample): a block per side every 0.1 s, a capacitance reading
    /// per side every 0.5 s, ticks at `rate` from `firstTick`.
    static func stream(rate: Int, seconds: Int, firstTick: UInt64) -> [Message] {
        let sleeper = SleeperProfile(getsIn: 0, getsOutBeforeEnd: 0, sleepOnsetLatency: 30, bathroomTrip: false)
        var simulator = NightSimulator(config: NightConfig(seed: 5, duration: Double(seconds) + 10,
                                                           sides: [SideConfig(sleeper: sleeper), .empty],
                                                           pumpVibration: false, channelsPerSide: 1))
        let step = 500 / rate, block = rate / 10
        var out: [Message] = []
        var tick = 0
        while tick < seconds * rate {
            for side in BedSide.allCases {
                let full = simulator.piezo(side: side.index, count: block * step)
                let samples = stride(from: 0, to: full.count, by: step).map { full[$0] }
                out.append(.piezo(PiezoBlock(side: side, channels: 1, gain: 16, firstTick: firstTick + UInt64(tick),
                                             samples: samples)))
            }
            tick += block
            if tick % (rate / 2) == 0 {
                for side in BedSide.allCases {
                    out.append(.capacitance(CapacitanceReading(
                        side: side, tick: firstTick + UInt64(tick),
                        values: simulator.capacitance(side: side.index, at: Double(tick) / Double(rate)))))
                }
            }
        }
        return out
    }

    @Test(arguments: [250, 500])
    func secondsFollowTheSampleRateHelloAnnounced(rate: Int) {
        let forwarded = Forwarded()
        let front = LinkSignalFront { input in forwarded.inputs.withLock { $0.append(input) } }
        front.take(.connected(Self.info(rate: UInt16(rate)), endpoint: "test"))
        front.take(.clockSet(ClockAnchor(tick: 1000, unixMillis: Self.anchorMillis, utcOffsetMinutes: 0)))
        for message in Self.stream(rate: rate, seconds: 120, firstTick: 1000) { front.take(Self.frame(message)) }

        // Two minutes of data are about 120 seconds per side (the front end keeps a few back for
        // lookahead), one second apart from the anchor's time: a router that took 250 Hz for
        // 500 Hz would make half as many, half as far apart.
        let t0 = Double(Self.anchorMillis / 1000)
        for side in BedSide.allCases {
            let times = forwarded.seconds[side] ?? []
            #expect(times.count >= 100 && times.count <= 121, "\(side): \(times.count) seconds at \(rate) Hz")
            #expect(times.first == t0)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 1 })
        }
        // Streamed frames stop at the front: the follower gets seconds, never a frame of them.
        #expect(forwarded.frames == 0)
    }

    @Test func aBootIsForwardedAndEndsTheAnchorForTheReadingsAfterIt() {
        let forwarded = Forwarded()
        let front = LinkSignalFront { input in forwarded.inputs.withLock { $0.append(input) } }
        front.take(.connected(Self.info(rate: 500), endpoint: "test"))
        front.take(.clockSet(ClockAnchor(tick: 1000, unixMillis: Self.anchorMillis, utcOffsetMinutes: 0)))
        let messages = Self.stream(rate: 500, seconds: 60, firstTick: 1000)
        for message in messages.prefix(messages.count / 2) { front.take(Self.frame(message)) }
        let before = forwarded.seconds[.left]?.count ?? 0
        #expect(before > 0)

        let boot = Message.event(PodEvent(tick: 0, kind: .boot, side: nil))
        front.take(Self.frame(boot))
        #expect(forwarded.frames == 1)
        // After a BOOT the pod's ticks restart: readings with no new anchor cannot be placed.
        for message in Self.stream(rate: 500, seconds: 30, firstTick: 0) { front.take(Self.frame(message)) }
        #expect(forwarded.seconds[.left]?.count ?? 0 <= before + 8)
    }
}
