import Foundation
import SleepDomain
import SyntheticNights
import Testing
@testable import SleepAnalysis

/// The pod's movement learnt from the night itself (`NightMovement`): on a night with beats
/// and movement it leaves the fitted emission for a night-learnt one that starts from the
/// fitted stage means; other kinds of night, and a night with too little movement, keep the
/// fitted emission.
@Suite struct NightMovementTests {
    /// Rows of the model's five features, movement in every epoch: a quiet night with a
    /// movement every `period` epochs.
    static func rows(count: Int, period: Int = 7) -> [[Double?]] {
        (0..<count).map { i in [i % period == 0 ? 2.0 : 0.1, 5, 0.7, 0, Double(i) / 120] }
    }

    /// The likelihood the two EM starts are compared by is the HMM's: over every path of
    /// stages, the product of initial, transition and emission probabilities.
    @Test func theNightsLikelihoodSumsOverEveryPathOfStages() {
        let model = StagingModels.default.pooled
        let l: [[Double]] = [[-1, -2, -0.5, -3], [-0.2, -4, -1, -2], [-2, -1, -1.5, -0.1]]
        var brute = 0.0
        for a in 0..<4 { for b in 0..<4 { for c in 0..<4 {
            brute += model.initial[a] * exp(l[0][a]) * model.transitions[a][b] * exp(l[1][b])
                * model.transitions[b][c] * exp(l[2][c])
        } } }
        #expect(abs(model.logLikelihood(emissionLogLikelihoods: l) - log(brute)) < 1e-9)
        // An epoch no stage can explain makes the night impossible.
        #expect(model.logLikelihood(emissionLogLikelihoods: l + [[-.infinity, -.infinity, -.infinity, -.infinity]]) == -.infinity)
    }

    @Test func onlyThePodsKindLearnsItsMovement() {
        #expect(NightMovement.isLearnt(for: .beatsAndMovement))
        for kind in [StagingModels.Kind.beats, .heartRateAndMovement, .heartRate] {
            #expect(!NightMovement.isLearnt(for: kind), "\(kind)")
        }
    }

    @Test func movementLeavesTheFittedRowsAndStartsFromTheFittedMeans() throws {
        let model = StagingModels.default.pooled
        let rows = Self.rows(count: 200)
        let (fitted, signal) = NightMovement.split(rows: rows, model: model)
        let j = StagingFeatures.movementIndex
        #expect(fitted.allSatisfy { $0[j] == nil })
        // Every other feature is left as it was.
        for (a, b) in zip(fitted, rows) { #expect(a.indices.filter { $0 != j }.allSatisfy { a[$0] == b[$0] }) }
        let s = try #require(signal)
        #expect(s.prior == model.means.map { $0[j] })
        // Averaged over ±1 epoch: the epochs beside a movement carry a third of it.
        #expect(abs(s.values[7]! - (0.1 + 2.0 + 0.1) / 3) < 1e-12)
        #expect(abs(s.values[8]! - (2.0 + 0.1 + 0.1) / 3) < 1e-12)
        #expect(abs(s.values[10]! - 0.1) < 1e-12)
        #expect(abs(s.values[0]! - (2.0 + 0.1) / 2) < 1e-12)
    }

    @Test func tooLittleMovementOrAModelWithoutItKeepsTheRows() {
        let model = StagingModels.default.pooled
        var sparse = Self.rows(count: 200)
        for i in sparse.indices where i >= NightLearning.minimumEpochs - 1 { sparse[i][StagingFeatures.movementIndex] = nil }
        let kept = NightMovement.split(rows: sparse, model: model)
        #expect(kept.signal == nil)
        #expect(kept.rows == sparse)

        var untrained = model
        untrained.trained[StagingFeatures.movementIndex] = false
        let rows = Self.rows(count: 200)
        let alone = NightMovement.split(rows: rows, model: untrained)
        #expect(alone.signal == nil)
        #expect(alone.rows == rows)
    }

    @Test func aStageTheNightNeverShowsKeepsItsPriorMean() {
        // Every epoch certainly core: awake, deep and REM get no weight, so their means are the
        // prior's, and core's is pulled from its prior towards the night by 100 epochs to 20.
        let values: [Double?] = (0..<100).map { Double($0 % 2) }  // mean 0.5
        let prior = [3.0, 0.2, 0.0, 0.4]
        let weights = [StageProbabilities](repeating: .certain(.core), count: values.count)
        let l = NightLearning.logLikelihoods(NightLearning.Signal(values: values, prior: prior), weights: weights,
                                             stages: 4, emissionWeight: 1)
        // −½ (x − μ)² / σ²: the stage whose mean is nearer x has the higher log-likelihood, and
        // the differences between two epochs give each stage's mean back.
        let coreMean = (20 * 0.2 + 50.0) / 120
        func mean(_ c: Int) -> Double {
            // l(x=1) − l(x=0) = (2μ − 1) / (2σ²); with σ² from the same row, solve against core.
            let d = l[1][c] - l[0][c], dCore = l[1][1] - l[0][1]
            return 0.5 + (d / dCore) * (coreMean - 0.5)
        }
        #expect(abs(mean(0) - 3.0) < 1e-9)
        #expect(abs(mean(2) - 0.0) < 1e-9)
        #expect(abs(mean(3) - 0.4) < 1e-9)
        #expect(l[0][1] > l[0][0], "x = 0 is likelier core (mean \(coreMean)) than awake (mean 3)")
        // Without a prior per stage, the stages the night never shows keep the night's mean.
        let plain = NightLearning.logLikelihoods(NightLearning.Signal(values: values), weights: weights,
                                                 stages: 4, emissionWeight: 1)
        #expect(abs(plain[0][0] - plain[0][2]) < 1e-12 && abs(plain[0][0] - plain[0][3]) < 1e-12)
    }

    /// On a NightModel night (the virtual pod's physiology, through the real front end) the
    /// fitted watch movement misses awakenings the night's own movement finds. Measured
    /// (release bench, docs/staging.md): wake recall 0.66 against 0.53, TST bias −13.0
    /// against +13.5 min.
    @Test func theNightsOwnMovementFindsNightModelsAwakenings() {
        let night = SyntheticNight.nightModel(seed: 31)
        let utc = TimeZone(identifier: "UTC")!
        let learnt = night.evaluate(SleepAnalyzer(timeZone: utc))
        let fitted = night.evaluate(SleepAnalyzer(timeZone: utc, learnsMovement: false))
        let lines = SyntheticStagingTests.describe(learnt, "learnt") + "; " + SyntheticStagingTests.describe(fitted, "fitted")
        #expect(learnt.recall(.awake) > fitted.recall(.awake) + 0.1, "\(lines)")
        #expect(learnt.kappa(.two) >= fitted.kappa(.two), "\(lines)")
    }
}
