import Foundation
import Testing
import NightModel
@testable import SleepAnalysis

/// The per-side signal front end on signals with known beats and breathing.
@Suite struct SignalFrontEndTests {
    static let varyingHR: @Sendable (Double) -> Double = { 64 + 4 * sin(2 * Double.pi * $0 / 90) }

    @Test func recoversKnownHeartAndBreathingRates() {
        let bed = SyntheticBed(duration: 150, heartRate: Self.varyingHR)
        let (out, _) = SyntheticBed.run(bed.samples())
        var withHR = 0
        for s in 30..<130 {
            let v = out.second(s)!
            #expect(v.present)
            if let hr = v.heartRate.value {
                withHR += 1
                #expect(abs(hr - bed.heartRate(from: Double(s) - 4, to: Double(s) + 5)) < 1.5)
            }
            #expect(abs((v.breathingRate.value ?? 0) - 15) < 0.6)
            #expect(v.movement < 2.5)
        }
        #expect(withHR >= 95)
        // Every true beat in the middle is found once, within 20 ms of its J-peak.
        let found = out.beats.map { $0 - SyntheticBed.epoch }.filter { $0 >= 30 && $0 < 130 }
        let truth = bed.beats.filter { $0 >= 30 && $0 < 130 }
        #expect(abs(found.count - truth.count) <= 2)
        let close = found.filter { f in truth.contains { abs($0 - f) < 0.02 } }
        #expect(close.count >= found.count - 2)
    }

    @Test func movementBurstIsFlaggedAndGated() {
        var bed = SyntheticBed(duration: 150, heartRate: Self.varyingHR)
        bed.extras.append { t in
            guard t >= 80, t < 85 else { return 0 }
            return 400_000 * sin(2 * Double.pi * 1.3 * t) + 250_000 * sin(2 * Double.pi * 4.1 * t + 1)
        }
        let (out, _) = SyntheticBed.run(bed.samples())
        let during = (80..<85).compactMap { out.second($0) }
        #expect(during.filter { $0.heartRate == .none(.movement) }.count >= 4)
        #expect(during.map(\.movement).max()! > 4)
        #expect(out.beats.filter { $0 - SyntheticBed.epoch >= 80.5 && $0 - SyntheticBed.epoch < 84.5 }.isEmpty)
        // Before and well after the burst the readings are right again.
        for s in [60, 70, 100, 120] {
            let hr = out.second(s)!.heartRate.value
            #expect(hr != nil)
            #expect(abs((hr ?? 0) - bed.heartRate(from: Double(s) - 4, to: Double(s) + 5)) < 1.5)
        }
    }

    /// Pump: 40 Hz with harmonics and a thump at each end, larger than the heartbeat.
    static let pump: @Sendable (Double) -> Double = { t in
        var v = 0.0
        if t >= 60 && t < 120 {
            let p = 2 * Double.pi * 40 * t
            v += 150_000 * (sin(p) + 0.5 * sin(2 * p + 0.7) + 0.25 * sin(3 * p + 1.9))
        }
        for edge in [60.0, 120.0] where t >= edge && t < edge + 1.5 {
            v += 150_000 * exp(-(t - edge) / 0.35) * sin(2 * Double.pi * 2.5 * (t - edge))
        }
        return v
    }

    @Test func pumpVibrationDoesNotCorruptReadings() {
        var bed = SyntheticBed(duration: 160, heartRate: Self.varyingHR)
        bed.extras.append(Self.pump)
        let (out, _) = SyntheticBed.run(bed.samples())
        var checked = 0
        for s in 65..<115 {
            let v = out.second(s)!
            #expect(v.movement < 2.5)
            if let hr = v.heartRate.value {
                checked += 1
                #expect(abs(hr - bed.heartRate(from: Double(s) - 4, to: Double(s) + 5)) < 1.5)
            }
            #expect(abs((v.breathingRate.value ?? 0) - 15) < 0.6)
        }
        #expect(checked >= 45)
    }

    @Test func pumpAloneOnAnEmptyBedIsNotPresence() {
        var bed = SyntheticBed(duration: 160)
        bed.beats = []
        bed.respirationAmplitude = 0
        bed.noise = 6_000
        bed.extras.append(Self.pump)
        let (out, _) = SyntheticBed.run(bed.samples(), occupied: false)
        #expect(!out.seconds.isEmpty)
        #expect(out.seconds.allSatisfy { !$0.present && $0.heartRate == .none(.absent) && $0.movement == 0 })
        #expect(out.beats.isEmpty)
    }

    @Test func emptySideNextToOccupiedHasNoPhantoms() {
        var sim = NightSimulator(config: NightConfig(seed: 21, duration: 900, sides: [SideConfig(), .empty],
                                                     noise: .normal, pumpVibration: true, channelsPerSide: 2))
        let clock = SampleClock(time: SyntheticBed.epoch)
        var outs: [FrontEndOutput] = []
        for side in 0..<2 {
            let piezo = sim.piezo(side: side, count: 900 * 500)
            let caps = stride(from: 0.0, to: 900, by: 0.5).map {
                CapacitanceSample(time: SyntheticBed.epoch + $0, values: sim.capacitance(side: side, at: $0))
            }
            outs.append(SignalFrontEnd.analyze(piezo: piezo, channels: 2, clock: clock, capacitance: caps))
        }
        let empty = outs[1]
        #expect(empty.seconds.count >= 895)
        #expect(empty.seconds.allSatisfy { !$0.present && $0.heartRate.value == nil && $0.breathingRate.value == nil })
        #expect(empty.beats.isEmpty)

        // The occupied side reads its sleeper: per-minute heart rate close to the truth.
        let truth = sim.truth.sides[0]
        var errors: [Double] = []
        for m in 0..<15 {
            let r = (m * 60)..<(m * 60 + 60)
            guard r.allSatisfy({ truth.present[$0] }) else { continue }
            let est = outs[0].seconds.filter { r.contains(Int($0.time - SyntheticBed.epoch)) }.compactMap(\.heartRate.value)
            guard est.count >= 20 else { continue }
            let t = r.compactMap { truth.heartRate[$0] }
            errors.append(abs(est.reduce(0, +) / Double(est.count) - t.reduce(0, +) / Double(t.count)))
        }
        #expect(errors.count >= 8)
        #expect(errors.reduce(0, +) / Double(errors.count) < 1)
        let presentAgree = outs[0].seconds.filter {
            let i = Int($0.time - SyntheticBed.epoch)
            return i < 900 && $0.present == truth.present[i]
        }.count
        #expect(presentAgree >= 880)
    }

    @Test(arguments: [25.0, 210.0])
    func impossibleHeartRatesAreRejected(bpm: Double) {
        let bed = SyntheticBed(duration: 90, heartRate: { _ in bpm })
        let (out, _) = SyntheticBed.run(bed.samples())
        let middle = (30..<80).compactMap { out.second($0) }
        #expect(middle.count == 50)
        #expect(middle.allSatisfy { $0.heartRate.value == nil })
        #expect(middle.filter { $0.heartRate == .none(.implausible) }.count >= 40)
        // Nothing outside physiological limits is ever emitted.
        #expect(out.seconds.allSatisfy { s in s.heartRate.value.map { (30...200).contains($0) } ?? true })
    }

    @Test func absentSideGivesReasonsNotNumbers() {
        let bed = SyntheticBed(duration: 60)
        let (out, _) = SyntheticBed.run(bed.samples(), occupied: false)
        // A strong body signal without capacitance evidence: presence needs a minute of it.
        for s in 0..<55 {
            let v = out.second(s)!
            #expect(!v.present)
            #expect(v.heartRate == .none(.absent) && v.breathingRate == .none(.absent))
        }
        #expect(out.beats.isEmpty)
    }

    @Test func firstSecondsInBedAreWarmingUp() {
        var bed = SyntheticBed(duration: 60)
        bed.start = 10
        let (out, _) = SyntheticBed.run(bed.samples(), occupiedFrom: 10)
        #expect(!out.second(9)!.present)
        let first = out.second(13)!
        #expect(first.present)
        // Breathing needs several breaths: "warming up", not "low quality" or a guess.
        #expect(first.breathingRate == .none(.warmingUp))
        #expect(first.heartRate == .none(.warmingUp) || abs((first.heartRate.value ?? 0) - 60) < 1)
        #expect(abs((out.second(45)!.breathingRate.value ?? 0) - 15) < 0.6)
    }

    @Test func chunkingDoesNotChangeTheResult() {
        let samples = SyntheticBed(duration: 60, heartRate: Self.varyingHR).samples()
        let (a, _) = SyntheticBed.run(samples, chunk: 37)
        let (b, _) = SyntheticBed.run(samples, chunk: 1_300)
        #expect(a == b)
        #expect(a.seconds.count == 60)
        // One second per Unix second, in order, from the pod's clock (not the wall clock).
        #expect(a.seconds.map(\.time) == (0..<60).map { SyntheticBed.epoch + Double($0) })
    }

    @Test func badInputIsCountedAndSkipped() {
        var fe = SignalFrontEnd()
        let clock = SampleClock(sampleIndex: 1_000, time: SyntheticBed.epoch + 0.5)
        let samples = SyntheticBed(duration: 20).samples()
        _ = fe.pushPiezo([1, 2, 3], channels: 0, firstSampleIndex: 1_000, clock: clock)
        _ = fe.pushPiezo(Array(samples[0..<5_001]), channels: 2, firstSampleIndex: 1_000, clock: clock)
        #expect(fe.counters.partialFrames == 4)
        // Repeated samples are dropped, a short gap bridged, a long gap restarts the filters.
        _ = fe.pushPiezo(Array(samples[0..<200]), channels: 1, firstSampleIndex: 3_400, clock: clock)
        #expect(fe.counters.overlappingSamples == 100)
        _ = fe.pushPiezo(Array(samples[0..<200]), channels: 1, firstSampleIndex: 3_610, clock: clock)
        #expect(fe.counters.bridgedGaps == 1)
        _ = fe.pushPiezo(Array(samples[0..<2_000]), channels: 1, firstSampleIndex: 5_000, clock: clock)
        #expect(fe.counters.resets == 1)
        fe.pushCapacitance([], at: SyntheticBed.epoch)
        fe.pushCapacitance([1, 2, 3], at: .nan)
        #expect(fe.counters.rejectedCapacitance == 2)
        let rest = fe.finish()
        #expect(rest.seconds.first.map { $0.time >= SyntheticBed.epoch } ?? false)
        #expect(rest.seconds.allSatisfy { $0.time == $0.time.rounded() })
    }
}
