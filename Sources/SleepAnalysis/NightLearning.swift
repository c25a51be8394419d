import Foundation
import SleepDomain

/// Emissions learnt from the night being staged, for signals no labelled night can teach.
///
/// The fitted model (`StagingModel`) holds only what the labelled nights in Data/ measured
/// in the units the night being staged measures it. Breathing is in no labelled night, and
/// the pod's movement index shares no unit with a watch's activity counts; fitting either on
/// our synthetic generators would be tuning to them. So each night teaches its own, by
/// expectation–maximisation on the night with the fitted model's part held fixed: the
/// fitted model stages the night, a Gaussian per stage is fitted for each signal to the
/// night's epochs weighted by those stage probabilities, and the night is staged again with
/// both, until the stages settle. A night without enough of a signal is staged without it.
///
/// Each stage's mean is shrunk by `priorEpochs` pseudo-epochs towards a prior: the night's
/// own mean (a stage the night barely shows keeps the night's level), or per-stage means
/// the signal is expected to have. One variance per signal is shared by the stages (as the
/// fitted model shares one covariance), and the log-likelihoods are tempered by the model's
/// emission weight. EM finds a local optimum that depends on its start, so when the caller
/// has the rows before a signal was taken out of them, the night is fitted from both
/// starts and keeps the fit under which it is likelier, judged by the parts the labelled
/// nights anchor (the fitted emissions and the signals with per-stage priors).
package enum NightLearning {
    /// One signal of the night: a value per in-bed epoch (nil = not measured), and where each
    /// stage's mean is shrunk to (`nil`: the night's mean; else one mean per stage).
    package struct Signal: Sendable {
        package var values: [Double?]
        package var prior: [Double]?
        package init(values: [Double?], prior: [Double]? = nil) { self.values = values; self.prior = prior }
    }

    /// Expectation–maximisation rounds: enough to converge (on the synthetic nights the
    /// stages stop changing by 10; 3 rounds stage them almost as well).
    package static let iterations = 10
    /// Pseudo-epochs at the prior added to every stage's mean.
    package static let priorEpochs = 20.0
    /// Fewest epochs with a signal for the night to learn it.
    package static let minimumEpochs = 50

    /// Stage probabilities of one night's in-bed epochs: `rows` are the fitted model's feature
    /// rows, `signals` the night-learnt ones (each a value per row). The signals' Gaussians are
    /// always fitted with forward–backward probabilities of the epochs given (a live night:
    /// the epochs so far); `isFinal` false still returns forward-filtered stages, so no epoch
    /// sees the future. The rows in `awake` are known to be awake (`SleepAnalyzer.bedEdgeRows`).
    /// `initialRows` (the rows before a signal was taken out of them for learning) give EM a
    /// second start; the night keeps whichever fit gives it the higher anchored likelihood.
    package static func probabilities(model: StagingModel, rows: [[Double?]], signals: [Signal],
                                      awake: Set<Int> = [], initialRows: [[Double?]]? = nil,
                                      isFinal: Bool) -> [StageProbabilities] {
        let asleep = SleepStage.allCases.filter { $0 != .awake }.map(\.index)
        func clamped(_ rows: [[Double?]]) -> [[Double]] {
            var l = model.emissionLogLikelihoods(rows: rows)
            for i in awake where l.indices.contains(i) { for c in asleep { l[i][c] = -.infinity } }
            return l
        }
        let base = clamped(rows)
        let learnt = signals.filter { $0.values.count == rows.count }.map(Measured.init)
            .filter { $0.x.count >= minimumEpochs }
        guard !learnt.isEmpty else { return model.probabilities(emissionLogLikelihoods: base, isFinal: isFinal) }
        let k = model.means.count
        /// Expectation–maximisation from the stages `start` gives: the last round's emissions,
        /// and the night's log-likelihood under the parts of them anchored in the labelled
        /// nights (the fitted emissions and the signals with a per-stage prior, their
        /// Gaussians' normalisers included), by which the starts are compared.
        func em(from start: [[Double]]) -> (combined: [[Double]], anchoredLogLikelihood: Double) {
            var p = model.probabilities(emissionLogLikelihoods: start, isFinal: true)
            var combined = base
            // The anchored signals' emissions of the last round, for the likelihood the starts
            // are compared by.
            var anchoredExtra: [[Double]] = []
            var normalisers = 0.0
            for round in 1...iterations {
                var extra = [[Double]](repeating: [Double](repeating: 0, count: k), count: rows.count)
                anchoredExtra = extra
                normalisers = 0
                for signal in learnt {
                    let (l, variance) = fit(signal, weights: p, stages: k, emissionWeight: model.emissionWeight)
                    for i in extra.indices { for c in 0..<k { extra[i][c] += l[i][c] } }
                    guard signal.signal.prior != nil else { continue }
                    normalisers -= 0.5 * model.emissionWeight * log(variance) * Double(signal.x.count)
                    for i in extra.indices { for c in 0..<k { anchoredExtra[i][c] += l[i][c] } }
                }
                combined = base.indices.map { i in (0..<k).map { base[i][$0] + extra[i][$0] } }
                // The last round's stages are the answer, smoothed or (live) filtered, below.
                if round < iterations { p = model.probabilities(emissionLogLikelihoods: combined, isFinal: true) }
            }
            let anchored = base.indices.map { i in (0..<k).map { base[i][$0] + anchoredExtra[i][$0] } }
            return (combined, model.logLikelihood(emissionLogLikelihoods: anchored) + normalisers)
        }
        // EM finds a local optimum, and where it starts decides which: from the fitted model
        // without the signals, or (`initialRows`) from the fitted model whole. The night keeps
        // the fit that explains it better by what the labelled nights anchor. A signal learnt
        // around the night's own mean (breathing) has no say in that: its stage Gaussians can
        // sit anywhere, and EM always fits them tighter by giving a level of the signal a stage
        // of its own, such as REM's irregular breathing to "awake" on a night with hardly any
        // waking (TextbookNight's sound sleeper: −78 min, compared by the whole likelihood).
        var best = em(from: base)
        if let initialRows {
            let other = em(from: clamped(initialRows))
            if other.anchoredLogLikelihood > best.anchoredLogLikelihood { best = other }
        }
        return model.probabilities(emissionLogLikelihoods: best.combined, isFinal: isFinal)
    }

    /// A signal's measured epochs, gathered once for every EM round.
    struct Measured {
        let signal: Signal
        /// Indices of the epochs with a finite value, and those values.
        let indices: [Int]
        let x: [Double]
        let nightMean: Double

        init(_ signal: Signal) {
            self.signal = signal
            indices = signal.values.indices.filter { signal.values[$0]?.isFinite == true }
            x = indices.map { signal.values[$0]! }
            nightMean = x.reduce(0, +) / Double(x.count)
        }
    }

    /// One maximisation step for one signal: stage means (shrunk to the prior) and a shared
    /// variance from the `weights`; returns each epoch's tempered log-likelihoods (0 where the
    /// signal is not measured).
    static func logLikelihoods(_ signal: Signal, weights: [StageProbabilities], stages k: Int,
                               emissionWeight: Double) -> [[Double]] {
        fit(Measured(signal), weights: weights, stages: k, emissionWeight: emissionWeight).logLikelihoods
    }

    /// `logLikelihoods` and the shared variance they were computed with.
    static func fit(_ m: Measured, weights: [StageProbabilities], stages k: Int,
                    emissionWeight: Double) -> (logLikelihoods: [[Double]], variance: Double) {
        var out = [[Double]](repeating: [Double](repeating: 0, count: k), count: m.signal.values.count)
        let x = m.x
        let w = m.indices.map { i in SleepStage.allCases.map { weights[i][$0] } }
        var mean = [Double](repeating: 0, count: k)
        for c in 0..<k {
            let prior = m.signal.prior.map { $0[c] } ?? m.nightMean
            var sum = priorEpochs * prior, weight = priorEpochs
            for (a, v) in x.enumerated() { sum += w[a][c] * v; weight += w[a][c] }
            mean[c] = sum / weight
        }
        var squares = 1e-6, total = 0.0
        for (a, v) in x.enumerated() {
            for c in 0..<k { squares += w[a][c] * (v - mean[c]) * (v - mean[c]); total += w[a][c] }
        }
        let variance = squares / max(total, 1e-9)
        for (a, i) in m.indices.enumerated() {
            for c in 0..<k { out[i][c] = -0.5 * (x[a] - mean[c]) * (x[a] - mean[c]) / variance * emissionWeight }
        }
        return (out, variance)
    }
}
