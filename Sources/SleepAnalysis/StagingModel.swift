import Foundation

/// The model inputs of one night: a few HRV features, each normalised within the night.
///
/// Chosen by leave-one-record-out forward selection on slpdb-dev (see docs/staging.md):
/// 0. log RMSSD (2.5-min window) — lower when awake, higher in light sleep;
/// 1. heart-rate SD (4.5-min window) — arousals and wake swing the heart rate, deep sleep is steady;
/// 2. log RMSSD smoothed over ±5 epochs (5.5 min) — the slower trend of 0;
/// 3. pNN50 smoothed over ±10 epochs (10.5 min) — vagal tone over the sleep cycle.
/// A missing value becomes 0, the night's median, so it pulls towards no stage.
public enum StagingFeatures {
    public static let names = ["log_rmssd", "hr_sd", "log_rmssd_smooth5", "pnn50_smooth10"]
    public static var count: Int { names.count }

    /// One row of `count` values per epoch.
    public static func matrix(_ epochs: [EpochFeatures]) -> [[Double]] {
        let logRMSSD = epochs.map { $0.rmssd.map { log($0 + 1) } }
        let columns: [[Double?]] = [
            NightNormalization.normalScores(logRMSSD),
            NightNormalization.normalScores(epochs.map(\.heartRateSD)),
            NightNormalization.normalScores(NightNormalization.smoothed(logRMSSD, halfWidth: 5)),
            NightNormalization.normalScores(NightNormalization.smoothed(epochs.map(\.pnn50), halfWidth: 10)),
        ]
        return (0..<epochs.count).map { i in columns.map { $0[i] ?? 0 } }
    }
}

/// A labelled night for training: model features and the technician's stages
/// (nil for epochs that are unscored or outside the scored period).
public struct LabelledNight: Sendable {
    public var features: [[Double]]
    public var stages: [SleepStage?]
    public init(features: [[Double]], stages: [SleepStage?]) {
        self.features = features; self.stages = stages
    }
}

/// Hidden Markov model over the four stages with Gaussian emissions that share one
/// covariance matrix (linear discriminant emissions).
///
/// Shared covariance keeps the parameter count small (4 means × 4 features + 10
/// covariances + 12 free transitions) so the model does not memorise nine nights.
/// `emissionWeight` < 1 tempers the emission log-likelihoods: neighbouring epochs share
/// overlapping HRV windows, so treating them as independent evidence would make the
/// model overconfident and the transitions powerless.
public struct StagingModel: Sendable, Codable, Hashable {
    /// Class means, `[stage][feature]`, stages in `SleepStage.allCases` order.
    public var means: [[Double]]
    /// Inverse of the shared (pooled within-class) covariance matrix.
    public var inverseCovariance: [[Double]]
    /// `transitions[from][to]`, rows sum to 1.
    public var transitions: [[Double]]
    /// Stage shares in the training epochs: the distribution of the first epoch.
    public var initial: [Double]
    public var emissionWeight: Double

    public static let defaultEmissionWeight = 0.5
    /// Pseudo-count added to every transition so unseen ones keep a small probability.
    public static let transitionPseudoCount = 0.5
    /// Ridge added to the covariance diagonal for numerical stability.
    public static let covarianceRidge = 1e-3

    public init(means: [[Double]], inverseCovariance: [[Double]], transitions: [[Double]],
                initial: [Double], emissionWeight: Double) {
        self.means = means; self.inverseCovariance = inverseCovariance
        self.transitions = transitions; self.initial = initial; self.emissionWeight = emissionWeight
    }

    public enum FitError: Error, CustomStringConvertible, Equatable {
        case missingStage(SleepStage)
        case singularCovariance
        public var description: String {
            switch self {
            case .missingStage(let s): "no training epoch is labelled \(s.rawValue)"
            case .singularCovariance: "the pooled feature covariance is singular"
            }
        }
    }

    /// Deterministic maximum-likelihood fit: class means, pooled covariance, counted
    /// transitions between consecutive labelled epochs.
    public static func fit(_ nights: [LabelledNight], emissionWeight: Double = defaultEmissionWeight) throws -> StagingModel {
        let k = SleepStage.allCases.count
        let d = nights.first?.features.first?.count ?? StagingFeatures.count
        var sums = [[Double]](repeating: [Double](repeating: 0, count: d), count: k)
        var counts = [Double](repeating: 0, count: k)
        var trans = [[Double]](repeating: [Double](repeating: transitionPseudoCount, count: k), count: k)
        for night in nights {
            for (i, s) in night.stages.enumerated() {
                guard let s, i < night.features.count else { continue }
                let c = s.index
                counts[c] += 1
                for j in 0..<d { sums[c][j] += night.features[i][j] }
                if i > 0, let p = night.stages[i - 1] { trans[p.index][c] += 1 }
            }
        }
        for stage in SleepStage.allCases where counts[stage.index] == 0 { throw FitError.missingStage(stage) }
        let means = (0..<k).map { c in sums[c].map { $0 / counts[c] } }
        var cov = [[Double]](repeating: [Double](repeating: 0, count: d), count: d)
        for night in nights {
            for (i, s) in night.stages.enumerated() {
                guard let s, i < night.features.count else { continue }
                let r = (0..<d).map { night.features[i][$0] - means[s.index][$0] }
                for a in 0..<d { for b in 0..<d { cov[a][b] += r[a] * r[b] } }
            }
        }
        let total = counts.reduce(0, +)
        for a in 0..<d {
            for b in 0..<d { cov[a][b] /= max(1, total - 1) }
            cov[a][a] += covarianceRidge
        }
        guard let inv = invert(cov) else { throw FitError.singularCovariance }
        let transitions = trans.map { row in row.map { $0 / row.reduce(0, +) } }
        return StagingModel(means: means, inverseCovariance: inv, transitions: transitions,
                            initial: counts.map { $0 / total }, emissionWeight: emissionWeight)
    }

    /// Tempered emission log-likelihood of each stage for one feature row (up to a constant).
    public func emissionLogLikelihoods(_ x: [Double]) -> [Double] {
        means.map { mu in
            let r = zip(x, mu).map { $0 - $1 }
            var q = 0.0
            for a in r.indices { for b in r.indices { q += r[a] * inverseCovariance[a][b] * r[b] } }
            return -0.5 * q * emissionWeight
        }
    }

    /// Per-epoch stage probabilities. `final` uses the whole night (forward–backward
    /// smoothing); otherwise each epoch sees only the epochs up to it (forward filtering),
    /// which is what a live, preliminary hypnogram can know.
    public func probabilities(_ features: [[Double]], final: Bool = true) -> [StageProbabilities] {
        let n = features.count, k = means.count
        guard n > 0 else { return [] }
        let e: [[Double]] = features.map { x in
            let l = emissionLogLikelihoods(x)
            let m = l.max() ?? 0
            return l.map { exp($0 - m) }
        }
        var alpha = [[Double]](repeating: [Double](repeating: 0, count: k), count: n)
        for c in 0..<k { alpha[0][c] = initial[c] * e[0][c] }
        normalise(&alpha[0])
        for i in 1..<n {
            for c in 0..<k {
                var s = 0.0
                for p in 0..<k { s += alpha[i - 1][p] * transitions[p][c] }
                alpha[i][c] = s * e[i][c]
            }
            normalise(&alpha[i])
        }
        guard final else { return alpha.map(StageProbabilities.init) }
        var beta = [Double](repeating: 1, count: k)
        var post = alpha
        for i in stride(from: n - 2, through: 0, by: -1) {
            var next = [Double](repeating: 0, count: k)
            for p in 0..<k {
                var s = 0.0
                for c in 0..<k { s += transitions[p][c] * e[i + 1][c] * beta[c] }
                next[p] = s
            }
            normalise(&next)
            beta = next
            for c in 0..<k { post[i][c] = alpha[i][c] * beta[c] }
            normalise(&post[i])
        }
        return post.map(StageProbabilities.init)
    }
}

extension SleepStage {
    /// Position in `allCases` (awake 0, core 1, deep 2, rem 3).
    var index: Int {
        switch self {
        case .awake: 0
        case .core: 1
        case .deep: 2
        case .rem: 3
        }
    }
}

private func normalise(_ v: inout [Double]) {
    let s = v.reduce(0, +)
    if s > 0, s.isFinite {
        for i in v.indices { v[i] /= s }
    } else {
        for i in v.indices { v[i] = 1 / Double(v.count) }
    }
}

/// Gauss–Jordan inverse with partial pivoting; nil when singular.
func invert(_ m: [[Double]]) -> [[Double]]? {
    let n = m.count
    var a = m
    var inv = (0..<n).map { i in (0..<n).map { $0 == i ? 1.0 : 0.0 } }
    for col in 0..<n {
        var pivot = col
        for r in col..<n where abs(a[r][col]) > abs(a[pivot][col]) { pivot = r }
        guard abs(a[pivot][col]) > 1e-12 else { return nil }
        a.swapAt(col, pivot); inv.swapAt(col, pivot)
        let p = a[col][col]
        for j in 0..<n { a[col][j] /= p; inv[col][j] /= p }
        for r in 0..<n where r != col {
            let f = a[r][col]
            if f == 0 { continue }
            for j in 0..<n { a[r][j] -= f * a[col][j]; inv[r][j] -= f * inv[col][j] }
        }
    }
    return inv
}

extension StagingModel {
    /// Swift source of this model as constants (how DefaultStagingModel.swift is made).
    public var swiftSource: String {
        func row(_ r: [Double]) -> String { "[" + r.map { String($0) }.joined(separator: ", ") + "]" }
        func mat(_ m: [[Double]]) -> String { "[\n" + m.map { "            " + row($0) + "," }.joined(separator: "\n") + "\n        ]" }
        return """
        StagingModel(
                means: \(mat(means)),
                inverseCovariance: \(mat(inverseCovariance)),
                transitions: \(mat(transitions)),
                initial: \(row(initial)),
                emissionWeight: \(emissionWeight)
            )
        """
    }
}
