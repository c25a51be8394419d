import Foundation
import PodProtocol
import SleepDomain

/// Decode and encode throughput of the wire codec on a realistic stream: per 100 ms a
/// 50-sample two-channel piezo block per side, capacitance at 2 Hz per side, environment
/// every 5 s — what a two-sided pod sends, with sample values of an occupied bed.
func runProtocolBench(options: BenchOptions) throws {
    var encoder = FrameEncoder()
    var messages: [Message] = []
    var state: UInt64 = 0x1234_5678
    func noise() -> Int32 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int32(truncatingIfNeeded: Int64(state >> 40) % 300_000) - 150_000
    }
    let seconds = 600  // ten minutes of pod output
    for tenth in 0..<(seconds * 10) {
        let tick = UInt64(tenth * 50)
        for side in BedSide.allCases {
            messages.append(.piezo(PiezoBlock(side: side, channels: 2, gain: 16, firstTick: tick,
                                              samples: (0..<100).map { _ in noise() })))
            if tenth % 5 == 0 {
                messages.append(.capacitance(CapacitanceReading(side: side, tick: tick,
                                                                values: [1_200 + noise() % 50, 1_180, 1_215])))
            }
        }
        if tenth % 50 == 0 {
            messages.append(.environment(EnvironmentReading(tick: tick, bedLeft: 3_150, bedRight: 3_020,
                                                            ambient: 2_125, humidity: 4_550)))
        }
    }
    var wire: [UInt8] = []
    for m in messages { try encoder.encode(m, appendingTo: &wire) }
    print(String(format: "protocol.stream: %d frames, %.2f MB (%d s of a two-sided pod, %.1f KB/s)",
                 messages.count, Double(wire.count) / 1e6, seconds, Double(wire.count) / Double(seconds) / 1e3))

    let clock = ContinuousClock()
    let rounds = options.quick ? 5 : 40
    // Decode in 4 KiB reads, as a serial port delivers them.
    var decoded = 0
    var best = Double.infinity
    for _ in 0..<rounds {
        let decoder = FrameDecoder()
        let elapsed = clock.measure {
            wire.withUnsafeBytes { all in
                var offset = 0
                while offset < all.count {
                    let end = min(offset + 4_096, all.count)
                    decoder.decode(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { _ in decoded += 1 }
                    offset = end
                }
            }
        }
        best = min(best, elapsed.seconds)
        precondition(decoder.counters.frames == UInt64(messages.count) && decoder.counters.crcErrors == 0)
    }
    print(String(format: "protocol.decode: %.0f MB/s, %.0f frames/s (best of %d rounds over %.1f MB, one core)",
                 Double(wire.count) / best / 1e6, Double(messages.count) / best, rounds, Double(wire.count) / 1e6))

    var encodeBest = Double.infinity
    for _ in 0..<rounds {
        var enc = FrameEncoder()
        var out: [UInt8] = []
        out.reserveCapacity(wire.count)
        let elapsed = clock.measure {
            for m in messages { try? enc.encode(m, appendingTo: &out) }
        }
        encodeBest = min(encodeBest, elapsed.seconds)
        precondition(out.count == wire.count)
    }
    print(String(format: "protocol.encode: %.0f MB/s, %.0f frames/s (best of %d rounds)",
                 Double(wire.count) / encodeBest / 1e6, Double(messages.count) / encodeBest, rounds))

    // The same frames onto one buffer that starts empty and is never drained, as a pod's
    // transmit queue grows while its hub lags: measures how the buffer grows, not only the
    // stuffing.
    var growingBest = Double.infinity
    for _ in 0..<rounds {
        var enc = FrameEncoder()
        var out: [UInt8] = []
        let elapsed = clock.measure {
            for m in messages { try? enc.encode(m, appendingTo: &out) }
        }
        growingBest = min(growingBest, elapsed.seconds)
        precondition(out.count == wire.count)
    }
    print(String(format: "protocol.encode_growing: %.0f MB/s, %.0f frames/s (best of %d rounds, onto one buffer grown from empty to %.1f MB)",
                 Double(wire.count) / growingBest / 1e6, Double(messages.count) / growingBest, rounds,
                 Double(wire.count) / 1e6))

    let crcInput = [UInt8](repeating: 0xA5, count: 1 << 20)
    var crcBest = Double.infinity
    var sink: UInt32 = 0
    for _ in 0..<rounds {
        let elapsed = clock.measure { sink = CRC32C.checksum(crcInput) }
        crcBest = min(crcBest, elapsed.seconds)
    }
    print(String(format: "protocol.crc32c: %.0f MB/s (slicing-by-8, 1 MiB buffer) [%08x]",
                 Double(crcInput.count) / crcBest / 1e6, sink))
}

extension Duration {
    /// This duration in seconds as a Double.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
