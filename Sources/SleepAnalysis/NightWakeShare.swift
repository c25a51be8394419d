import SleepDomain

/// Each epoch's stage from the night's stage probabilities, with the night's wake decided
/// once for the whole night.
///
/// Taking every epoch's likeliest stage on its own calls an epoch awake only where waking
/// outweighs the three sleep stages together, so a night whose waking is uncertain epoch by
/// epoch (lying still and awake, a P(awake) of 0.3–0.45 for an hour) comes out with almost no
/// wake, and its total sleep too long (slp14 +101.5 min, slp01b +68.5, sleep-accel 1066528 +62).
/// The probabilities themselves say how much of the night was awake: their sum over the
/// epochs is the expected number of awake epochs. So the night gets that many awake epochs,
/// the ones most likely awake, and every other epoch its likeliest sleep stage. The share is
/// the night's own (issue 14: estimate each night's mix, the wake share above all, instead of
/// imposing one); nothing is fitted or tuned, and a night the model is sure of is staged
/// exactly as before (every P(awake) near 0 or 1 gives the same count). Measured on the
/// labelled nights in docs/staging.md ("Validation and figures").
package enum NightWakeShare {
    /// Stages for `probabilities`, in order. The awake epochs are the
    /// `round(sum of P(awake))` highest P(awake), earlier epochs first among equals.
    package static func stages(_ probabilities: [StageProbabilities]) -> [SleepStage] {
        let expected = probabilities.reduce(0.0) { $0 + $1.awake }
        let awakeCount = Int(expected.rounded())
        var stages = probabilities.map { $0.mostLikely(among: [.core, .deep, .rem]) }
        let mostAwake = probabilities.indices.sorted {
            probabilities[$0].awake > probabilities[$1].awake
                || (probabilities[$0].awake == probabilities[$1].awake && $0 < $1)
        }
        for i in mostAwake.prefix(awakeCount) { stages[i] = .awake }
        return stages
    }
}
