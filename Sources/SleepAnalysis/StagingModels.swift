import Foundation

/// The fitted staging models, one per kind of night, and the rule that picks one.
///
/// A night's signals say which population it can be compared with. Beats without movement
/// are an ECG's (slpdb-dev: older apnoea patients, whose heart swings through the night
/// whatever the stage); heart rate with movement and no beats is a watch's (sleep-accel-dev:
/// healthy young sleepers). One model fitted on both learns a heart-rate shape of the stages
/// that is neither population's, so each of these kinds is staged by a model fitted on the
/// labelled nights of its own kind. A night with beats and movement (the pod) has no
/// labelled night of its kind and is staged by the model fitted on every night, which is
/// also the fallback for a night with neither (heart rate alone).
package struct StagingModels: Sendable, Hashable {
    /// Fitted on every labelled night; stages nights with beats and movement, or with neither.
    package var pooled: StagingModel
    /// Fitted on the labelled nights with beats and no movement; stages such nights.
    package var beats: StagingModel
    /// Fitted on the labelled nights with movement and no beats; stages such nights.
    package var heartRateAndMovement: StagingModel

    package init(pooled: StagingModel, beats: StagingModel, heartRateAndMovement: StagingModel) {
        self.pooled = pooled; self.beats = beats; self.heartRateAndMovement = heartRateAndMovement
    }

    /// One model for every kind of night.
    package init(single model: StagingModel) {
        self.init(pooled: model, beats: model, heartRateAndMovement: model)
    }

    /// Emission weight of the two per-kind models. Chosen by leave-one-subject-out within
    /// each kind, nested (docs/staging.md): a model fitted on one population is better
    /// calibrated on it, so its transitions can carry more and each epoch's evidence less.
    package static let perKindEmissionWeight = 0.2

    /// Which signals a night carries: movement, and beat-to-beat variability (RMSSD, or
    /// beats at all: `beatsSeen`, so a live night whose first minutes have beats but not yet
    /// the 30 intervals an RMSSD needs is the kind it will be, not a watch's).
    package enum Kind: String, Sendable, CaseIterable {
        case beatsAndMovement, beats, heartRateAndMovement, heartRate

        package init(rows: [[Double?]], beatsSeen: Bool = false) {
            let movement = rows.contains { $0[StagingFeatures.movementIndex] != nil }
            let beats = beatsSeen || rows.contains { $0[StagingFeatures.rmssdIndex] != nil }
            switch (beats, movement) {
            case (true, true): self = .beatsAndMovement
            case (true, false): self = .beats
            case (false, true): self = .heartRateAndMovement
            case (false, false): self = .heartRate
            }
        }
    }

    /// The model that stages a night of `kind`.
    package func model(for kind: Kind) -> StagingModel {
        switch kind {
        case .beats: beats
        case .heartRateAndMovement: heartRateAndMovement
        case .beatsAndMovement, .heartRate: pooled
        }
    }

    /// Features the model of a kind leaves out. Beats without movement are research ECG
    /// records, one in-bed span over the beats: their start is not bed entry (slpdb-dev's
    /// records start asleep or halfway through the night), so "hours in bed" there is hours
    /// since the record began, a time course that is not the night's. The beats model reads
    /// the heart rate with the night's trend removed, the others the heart rate as measured:
    /// each one of the two, so the shared covariance never holds two copies of one signal.
    package static func leftOut(_ kind: Kind) -> Set<Int> {
        kind == .beats ? [StagingFeatures.hoursInBedIndex, StagingFeatures.heartRateIndex]
            : [StagingFeatures.detrendedHeartRateIndex]
    }

    /// Fits the three models: the pooled one on every night, each per-kind one on the nights
    /// of its kind. A kind without a labelled night of every stage is staged by the pooled
    /// model.
    package static func fit(_ nights: [LabelledNight],
                            pooledEmissionWeight: Double = StagingModel.defaultEmissionWeight,
                            perKindEmissionWeight: Double = perKindEmissionWeight) throws -> StagingModels {
        let pooled = try StagingModel.fit(nights, emissionWeight: pooledEmissionWeight, leavingOut: leftOut(.beatsAndMovement))
        func ofKind(_ kind: Kind) -> StagingModel {
            let these = nights.filter { Kind(rows: $0.features) == kind }
            return (try? StagingModel.fit(these, emissionWeight: perKindEmissionWeight, leavingOut: leftOut(kind))) ?? pooled
        }
        return StagingModels(pooled: pooled, beats: ofKind(.beats), heartRateAndMovement: ofKind(.heartRateAndMovement))
    }

    /// Swift source of these models as constants (how DefaultStagingModel.swift is made).
    package var swiftSource: String {
        func nested(_ m: StagingModel) -> String { m.swiftSource.replacingOccurrences(of: "\n", with: "\n    ") }
        return """
        StagingModels(
                pooled: \(nested(pooled)),
                beats: \(nested(beats)),
                heartRateAndMovement: \(nested(heartRateAndMovement))
            )
        """
    }
}
