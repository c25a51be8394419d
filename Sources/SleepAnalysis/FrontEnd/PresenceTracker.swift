/// Decides, once per second, whether someone is in this side of the bed, from the
/// capacitance (a body raises it by several hundred counts over the empty-bed baseline)
/// and the piezo body-band level, each with enter/leave thresholds and hold times.
///
/// Capacitance leads: partner-side bleed and pump vibration shake the piezo but barely
/// move this side's capacitance, so neither makes phantom presence. The piezo alone
/// decides only when no capacitance arrives, or corrects an "empty" capacitance after a
/// long, strong body signal (a baseline learnt while someone was already in bed). A gap in the
/// capacitance readings keeps its last decision for a minute before the piezo takes over.
struct PresenceTracker: Sendable {
    private let config: FrontEndConfig
    private var baseline: Double?
    private var capOn = false
    private var capAbove = 0, capBelow = 0
    private var lastCap: (second: Int, value: Double)?
    private var piezoOn = false
    private var piezoAbove = 0, piezoBelow = 0
    /// Seconds of strong piezo signal while the capacitance reads empty.
    private var strongWhileEmpty = 0
    private var levels: [Double] = []
    private(set) var present = false
    /// The second presence last began.
    private(set) var since = 0

    init(config: FrontEndConfig) { self.config = config }

    /// Update with second `s`: the mean capacitance sum in it (nil if no reading) and the
    /// piezo body-band RMS (nil if no piezo data). Returns presence for the second.
    mutating func update(second s: Int, capacitance: Double?, piezoLevel: Double?) -> Bool {
        if let c = capacitance { lastCap = (s, c) }
        let capAge = lastCap.map { s - $0.second } ?? .max
        let cap = capAge <= config.capacitanceFreshSeconds ? lastCap?.value : nil
        let capacitanceHeld = capAge <= config.capacitanceHoldSeconds

        if let level = piezoLevel {
            levels.append(level)
            if levels.count > 10 { levels.removeFirst() }
        }
        let level = levels.isEmpty ? 0 : levels.sorted()[levels.count / 2]
        piezoAbove = level > config.piezoEnter ? piezoAbove + 1 : 0
        piezoBelow = level < config.piezoLeave ? piezoBelow + 1 : 0
        if !piezoOn && piezoAbove >= config.piezoEnterSeconds { piezoOn = true }
        if piezoOn && piezoBelow >= config.piezoLeaveSeconds { piezoOn = false }

        let now: Bool
        if let c = cap {
            if baseline == nil { baseline = c }
            let delta = c - baseline!
            capAbove = delta > config.capacitanceEnter ? capAbove + 1 : 0
            capBelow = delta < config.capacitanceLeave ? capBelow + 1 : 0
            if !capOn && capAbove >= config.capacitanceEnterSeconds { capOn = true }
            if capOn && capBelow >= config.capacitanceLeaveSeconds { capOn = false }
            // The empty-bed baseline follows slow drift while nobody is there, and drops at
            // once to a lower empty reading.
            if !capOn && delta < config.capacitanceLeave {
                baseline! += (c - baseline!) * (delta < 0 ? 0.2 : 1.0 / 600)
            }
            strongWhileEmpty = !capOn && level > config.piezoEnter ? strongWhileEmpty + 1 : 0
            if strongWhileEmpty >= config.piezoOverrideSeconds {
                // A long, strong body signal while the capacitance reads "empty": the
                // baseline was learnt with someone in bed. Re-learn it below the current
                // reading; when they get out, the reading drops and the baseline follows.
                baseline = c - 1.5 * config.capacitanceEnter
                capOn = true
                capBelow = 0
                strongWhileEmpty = 0
            }
            now = capOn
        } else if capacitanceHeld {
            // A gap in the readings: the side stays as the capacitance last said.
            now = capOn
        } else {
            now = piezoOn
        }
        if now && !present { since = s }
        present = now
        return now
    }
}
