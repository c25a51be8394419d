import SleepAnalysis

/// What staging must reach on scored nights the model never saw (issue 14; docs/staging.md):
/// pooled κ4 and κ2, the mean total-sleep bias per night, and no night's total sleep off by
/// more than an hour. Judged the same way for Data/'s cross-validation and for `--held-out`.
package struct StagingTargets: Sendable, Equatable {
    package static let minimumKappa4 = 0.33
    package static let minimumKappa2 = 0.43
    /// The mean of the per-night total-sleep biases, in minutes, within ± this.
    package static let meanBiasMinutes = 20.0
    /// Every night's total-sleep bias, in minutes, within ± this.
    package static let nightBiasMinutes = 60.0

    package var kappa4: Double
    package var kappa2: Double
    package var meanBias: Double
    /// The nights whose total sleep is off by more than `nightBiasMinutes`, by index.
    package var nightsBeyond: [Int]

    /// The pooled figures of per-night evaluations (one per night).
    package init(_ nights: [StagingEvaluation]) {
        let pooled = StagingEvaluation.pooled(nights)
        kappa4 = pooled.kappa(.four)
        kappa2 = pooled.kappa(.two)
        let biases = nights.map(\.totalSleepBiasMinutes)
        meanBias = biases.isEmpty ? .nan : biases.reduce(0, +) / Double(biases.count)
        nightsBeyond = biases.indices.filter { abs(biases[$0]) > Self.nightBiasMinutes }
    }

    package var kappa4Met: Bool { kappa4 >= Self.minimumKappa4 }
    package var kappa2Met: Bool { kappa2 >= Self.minimumKappa2 }
    package var meanBiasMet: Bool { abs(meanBias) <= Self.meanBiasMinutes }
    package var everyNightMet: Bool { nightsBeyond.isEmpty }
    /// NaN figures (no scored epoch) meet nothing.
    package var allMet: Bool { kappa4Met && kappa2Met && meanBiasMet && everyNightMet }
}
