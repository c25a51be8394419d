import Foundation
import SleepDomain

/// A terminal rendering of a session: a four-row hypnogram and a metrics summary.
/// One column per few epochs of the session's span (the most frequent stage
/// in it); a column without data (the link was down) is blank in every row.
package enum HypnogramText {
    package static func render(_ session: SleepSession, width: Int = 96) -> String {
        guard let first = session.epochs.first?.start else { return "" }
        let n = max(1, Int(((session.end - first) / epochLength).rounded()))
        let per = max(1, Int((Double(n) / Double(max(1, width))).rounded(.up)))
        var counts = [[SleepStage: Int]](repeating: [:], count: (n + per - 1) / per)
        for e in session.epochs {
            let c = Int(((e.start - first) / epochLength).rounded()) / per
            guard c >= 0, c < counts.count else { continue }
            counts[c][e.stage, default: 0] += 1
        }
        let columns = counts.map { count in
            count.isEmpty ? nil : SleepStage.allCases.max { (count[$0] ?? 0) < (count[$1] ?? 0) }
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
        if m.unmeasuredMinutes > 0 {
            lines.append(String(format: "no data for %.0f min (the figures count the measured %.0f min)",
                                m.unmeasuredMinutes, m.timeInBedMinutes - m.unmeasuredMinutes))
        }
        lines.append("onset latency \(f(m.sleepOnsetLatencyMinutes, "min")), WASO \(f(m.wasoMinutes, "min")), awakenings \(m.awakenings)")
        lines.append(String(format: "awake %.0f min (%.0f%%), core %.0f min (%.0f%%), deep %.0f min (%.0f%%), rem %.0f min (%.0f%%)",
                            m.stageMinutes.awake, m.stageShares.awake * 100, m.stageMinutes.core, m.stageShares.core * 100,
                            m.stageMinutes.deep, m.stageShares.deep * 100, m.stageMinutes.rem, m.stageShares.rem * 100))
        lines.append("heart rate \(f(m.meanHeartRate, "bpm")), RMSSD \(f(m.meanRMSSD, "ms")), breathing \(f(m.meanBreathingRate, "/min"))")
        return lines.joined(separator: "\n")
    }
}
