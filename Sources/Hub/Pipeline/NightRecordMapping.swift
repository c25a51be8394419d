import PodProtocol
import SleepAnalysis
import SleepStore
import SleepDomain

/// The analyzer's sessions in the store's plain records. The two modules do not know each
/// other (the store keeps no analysis types), so the hub is where one becomes the other.
enum NightRecordMapping {
    static func record(_ session: SleepSession, podSerial: String, side: BedSide) -> NightRecord {
        let m = session.metrics
        let epochs = session.epochs.map { e in
            EpochRecord(
                start: Int64(e.start.rounded()), stage: e.stage,
                probabilities: e.probabilities,
                heartRate: e.features.heartRate, hrvRMSSD: e.features.rmssd,
                breathingRate: e.features.breathingRate, movement: e.features.movement)
        }
        let metrics = NightMetrics(
            timeInBedMinutes: m.timeInBedMinutes, totalSleepMinutes: m.totalSleepMinutes,
            efficiency: m.sleepEfficiency * 100, onsetLatencyMinutes: m.sleepOnsetLatencyMinutes ?? m.timeInBedMinutes,
            wasoMinutes: m.wasoMinutes, awakenings: m.awakenings,
            awakeMinutes: m.stageMinutes.awake, coreMinutes: m.stageMinutes.core,
            deepMinutes: m.stageMinutes.deep, remMinutes: m.stageMinutes.rem,
            awakePercent: m.stageShares.awake * 100, corePercent: m.stageShares.core * 100,
            deepPercent: m.stageShares.deep * 100, remPercent: m.stageShares.rem * 100,
            meanHeartRate: m.meanHeartRate, meanHRV: m.meanRMSSD, meanBreathingRate: m.meanBreathingRate,
            score: m.score)
        return NightRecord(podSerial: podSerial, side: side, start: Int64(session.start.rounded()),
                           end: Int64(session.end.rounded()), epochs: epochs, metrics: metrics,
                           isFinal: session.isFinal)
    }
}
