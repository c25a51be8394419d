import Foundation
import SleepDomain

/// Breathing in the stager, learnt from each night itself.
///
/// A bed sensor measures breathing rate and its regularity, which physiology ties to the
/// stages (steady and slow in deep sleep, irregular and faster awake and in REM), but no
/// labelled night in Data/ has breathing, so the fitted model (`StagingModel`) cannot hold
/// its emissions, and fitting them on our synthetic generators would be tuning to them.
/// Instead each night teaches its own: the fitted model stages the night, a Gaussian per
/// stage for each breathing feature is fitted to the night's epochs weighted by those
/// stage probabilities (expectation–maximisation on the night, the fitted model's part
/// held fixed), and the night is staged again with both. No breathing number is learnt
/// from anything but the night being staged, and a night without breathing is staged by
/// the fitted model alone.
///
/// Features per epoch: log(CV of the breathing rate + 0.005) and the breathing rate.
/// Each stage's mean is shrunk towards the night's mean by `priorEpochs` (a stage the night
/// barely shows keeps the night's level); one variance per feature is shared by the stages
/// (as the fitted model shares one covariance), and the log-likelihoods are tempered by the
/// model's emission weight.
package enum NightBreathing {
    /// Expectation–maximisation rounds: enough to converge (on the synthetic nights the
    /// stages stop changing by 10; 3 rounds stage them almost as well).
    package static let iterations = 10
    /// Pseudo-epochs at the night's mean added to every stage's mean.
    package static let priorEpochs = 20.0
    /// Fewest epochs with breathing for the night to teach anything.
    package static let minimumEpochs = 50
    /// Added to the CV before the log, so a perfectly steady reading stays finite.
    static let variabilityOffset = 0.005

    /// The breathing features of an epoch, nil when either is not measured.
    package static func row(_ e: EpochFeatures) -> [Double]? {
        guard let rate = e.breathingRate, let cv = e.breathingVariability,
              rate.isFinite, cv.isFinite, cv >= 0 else { return nil }
        return [log(cv + variabilityOffset), rate]
    }

    /// Stage probabilities of one night's in-bed epochs: `rows` are the model's feature
    /// rows, `breathing` each epoch's `row(_:)`. The breathing Gaussians are always fitted with
    /// forward–backward probabilities of the epochs given (a live night: the epochs so
    /// far); `isFinal` false still returns forward-filtered stages, so no epoch sees the future.
    package static func probabilities(model: StagingModel, rows: [[Double?]], breathing: [[Double]?],
                                      isFinal: Bool) -> [StageProbabilities] {
        let base = model.emissionLogLikelihoods(rows: rows)
        let measured = breathing.indices.filter { breathing[$0] != nil }
        guard measured.count >= minimumEpochs, breathing.count == rows.count else {
            return model.probabilities(emissionLogLikelihoods: base, isFinal: isFinal)
        }
        let k = model.means.count
        var p = model.probabilities(emissionLogLikelihoods: base, isFinal: true)
        var combined = base
        for round in 1...iterations {
            let extra = logLikelihoods(breathing: breathing, measured: measured, weights: p, stages: k,
                                       emissionWeight: model.emissionWeight)
            combined = base.indices.map { i in (0..<k).map { base[i][$0] + extra[i][$0] } }
            // The last round's stages are the answer, smoothed or (live) filtered, below.
            if round < iterations { p = model.probabilities(emissionLogLikelihoods: combined, isFinal: true) }
        }
        return model.probabilities(emissionLogLikelihoods: combined, isFinal: isFinal)
    }

    /// One maximisation step: per feature, stage means (shrunk to the night's mean) and a
    /// shared variance from the `weights`; returns each epoch's tempered log-likelihoods
    /// (0 where breathing is not measured).
    static func logLikelihoods(breathing: [[Double]?], measured: [Int], weights: [StageProbabilities],
                               stages k: Int, emissionWeight: Double) -> [[Double]] {
        var out = [[Double]](repeating: [Double](repeating: 0, count: k), count: breathing.count)
        let d = breathing[measured[0]]!.count
        let w = measured.map { i in SleepStage.allCases.map { weights[i][$0] } }
        for j in 0..<d {
            let x = measured.map { breathing[$0]![j] }
            let nightMean = x.reduce(0, +) / Double(x.count)
            var mean = [Double](repeating: 0, count: k)
            for c in 0..<k {
                var sum = priorEpochs * nightMean, weight = priorEpochs
                for (a, v) in x.enumerated() { sum += w[a][c] * v; weight += w[a][c] }
                mean[c] = sum / weight
            }
            var squares = 1e-6, total = 0.0
            for (a, v) in x.enumerated() {
                for c in 0..<k { squares += w[a][c] * (v - mean[c]) * (v - mean[c]); total += w[a][c] }
            }
            let variance = squares / max(total, 1e-9)
            for (a, i) in measured.enumerated() {
                for c in 0..<k { out[i][c] += -0.5 * (x[a] - mean[c]) * (x[a] - mean[c]) / variance * emissionWeight }
            }
        }
        return out
    }
}
