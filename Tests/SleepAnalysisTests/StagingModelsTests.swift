import Foundation
import SleepDomain
import Testing
@testable import SleepAnalysis

/// Each kind of night is staged by the model for its kind, through the public inputs.
@Suite struct StagingModelsTests {
    /// A model that stages every epoch `stage`: certain first epoch, no transitions, no
    /// emission weight (the evidence counts for nothing).
    static func always(_ stage: SleepStage) -> StagingModel {
        let k = SleepStage.allCases.count
        let one = SleepStage.allCases.map { $0 == stage ? 1.0 : 0.0 }
        return StagingModel(means: [[Double]](repeating: [Double](repeating: 0, count: 5), count: k),
                            covariance: (0..<5).map { a in (0..<5).map { a == $0 ? 1 : 0 } },
                            trained: [Bool](repeating: true, count: 5),
                            transitions: (0..<k).map { a in (0..<k).map { a == $0 ? 1 : 0 } },
                            initial: one, emissionWeight: 0)
    }

    static let marked = StagingModels(pooled: always(.core), beats: always(.deep), heartRateAndMovement: always(.rem))

    static func stages(_ input: AnalysisInput) -> Set<SleepStage> {
        let analyzer = SleepAnalyzer(models: marked, timeZone: TimeZone(identifier: "UTC")!, learnsBreathing: false)
        return Set(analyzer.analyze(input).flatMap(\.epochs).filter { $0.features.present }.map(\.stage))
    }

    @Test func beatsWithoutMovementUseTheBeatsModel() throws {
        #expect(Self.stages(try LabelledNights.slpdb("slp03").input) == [.deep])
    }

    @Test func heartRateWithMovementUsesTheWatchModel() throws {
        #expect(Self.stages(try LabelledNights.sleepAccel("5498603").input) == [.rem])
    }

    @Test func heartRateAloneUsesThePooledModel() throws {
        #expect(Self.stages(try LabelledNights.sleepAccel("5498603", withMovement: false).input) == [.core])
    }

    @Test func beatsWithMovementUseThePooledModel() throws {
        // Beats with the per-second vitals of a bed sensor (movement included): the pod.
        let beats = try LabelledNights.slpdb("slp03").input.beats
        let first = beats.first!.rounded(.up), last = beats.last!.rounded(.down)
        let vitals = stride(from: first, through: last, by: 1).map { t in
            SecondVitals(time: t, heartRate: .value(60), breathingRate: .value(14),
                         movement: t.truncatingRemainder(dividingBy: 600) < 5 ? 3 : 0.1, present: true, quality: 1)
        }
        #expect(Self.stages(AnalysisInput(beats: beats, vitals: vitals)) == [.core])
    }

    @Test func aLiveNightWithBeatsIsStagedAsOneFromItsFirstMinutes() throws {
        // 20 minutes in bed with movement; beats only in the first 15 s: too few intervals for
        // an RMSSD, so the rows alone would look like a watch's night.
        let beats = try LabelledNights.slpdb("slp03").input.beats
        let first = beats.first!.rounded(.up)
        let vitals = stride(from: first, to: first + 1200, by: 1).map { t in
            SecondVitals(time: t, heartRate: .value(60), breathingRate: .value(14),
                         movement: t.truncatingRemainder(dividingBy: 300) < 5 ? 3 : 0.1, present: true, quality: 1)
        }
        let input = AnalysisInput(beats: beats.filter { $0 < first + 15 }, vitals: vitals)
        let analyzer = SleepAnalyzer(models: Self.marked, timeZone: TimeZone(identifier: "UTC")!, learnsBreathing: false)
        let live = analyzer.analyze(input, isFinal: false)
        #expect(live.count == 1)
        #expect(live.flatMap(\.epochs).allSatisfy { $0.features.rmssd == nil })
        #expect(Set(live.flatMap(\.epochs).filter { $0.features.present }.map(\.stage)) == [.core])
    }

    @Test func kindFollowsTheColumnsARowCarries() {
        let row: (Double?, Double?) -> [Double?] = { m, r in [m, 5, 0.5, r, 1] }
        #expect(StagingModels.Kind(rows: [row(nil, 0.1), row(nil, nil)]) == .beats)
        #expect(StagingModels.Kind(rows: [row(0, nil)]) == .heartRateAndMovement)
        #expect(StagingModels.Kind(rows: [row(0.2, nil), row(nil, 0.3)]) == .beatsAndMovement)
        #expect(StagingModels.Kind(rows: [row(nil, nil)]) == .heartRate)
        #expect(StagingModels.Kind(rows: []) == .heartRate)
        #expect(StagingModels.Kind(rows: [row(0, nil)], beatsSeen: true) == .beatsAndMovement)
        #expect(StagingModels.Kind(rows: [row(nil, nil)], beatsSeen: true) == .beats)
    }

    @Test func theBeatsModelLeavesHoursInBedOut() throws {
        let nights = try ["slp03", "slp04"].map { StagingTraining.labelledNight(try LabelledNights.slpdb($0)) }
        let hours = StagingFeatures.hoursInBedIndex
        #expect(StagingModels.leftOut(.beats).contains(hours))
        let beats = try StagingModels.fit(nights).beats
        let full = try StagingModel.fit(nights, emissionWeight: StagingModels.perKindEmissionWeight)
        #expect(!beats.trained[hours] && full.trained[hours])
        let early: [Double?] = [nil, 5, 0.5, 0.1, 0.5, 4]
        var late = early
        late[hours] = 8
        #expect(beats.emissionLogLikelihoods(early) == beats.emissionLogLikelihoods(late))
        #expect(full.emissionLogLikelihoods(early) != full.emissionLogLikelihoods(late))
    }

    @Test func eachModelReadsOneOfTheTwoHeartRates() throws {
        let measured = StagingFeatures.heartRateIndex, detrended = StagingFeatures.detrendedHeartRateIndex
        let shipped = StagingModels.default
        // The beats model: the night's trend removed; the others: the heart rate as measured.
        #expect(shipped.beats.trained[detrended] && !shipped.beats.trained[measured])
        for model in [shipped.pooled, shipped.heartRateAndMovement] {
            #expect(model.trained[measured] && !model.trained[detrended])
        }
        // So the beats model's evidence moves with the detrended rate only.
        let row: [Double?] = [nil, 5, 0.5, 0.1, 2, 5]
        var otherMeasured = row, otherDetrended = row
        otherMeasured[measured] = 15
        otherDetrended[detrended] = 15
        #expect(shipped.beats.emissionLogLikelihoods(row) == shipped.beats.emissionLogLikelihoods(otherMeasured))
        #expect(shipped.beats.emissionLogLikelihoods(row) != shipped.beats.emissionLogLikelihoods(otherDetrended))
        #expect(shipped.pooled.emissionLogLikelihoods(row) == shipped.pooled.emissionLogLikelihoods(otherDetrended))
    }

    @Test func aKindWithoutEveryStageFallsBackToThePooledModel() throws {
        // Only beats nights: no night of heart rate and movement to fit its model on.
        let nights = try ["slp03", "slp04"].map { StagingTraining.labelledNight(try LabelledNights.slpdb($0)) }
        let models = try StagingModels.fit(nights)
        #expect(models.heartRateAndMovement == models.pooled)
        #expect(models.beats != models.pooled)
        #expect(models.beats.emissionWeight == StagingModels.perKindEmissionWeight)
        #expect(models.pooled.emissionWeight == StagingModel.defaultEmissionWeight)
    }
}
