import NightModel
import PodProtocol

/// Maps the model's simulated seconds to Unix time exactly as the hub maps the pod's ticks:
/// through the clock anchors the hub set (the latest one applied at or before the moment;
/// before the first one, the first one extended backwards). With no anchor at all, model
/// time 0 is `nightStartUnix`.
public struct TruthClock: Sendable {
    public let clocks: [AppliedClock]
    public let nightStartUnix: Double

    public init(clocks: [AppliedClock], nightStartUnix: Double) {
        self.clocks = clocks.sorted { $0.modelTick < $1.modelTick }
        self.nightStartUnix = nightStartUnix
    }

    /// Unix seconds of the model moment `seconds` after the virtual pod started.
    public func unixTime(simulatedSeconds seconds: Double) -> Double {
        let tick = seconds * Double(Wire.tickRate)
        guard let first = clocks.first else { return nightStartUnix + seconds }
        var chosen = first
        for c in clocks where Double(c.modelTick) <= tick { chosen = c }
        return Double(chosen.anchor.unixMillis) / 1000 + (tick - Double(chosen.modelTick)) / Double(Wire.tickRate)
    }
}

/// The ground-truth files of a played night, as text (the I/O is the caller's).
///
/// - `truth.csv`: `t,side,present,stage,heart_rate,breathing_rate,movement`, one row per
///   simulated second and side (the columns of NightModel's `GroundTruth.csv`), `t` in
///   Unix seconds under `TruthClock`;
/// - `beats-left.csv`, `beats-right.csv`: `beat_time`, heartbeat times in Unix seconds;
/// - `clock.csv`: the anchors used, `simulated_seconds,boot_count,pod_tick,unix_ms,utc_offset_min`;
/// - `alarms.csv`: every alarm the sleepers heard, `t,side,stage,got_up_t` (stage empty for an
///   empty side, `got_up_t` empty when they stayed in bed), times in Unix seconds.
public enum TruthFiles {
    public static func render(truth: GroundTruth, playedSeconds: Int, clock: TruthClock) -> [(name: String, text: String)] {
        let n = min(max(playedSeconds, 0), truth.duration)
        var table = "t,side,present,stage,heart_rate,breathing_rate,movement\n"
        table.reserveCapacity(n * truth.sides.count * 48)
        for s in 0..<n {
            let t = fixed(clock.unixTime(simulatedSeconds: Double(s)), 3)
            for (k, side) in truth.sides.enumerated() where s < side.present.count {
                table += t + ",\(k),\(side.present[s] ? 1 : 0),\(side.stage[s]?.rawValue ?? ""),"
                if let hr = side.heartRate[s] { table += fixed(hr, 2) }
                table += ","
                if let br = side.breathingRate[s] { table += fixed(br, 2) }
                table += ",\(side.movement[s] ? 1 : 0)\n"
            }
        }
        var files: [(name: String, text: String)] = [("truth.csv", table)]
        let names = ["left", "right"]
        for (k, side) in truth.sides.enumerated() where k < names.count {
            var beats = "beat_time\n"
            for b in side.beatTimes where b < Double(n) {
                beats += fixed(clock.unixTime(simulatedSeconds: b), 4) + "\n"
            }
            files.append(("beats-\(names[k]).csv", beats))
        }
        var anchors = "simulated_seconds,boot_count,pod_tick,unix_ms,utc_offset_min\n"
        for c in clock.clocks {
            anchors += fixed(Double(c.modelTick) / Double(Wire.tickRate), 3)
                + ",\(c.bootCount),\(c.anchor.tick),\(c.anchor.unixMillis),\(c.anchor.utcOffsetMinutes)\n"
        }
        files.append(("clock.csv", anchors))
        var alarms = "t,side,stage,got_up_t\n"
        for r in truth.alarmReactions where r.heardAt < Double(n) {
            let stage = r.stage?.rawValue ?? ""
            alarms += fixed(clock.unixTime(simulatedSeconds: r.heardAt), 3) + ",\(r.side),\(stage),"
                + (r.gotUpAt.map { fixed(clock.unixTime(simulatedSeconds: $0), 3) } ?? "") + "\n"
        }
        files.append(("alarms.csv", alarms))
        return files
    }

    /// Fixed-point text without locale-dependent formatters.
    static func fixed(_ v: Double, _ decimals: Int) -> String {
        guard v.isFinite else { return "" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(v) * scale).rounded()
        let whole = (scaled / scale).rounded(.down)
        let frac = Int64(scaled - whole * scale)
        var s = (v < 0 && scaled != 0 ? "-" : "") + String(Int64(whole))
        if decimals > 0 {
            var f = String(frac)
            while f.count < decimals { f = "0" + f }
            s += "." + f
        }
        return s
    }
}
