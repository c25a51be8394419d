import Foundation
import SleepDomain

/// A labelled night for training: model features (nil = not measured) and the
/// technician's stages (nil for epochs that are unscored or outside the scored period).
package struct LabelledNight: Sendable {
    package var features: [[Double?]]
    package var stages: [SleepStage?]
    package init(features: [[Double?]], stages: [SleepStage?]) {
        self.features = features; self.stages = stages
    }
}

/// Hidden Markov model over the four stages with Gaussian emissions that share one
/// covariance matrix (linear discriminant emissions), over features that may be missing.
///
/// Shared covariance keeps the parameter count small (4 means × 5 features + 15
/// covariances + 12 free transitions) so the model does not memorise the training nights.
/// A feature missing in an epoch is marginalised: the Gaussian of the features that are
/// there (the sub-covariance) is used, which is exact for a Gaussian and lets one model
/// stage beats without movement (slpdb) and heart rate with movement (sleep-accel).
/// `emissionWeight` < 1 tempers the emission log-likelihoods: neighbouring epochs share
/// overlapping windows, so treating them as independent evidence would make the model
/// overconfident and the transitions powerless.
package struct StagingModel: Sendable, Codable, Hashable {
    /// Class means, `[stage][feature]`, stages in `SleepStage.allCases` order.
    package var means: [[Double]]
    /// Shared (pooled within-class) covariance; a pair never measured together has 0.
    package var covariance: [[Double]]
    /// Whether the training data held each feature at all; an untrained feature is ignored.
    package var trained: [Bool]
    /// `transitions[from][to]`, rows sum to 1.
    package var transitions: [[Double]]
    /// Stage shares in the training epochs: the distribution of the first epoch.
    package var initial: [Double]
    package var emissionWeight: Double

    package static let defaultEmissionWeight = 0.5
    /// Pseudo-count added to every transition so unseen ones keep a small probability.
    package static let transitionPseudoCount = 0.5
    /// Ridge added to the covariance diagonal for numerical stability.
    package static let covarianceRidge = 1e-3

    package init(means: [[Double]], covariance: [[Double]], trained: [Bool], transitions: [[Double]],
                initial: [Double], emissionWeight: Double) {
        self.means = means; self.covariance = covariance; self.trained = trained
        self.transitions = transitions; self.initial = initial; self.emissionWeight = emissionWeight
    }

    package enum FitError: Error, CustomStringConvertible, Equatable {
        case missingStage(SleepStage)
        package var description: String {
            switch self {
            case .missingStage(let s): "no training epoch is labelled \(s.rawValue)"
            }
        }
    }

    /// Deterministic maximum-likelihood fit: class means and pooled covariance over the
    /// epochs where each feature (pair) was measured, counted transitions between
    /// consecutive labelled epochs. Features in `leavingOut` are not trained (ignored when
    /// staging), as a feature the nights never measured.
    package static func fit(_ nights: [LabelledNight], emissionWeight: Double = defaultEmissionWeight,
                            leavingOut: Set<Int> = []) throws -> StagingModel {
        let k = SleepStage.allCases.count
        let d = nights.lazy.compactMap { $0.features.first?.count }.first ?? StagingFeatures.count
        var sums = [[Double]](repeating: [Double](repeating: 0, count: d), count: k)
        var seen = [[Double]](repeating: [Double](repeating: 0, count: d), count: k)
        var counts = [Double](repeating: 0, count: k)
        var trans = [[Double]](repeating: [Double](repeating: transitionPseudoCount, count: k), count: k)
        for night in nights {
            for (i, s) in night.stages.enumerated() {
                guard let s, i < night.features.count else { continue }
                let c = s.index
                counts[c] += 1
                for j in 0..<d { if let x = night.features[i][j] { sums[c][j] += x; seen[c][j] += 1 } }
                if i > 0, let p = night.stages[i - 1] { trans[p.index][c] += 1 }
            }
        }
        for stage in SleepStage.allCases where counts[stage.index] == 0 { throw FitError.missingStage(stage) }
        let trained = (0..<d).map { j in !leavingOut.contains(j) && (0..<k).allSatisfy { seen[$0][j] > 0 } }
        let means = (0..<k).map { c in (0..<d).map { j in trained[j] ? sums[c][j] / seen[c][j] : 0 } }
        var cov = [[Double]](repeating: [Double](repeating: 0, count: d), count: d)
        var pairs = cov
        for night in nights {
            for (i, s) in night.stages.enumerated() {
                guard let s, i < night.features.count else { continue }
                let r: [Double?] = (0..<d).map { j in
                    trained[j] ? night.features[i][j].map { $0 - means[s.index][j] } : nil
                }
                for a in 0..<d {
                    guard let ra = r[a] else { continue }
                    for b in 0..<d { if let rb = r[b] { cov[a][b] += ra * rb; pairs[a][b] += 1 } }
                }
            }
        }
        for a in 0..<d {
            for b in 0..<d { cov[a][b] = pairs[a][b] > 1 ? cov[a][b] / (pairs[a][b] - 1) : 0 }
            cov[a][a] = trained[a] ? cov[a][a] + covarianceRidge : 1
        }
        let transitions = trans.map { row in row.map { $0 / row.reduce(0, +) } }
        let total = counts.reduce(0, +)
        return StagingModel(means: means, covariance: cov, trained: trained, transitions: transitions,
                            initial: counts.map { $0 / total }, emissionWeight: emissionWeight)
    }

    /// Inverse of the sub-covariance of the features in `mask` (bit j = feature j present),
    /// with the indices it covers. A singular block falls back to its diagonal.
    func inverse(mask: Int) -> (indices: [Int], inverse: [[Double]]) {
        let idx = (0..<covariance.count).filter { mask & (1 << $0) != 0 }
        let sub = idx.map { a in idx.map { b in covariance[a][b] } }
        if let inv = invert(sub) { return (idx, inv) }
        return (idx, idx.indices.map { a in idx.indices.map { b in a == b ? 1 / max(sub[a][a], 1e-9) : 0 } })
    }

    /// Tempered emission log-likelihood of each stage for one feature row (up to a constant
    /// shared by the stages), over the features present in the row.
    package func emissionLogLikelihoods(_ x: [Double?]) -> [Double] {
        var cache: [Int: (indices: [Int], inverse: [[Double]])] = [:]
        return emissionLogLikelihoods(x, cache: &cache)
    }

    func emissionLogLikelihoods(_ x: [Double?], cache: inout [Int: (indices: [Int], inverse: [[Double]])]) -> [Double] {
        var mask = 0
        for j in x.indices where j < trained.count && trained[j] && x[j].map({ $0.isFinite }) == true { mask |= 1 << j }
        guard mask != 0 else { return [Double](repeating: 0, count: means.count) }
        let block: (indices: [Int], inverse: [[Double]])
        if let b = cache[mask] { block = b } else { block = inverse(mask: mask); cache[mask] = block }
        return means.map { mu in
            let r = block.indices.map { x[$0]! - mu[$0] }
            var q = 0.0
            for a in r.indices { for b in r.indices { q += r[a] * block.inverse[a][b] * r[b] } }
            return -0.5 * q * emissionWeight
        }
    }

    /// Per-epoch stage probabilities. `isFinal` uses the whole night (forward–backward
    /// smoothing); otherwise each epoch sees only the epochs up to it (forward filtering),
    /// which is what a live, preliminary hypnogram can know.
    package func probabilities(_ features: [[Double?]], isFinal: Bool = true) -> [StageProbabilities] {
        probabilities(emissionLogLikelihoods: emissionLogLikelihoods(rows: features), isFinal: isFinal)
    }

    /// The tempered emission log-likelihoods of every row (`emissionLogLikelihoods(_:)` per row).
    package func emissionLogLikelihoods(rows features: [[Double?]]) -> [[Double]] {
        var cache: [Int: (indices: [Int], inverse: [[Double]])] = [:]
        return features.map { emissionLogLikelihoods($0, cache: &cache) }
    }

    /// Log-likelihood of a night given per-epoch emission log-likelihoods (forward algorithm),
    /// for comparing fits of one night's learnt emissions.
    package func logLikelihood(emissionLogLikelihoods l: [[Double]]) -> Double {
        forward(l).logLikelihood
    }

    /// The forward pass: each epoch's emissions scaled to their row's maximum (`e`, which the
    /// backward pass reuses), the filtered stage probabilities (`alpha`), and the night's
    /// log-likelihood (−∞ when some epoch no stage can explain).
    private func forward(_ l: [[Double]]) -> (e: [[Double]], alpha: [[Double]], logLikelihood: Double) {
        let n = l.count, k = means.count
        var shifts: [Double] = []
        let e: [[Double]] = l.map { row in
            let m = row.max() ?? 0
            shifts.append(m)
            return row.map { exp($0 - m) }
        }
        var alpha = [[Double]](repeating: [Double](repeating: 0, count: k), count: n)
        var logLikelihood = 0.0
        for i in 0..<n {
            for c in 0..<k {
                var s = 0.0
                if i == 0 { s = initial[c] } else { for p in 0..<k { s += alpha[i - 1][p] * transitions[p][c] } }
                alpha[i][c] = s * e[i][c]
            }
            let sum = alpha[i].reduce(0, +)
            logLikelihood += sum > 0 && sum.isFinite ? shifts[i] + log(sum) : -.infinity
            normalise(&alpha[i])
        }
        return (e, alpha, logLikelihood)
    }

    /// Stage probabilities from per-epoch emission log-likelihoods (`[epoch][stage]`), through
    /// the model's transitions: forward–backward when `isFinal`, forward filtering otherwise.
    /// Lets evidence the model was not fitted on (`NightBreathing`) join the fitted emissions.
    package func probabilities(emissionLogLikelihoods l: [[Double]], isFinal: Bool) -> [StageProbabilities] {
        let n = l.count, k = means.count
        guard n > 0 else { return [] }
        let (e, alpha, _) = forward(l)
        guard isFinal else { return alpha.map(StageProbabilities.init) }
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
    package var swiftSource: String {
        func row(_ r: [Double]) -> String { "[" + r.map { String($0) }.joined(separator: ", ") + "]" }
        func mat(_ m: [[Double]]) -> String { "[\n" + m.map { "            " + row($0) + "," }.joined(separator: "\n") + "\n        ]" }
        return """
        StagingModel(
                means: \(mat(means)),
                covariance: \(mat(covariance)),
                trained: [\(trained.map { String($0) }.joined(separator: ", "))],
                transitions: \(mat(transitions)),
                initial: \(row(initial)),
                emissionWeight: \(emissionWeight)
            )
        """
    }
}
