import Testing
@testable import NightModel
import SleepDomain

/// Behaviour of the night model the virtual pod plays and the analyzer is scored against.
@Suite struct NightModelTests {
    static let night = NightSimulator(config: NightConfig(seed: 3))

    @Test func sameSeedSameNightWhateverTheChunking() {
        var a = NightSimulator(config: NightConfig(seed: 42, duration: 1200))
        var b = NightSimulator(config: NightConfig(seed: 42, duration: 1200))
        // Skip to the night proper (someone is in bed by 2 minutes), then compare 10 s.
        _ = a.piezo(side: 0, count: 60_000)
        _ = b.piezo(side: 0, count: 60_000)
        let whole = a.piezo(side: 0, count: 5_000)
        var pieces: [Int32] = []
        for n in [1, 499, 1_000, 3_500] { pieces += b.piezo(side: 0, count: n) }
        #expect(whole == pieces)
        #expect(a.truth.sides[0].beatTimes == b.truth.sides[0].beatTimes)
        #expect(a.capacitance(side: 1, at: 300) == b.capacitance(side: 1, at: 300))

        var c = NightSimulator(config: NightConfig(seed: 43, duration: 1200))
        _ = c.piezo(side: 0, count: 60_000)
        #expect(c.piezo(side: 0, count: 5_000) != whole)
    }

    @Test func deepSleepEarlyAndREMLate() {
        var deepEarly = 0, deepLate = 0, remEarly = 0, remLate = 0
        for seed: UInt64 in 1...4 {
            let truth = NightSimulator(config: NightConfig(seed: seed)).truth
            for side in truth.sides {
                let n = side.stage.count
                for s in 0..<n {
                    let early = s < n / 3, late = s >= 2 * n / 3
                    switch side.stage[s] {
                    case .deep?: if early { deepEarly += 1 } else if late { deepLate += 1 }
                    case .rem?: if early { remEarly += 1 } else if late { remLate += 1 }
                    default: break
                    }
                }
            }
        }
        #expect(deepEarly > 3 * deepLate)
        #expect(remLate > 2 * remEarly)
    }

    @Test func nightHasCyclesLatencyAndAwakenings() {
        let side = Self.night.truth.sides[0]
        let firstIn = side.present.firstIndex(of: true)!
        let firstSleep = side.stage.firstIndex { $0 != nil && $0 != .awake }!
        #expect(firstSleep - firstIn >= 5 * 60)          // sleep-onset latency
        var deepRuns = 0, wakeRuns = 0
        for s in 1..<side.stage.count where side.stage[s] != side.stage[s - 1] {
            if side.stage[s] == .deep { deepRuns += 1 }
            if side.stage[s] == .awake && side.stage[s - 1] != nil { wakeRuns += 1 }
        }
        #expect(deepRuns >= 2)                           // several cycles with deep sleep
        #expect(wakeRuns >= 2)                           // brief awakenings
        #expect(side.stage.last! == nil)                 // out of bed at the end
    }

    @Test func ratesFollowTheStage() {
        var hr: [SleepStage: [Double]] = [:], br: [SleepStage: [Double]] = [:]
        for side in Self.night.truth.sides {
            for s in side.stage.indices {
                guard let st = side.stage[s] else {
                    #expect(side.heartRate[s] == nil)
                    continue
                }
                hr[st, default: []].append(side.heartRate[s]!)
                br[st, default: []].append(side.breathingRate[s]!)
            }
        }
        func mean(_ a: [Double]?) -> Double { a!.reduce(0, +) / Double(a!.count) }
        // Calibrated on slpdb-dev (docs/front-end.md): awake clearly above light sleep, REM
        // above it, deep sleep close to light sleep (not the textbook few bpm below it).
        #expect(mean(hr[.core]) < mean(hr[.rem]))
        #expect(mean(hr[.rem]) < mean(hr[.awake]))
        #expect(mean(hr[.awake]) > mean(hr[.core]) + 3)
        #expect(abs(mean(hr[.deep]) - mean(hr[.core])) < 3)
        #expect(mean(br[.deep]) < mean(br[.core]))
        #expect(mean(br[.core]) < mean(br[.rem]))
        #expect((45...80).contains(mean(hr[.core])))
        #expect((10...20).contains(mean(br[.core])))
    }

    /// The stage signatures the model was calibrated to (real PSG nights, slpdb-dev): light
    /// sleep has the most beat-to-beat variability (RMSSD), awake the least; deep sleep has
    /// the smallest slow heart-rate swings, REM the largest.
    @Test func beatToBeatVariabilityHasTheCalibratedStageSignatures() {
        var diffs: [SleepStage: [Double]] = [:]
        var minuteSteps: [SleepStage: [Double]] = [:]
        for side in Self.night.truth.sides {
            let b = side.beatTimes
            // Successive RR differences inside one stage (no stage change, no gap).
            if b.count >= 3 {
                for k in 2..<b.count {
                    let r1 = b[k - 1] - b[k - 2], r2 = b[k] - b[k - 1]
                    guard r1 < 2.5, r2 < 2.5,
                          let s0 = side.stage[Int(b[k - 2])], let s1 = side.stage[Int(b[k])], s0 == s1 else { continue }
                    diffs[s0, default: []].append(r2 - r1)
                }
            }
            // Minute-to-minute change of the mean heart rate inside one stage.
            var previous: (SleepStage, Double)? = nil
            for m in 0..<(side.stage.count / 60) {
                let secs = (m * 60)..<(m * 60 + 60)
                guard let st = side.stage[secs.lowerBound], secs.allSatisfy({ side.stage[$0] == st }) else { previous = nil; continue }
                let hr = secs.compactMap { side.heartRate[$0] }.reduce(0, +) / 60
                if let (ps, ph) = previous, ps == st { minuteSteps[st, default: []].append(abs(hr - ph)) }
                previous = (st, hr)
            }
        }
        func rmssd(_ s: SleepStage) -> Double {
            let d = diffs[s]!
            return (d.map { $0 * $0 }.reduce(0, +) / Double(d.count)).squareRoot()
        }
        func step(_ s: SleepStage) -> Double { minuteSteps[s]!.reduce(0, +) / Double(minuteSteps[s]!.count) }
        #expect(rmssd(.core) > 1.1 * rmssd(.deep))
        #expect(rmssd(.core) > 1.05 * rmssd(.rem))
        #expect(rmssd(.core) > 1.2 * rmssd(.awake))
        #expect((0.015...0.08).contains(rmssd(.core)))   // 15–80 ms: adult sleep RMSSD
        #expect(step(.deep) < 0.7 * step(.core))
        #expect(step(.rem) > step(.core))
    }

    @Test func beatsAgreeWithTheHeartRate() {
        let side = Self.night.truth.sides[0]
        // Over an in-bed hour, beats per minute from the beat list equal the mean true rate.
        let start = 2 * 3600, end = 3 * 3600
        let beats = side.beatTimes.filter { $0 >= Double(start) && $0 < Double(end) }.count
        let meanHR = (start..<end).compactMap { side.heartRate[$0] }.reduce(0, +) / 3600
        #expect(abs(Double(beats) / 60 - meanHR) < 0.2)
        // Beat-to-beat variability exists but stays physiological.
        // (Intervals across the bathroom trip are not heartbeats.)
        let rr = zip(side.beatTimes.dropFirst(), side.beatTimes).map { $0 - $1 }.filter { $0 < 30 }
        #expect(rr.allSatisfy { (0.3...2.0).contains($0) })
        #expect(Set(rr.prefix(100).map { ($0 * 1000).rounded() }).count > 20)
    }

    @Test func emptySideHasNoSleeperButFeelsThePartner() {
        var sim = NightSimulator(config: NightConfig(seed: 5, duration: 1800, sides: [SideConfig(), .empty],
                                                     pumpVibration: false, channelsPerSide: 1))
        let empty = sim.truth.sides[1]
        #expect(!empty.present.contains(true))
        #expect(empty.beatTimes.isEmpty)
        // At 20 minutes the left side is occupied: its swing is large, the empty side's is
        // a small coupled fraction plus noise.
        _ = sim.piezo(side: 0, count: 600_000)
        _ = sim.piezo(side: 1, count: 600_000)
        let occupied = sim.piezo(side: 0, count: 5_000).map(Double.init)
        let bleed = sim.piezo(side: 1, count: 5_000).map(Double.init)
        let ppOccupied = occupied.max()! - occupied.min()!, ppEmpty = bleed.max()! - bleed.min()!
        #expect(ppOccupied > 100_000)
        #expect(ppEmpty < 0.5 * ppOccupied)
        let capEmpty = sim.capacitance(side: 1, at: 1200).reduce(0) { $0 + Int($1) }
        let capFull = sim.capacitance(side: 0, at: 1200).reduce(0) { $0 + Int($1) }
        #expect(capFull - capEmpty > 800)
    }

    @Test func capacitanceAndTemperatureFollowPresence() {
        let sim = Self.night
        let side = sim.truth.sides[0]
        let outIdx = side.present.firstIndex(of: true)! - 60
        let inIdx = 4 * 3600
        #expect(side.present[inIdx] && !side.present[outIdx])
        let before = sim.capacitance(side: 0, at: Double(outIdx)).reduce(0) { $0 + Int($1) }
        let during = sim.capacitance(side: 0, at: Double(inIdx)).reduce(0) { $0 + Int($1) }
        #expect(during - before > 800)
        #expect(sim.capacitance(side: 0, at: 10).count == 3)
        let early = sim.environment(at: Double(outIdx)), late = sim.environment(at: Double(inIdx))
        #expect(late.bedTemperature[0] > early.bedTemperature[0] + 5)
        #expect((15...30).contains(late.ambientTemperature))
        #expect((20...80).contains(late.humidity))
    }

    @Test func pumpRunsInBurstsWhenEnabled() {
        let with = NightSimulator(config: NightConfig(seed: 9)).truth.pumpBursts
        let without = NightSimulator(config: NightConfig(seed: 9, pumpVibration: false)).truth.pumpBursts
        #expect(with.count >= 5)
        #expect(with.allSatisfy { (25...55).contains($0.frequency) && $0.duration >= 30 })
        #expect(without.isEmpty)
    }

    @Test func csvExportsHaveTheDocumentedColumns() {
        let sim = NightSimulator(config: NightConfig(seed: 2, duration: 600))
        let lines = sim.groundTruthCSV(timeOffset: 1_700_000_000).split(separator: "\n")
        #expect(lines.first == "t,side,present,stage,heart_rate,breathing_rate,movement")
        #expect(lines.count == 1 + 600 * 2)
        #expect(lines[1].hasPrefix("1700000000,0,"))
        let inBed = lines.first { $0.contains(",1,awake,") || $0.contains(",1,core,") }
        #expect(inBed.map { $0.split(separator: ",", omittingEmptySubsequences: false).count } == 7)
        let beats = sim.beatsCSV(side: 0).split(separator: "\n")
        #expect(beats.first == "beat_time")
        #expect(beats.count == 1 + sim.truth.sides[0].beatTimes.count)
        #expect(sim.beatsCSV(side: 7) == "beat_time\n")
    }

    @Test func badRequestsGiveEmptyAnswersNotCrashes() {
        var sim = NightSimulator(config: NightConfig(seed: 1, duration: 10, sides: [], channelsPerSide: 5))
        #expect(sim.config.channelsPerSide == 2)
        #expect(sim.piezo(side: 3, count: 10).isEmpty)
        #expect(sim.piezo(side: 0, count: -1).isEmpty)
        #expect(sim.piezo(side: 0, count: 10).count == 20)
        #expect(sim.capacitance(side: -1, at: 0).isEmpty)
        // Past the end of the night the bed is simply empty.
        _ = sim.piezo(side: 0, count: 6_000)
        #expect(sim.piezo(side: 0, count: 100).count == 200)
    }
}
