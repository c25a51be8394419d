import Foundation
import Testing
@testable import SleepAnalysis

/// The analyzer on real PSG-scored nights (regression figures, not timings).
@Suite struct SlpdbTests {
    static let dir = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data/slpdb-dev")

    static func record(_ name: String) throws -> StagingTraining.Record {
        let b = dir.appendingPathComponent("\(name).beats.csv"), s = dir.appendingPathComponent("\(name).stages.csv")
        return StagingTraining.Record(
            name: name,
            beats: try InputFormats.parseBeats(String(contentsOf: b, encoding: .utf8), file: b.path).beats,
            reference: try InputFormats.parseStages(String(contentsOf: s, encoding: .utf8), file: s.path))
    }

    @Test func slp03WithTheShippedModel() throws {
        let r = try Self.record("slp03")
        let sessions = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!).analyze(beats: r.beats, vitals: [])
        #expect(sessions.count == 1)
        let e = StagingEvaluation(reference: r.reference, predicted: sessions)
        #expect(e.pairs.count == 720)
        // The shipped model saw this night (leave-one-out figures are in the next test).
        #expect(e.kappa(.two) >= 0.55)
        #expect(e.kappa(.four) >= 0.40)
        #expect(abs(e.totalSleepBiasMinutes) <= 30)
        for epoch in sessions[0].epochs {
            let p = epoch.probabilities
            #expect(abs(p.awake + p.core + p.deep + p.rem - 1) < 1e-9)
            #expect(epoch.stage == p.mostLikely)
        }
    }

    @Test func slp03LeftOutOfTraining() throws {
        // The leave-one-out fold of slp03: fit on the eight other records, stage slp03.
        let others = ["slp01a", "slp01b", "slp02a", "slp02b", "slp04", "slp14", "slp16", "slp67x"]
        let train = try others.map { StagingTraining.labelledNight(try Self.record($0)) }
        let model = try StagingModel.fit(train)
        let r = try Self.record("slp03")
        let e = StagingEvaluation(reference: r.reference,
                                  predicted: SleepAnalyzer(model: model, timeZone: TimeZone(identifier: "UTC")!)
                                      .analyze(beats: r.beats, vitals: []))
        // Measured: k2 0.636, k4 0.503, TST bias −12 min.
        #expect(e.kappa(.two) >= 0.55)
        #expect(e.kappa(.four) >= 0.42)
        #expect(abs(e.totalSleepBiasMinutes) <= 25)
    }

    @Test func preliminaryStagesCoverTheSameEpochs() throws {
        let r = try Self.record("slp67x")
        let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)
        let live = analyzer.analyze(AnalysisInput(beats: r.beats), final: false)
        let final = analyzer.analyze(AnalysisInput(beats: r.beats), final: true)
        #expect(live.map(\.epochs.count) == final.map(\.epochs.count))
        #expect(live.allSatisfy { !$0.final } && final.allSatisfy(\.final))
        #expect(StagingEvaluation(reference: r.reference, predicted: live).kappa(.two) > 0.2)
    }

    @Test func shippedModelIsTheFitOnAllNineRecords() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.dir.path)
            .filter { $0.hasSuffix(".beats.csv") }.map { String($0.dropLast(".beats.csv".count)) }.sorted()
        #expect(names.count == 9)
        let fitted = try StagingModel.fit(try names.map { StagingTraining.labelledNight(try Self.record($0)) })
        let shipped = StagingModel.default
        func close(_ a: [[Double]], _ b: [[Double]]) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy { x, y in x.count == y.count && zip(x, y).allSatisfy { abs($0 - $1) < 1e-9 } }
        }
        #expect(close(fitted.means, shipped.means), "regenerate DefaultStagingModel.swift:\n\(fitted.swiftSource)")
        #expect(close(fitted.inverseCovariance, shipped.inverseCovariance))
        #expect(close(fitted.transitions, shipped.transitions))
        #expect(close([fitted.initial], [shipped.initial]))
    }

    @Test func fitRefusesNightsWithoutAStage() {
        let night = LabelledNight(features: [[0, 0, 0, 0], [1, 1, 1, 1]], stages: [.awake, .core])
        #expect(throws: StagingModel.FitError.missingStage(.deep)) { try StagingModel.fit([night]) }
    }
}
