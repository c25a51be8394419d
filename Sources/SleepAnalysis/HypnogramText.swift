import Foundation
import SleepDomain

/// A terminal rendering of a session: a four-row hypnogram and a metrics summary.
/// One column per `epochsPerColumn` epochs (the most frequent stage in it).
public enum HypnogramText {
    public static func render(_ session: SleepSession, width: Int = 96) -> String {
        let n = session.epochs.count
        guard n > 0 else { return "" }
        let per = max(1, Int((Double(n) / Double(max(1, width))).rounded(.up)))
        var columns: [SleepStage] = []
        var i = 0
        while i < n {
            let slice = session.epochs[i..<min(n, i + per)]
            var counts: [SleepStage: Int] = [:]
            for e in slice { counts[e.stage, default: 0] += 1 }
            columns.append(SleepStage.allCases.max { (counts[$0] ?? 0) < (counts[$1] ?? 0) } ?? .awake)
            i += per
        }
        var lines: [String] = []
        for (stage, label) in [(SleepStage.awake, "awake"), (.rem, "rem  "), (.core, "core "), (.deep, "deep ")] {
            lines.append(label + " |" + String(columns.map { $0 == stage ? "█" : " " }) + "|")
        }
        lines.append("       one column = \(Double(per) * epochLength / 60) min")
        let m = session.metrics
        func f(_ v: Double?, _ unit: String) -> String { v.map { String(format: "%.1f %@", $0, unit) } ?? "—" }
        lines.append(String(format: "in bed %.0f min, asleep %.0f min, efficiency %.0f%%, score %d",
                            m.timeInBedMinutes, m.totalSleepMinutes, m.sleepEfficiency * 100, m.score))
        lines.append("onset latency \(f(m.sleepOnsetLatencyMinutes, "min")), WASO \(f(m.wasoMinutes, "min")), awakenings \(m.awakenings)")
        lines.append(String(format: "awake %.0f min (%.0f%%), core %.0f min (%.0f%%), deep %.0f min (%.0f%%), rem %.0f min (%.0f%%)",
                            m.stageMinutes.awake, m.stageShares.awake * 100, m.stageMinutes.core, m.stageShares.core * 100,
                            m.stageMinutes.deep, m.stageShares.deep * 100, m.stageMinutes.rem, m.stageShares.rem * 100))
        lines.append("heart rate \(f(m.meanHeartRate, "bpm")), RMSSD \(f(m.meanRMSSD, "ms")), breathing \(f(m.meanBreathingRate, "/min"))")
        return lines.joined(separator: "\n")
    }
}
