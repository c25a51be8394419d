import Foundation
import SleepDomain

/// Breathing in the stager, learnt from each night itself (`NightLearning`).
///
/// A bed sensor measures breathing rate and its regularity, which physiology ties to the
/// stages (steady and slow in deep sleep, irregular and faster awake and in REM), but no
/// labelled night in Data/ has breathing, so the fitted model (`StagingModel`) cannot hold
/// its emissions. Each night teaches its own: per stage, the mean of each breathing feature
/// is shrunk towards the night's mean. No breathing number is learnt from anything but the
/// night being staged, and a night without breathing is staged by the fitted model alone.
///
/// Features per epoch: log(CV of the breathing rate + 0.005) and the breathing rate.
package enum NightBreathing {
    /// Added to the CV before the log, so a perfectly steady reading stays finite.
    static let variabilityOffset = 0.005

    /// The breathing features of an epoch, nil when either is not measured.
    package static func row(_ e: EpochFeatures) -> [Double]? {
        guard let rate = e.breathingRate, let cv = e.breathingVariability,
              rate.isFinite, cv.isFinite, cv >= 0 else { return nil }
        return [log(cv + variabilityOffset), rate]
    }

    /// The night-learnt signals of the epochs' breathing rows (`row(_:)`): each feature,
    /// shrunk to the night's mean.
    package static func signals(_ breathing: [[Double]?]) -> [NightLearning.Signal] {
        let d = breathing.lazy.compactMap { $0?.count }.first ?? 0
        return (0..<d).map { j in NightLearning.Signal(values: breathing.map { $0?[j] }) }
    }

    /// Stage probabilities of one night's in-bed epochs with its breathing learnt
    /// (`NightLearning.probabilities`): `rows` are the model's feature rows, `breathing`
    /// each epoch's `row(_:)`.
    package static func probabilities(model: StagingModel, rows: [[Double?]], breathing: [[Double]?],
                                      isFinal: Bool) -> [StageProbabilities] {
        NightLearning.probabilities(model: model, rows: rows, signals: signals(breathing), isFinal: isFinal)
    }
}
