import Foundation

/// The pod's movement in the stager, learnt from each night itself (`NightLearning`).
///
/// The fitted model's movement emission was learnt from a watch's activity counts
/// (sleep-accel-dev), the only labelled movement in Data/. The pod's movement index is a
/// log power ratio of the piezo over its noise floor: `StagingFeatures` puts both on the
/// night's own scale, but how that scale spreads over the stages is the sensor's, not the
/// sleeper's (a wrist counts arm movement; the bed sees the whole body and the chest's
/// breathing). So on a night with beats and movement (the pod's kind, of which no night is
/// labelled) movement leaves the fitted emission and is learnt from the night, each stage's
/// mean shrunk towards the fitted model's mean for that stage: the watch's shape is where
/// the night starts, not what it is held to. EM also runs once from the stages the fitted
/// model gives with its watch movement emission, and the fit likelier under the fitted
/// emissions and the learnt movement is kept (`NightLearning.probabilities`): started without
/// movement, a night whose REM breathing lifts the movement index, or a night with hardly any
/// waking, can learn waking from its REM periods.
///
/// What is learnt is the movement averaged over ±1 epoch (the window heart rate is smoothed
/// over): a bed sensor sees a waking sleeper shift every few minutes, not in every epoch,
/// and a lone quiet epoch between two movements is still awake.
package enum NightMovement {
    /// Epochs each side of an epoch its learnt movement is averaged over.
    package static let halfWidth = 1

    /// Whether a night of `kind` learns its movement from itself.
    package static func isLearnt(for kind: StagingModels.Kind) -> Bool { kind == .beatsAndMovement }

    /// The night's rows without movement, for the fitted emission, and its movement as a
    /// night-learnt signal, when `model` was trained on movement and the night has enough of
    /// it to learn (`NightLearning.minimumEpochs`); otherwise the rows as they are and nil.
    package static func split(rows: [[Double?]], model: StagingModel) -> (rows: [[Double?]], signal: NightLearning.Signal?) {
        let j = StagingFeatures.movementIndex
        let values = rows.map { $0[j].flatMap { $0.isFinite ? $0 : nil } }
        guard model.trained.indices.contains(j), model.trained[j],
              values.lazy.filter({ $0 != nil }).count >= NightLearning.minimumEpochs else { return (rows, nil) }
        let fitted = rows.map { row in var r = row; r[j] = nil; return r }
        return (fitted, NightLearning.Signal(values: NightNormalization.smoothed(values, halfWidth: halfWidth),
                                             prior: model.means.map { $0[j] }))
    }
}
