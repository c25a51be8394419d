import SleepDomain

extension PresencePowerSettings {
    package func validate() throws(ScheduleError) {
        func check(_ name: String, _ value: Int, _ range: ClosedRange<Int>, zeroAllowed: Bool = false) throws(ScheduleError) {
            guard range.contains(value) || (zeroAllowed && value == 0) else {
                throw .invalidConfiguration("\(name) must be \(zeroAllowed ? "0 or " : "")in \(range.lowerBound)…\(range.upperBound), is \(value)")
            }
        }
        try check("keepOnAfterLeavingMinutes", keepOnAfterLeavingMinutes, Self.keepOnAfterLeavingRange)
        try check("keepOnLimitMinutes", keepOnLimitMinutes, Self.keepOnLimitRange)
        try check("offWhenLeftMinutes", offWhenLeftMinutes, Self.offWhenLeftRange)
        try check("noShowMinutes", noShowMinutes, Self.noShowRange, zeroAllowed: true)
        try check("awayAfterNights", awayAfterNights, Self.awayAfterNightsRange, zeroAllowed: true)
    }
}

/// The safety limits every side's presence-driven power keeps (not per side: they bound what
/// the hub may do to the pod, whatever the owner chose).
package struct PresencePowerRules: Hashable, Sendable, Codable {
    /// Presence must last this long before it counts as someone lying down (a cat, sitting on
    /// the edge to dress); 5…300 s.
    package var arrivalSeconds: Double = 30
    /// At most this many power commands per side in any hour (4…60). An off is only sent with
    /// room left for the on that may follow it, so a sleeper coming back always gets power.
    package var maxCommandsPerHour = 6
    /// Keep-on moves the pod's own off this far at a time (10…120 min): if the hub stops, the
    /// pod still switches off at most this long after the hub last saw the sleeper.
    package var holdStepMinutes = 30
    /// Keep-on moves the off this long before it is reached (1…30 min), so the pod has it in time.
    package var holdLeadMinutes = 5

    package init() {}

    package func validate() throws(ScheduleError) {
        guard (5...300).contains(arrivalSeconds) else {
            throw .invalidConfiguration("arrivalSeconds must be in 5…300, is \(arrivalSeconds)")
        }
        guard (4...60).contains(maxCommandsPerHour) else {
            throw .invalidConfiguration("maxCommandsPerHour must be in 4…60, is \(maxCommandsPerHour)")
        }
        guard (10...120).contains(holdStepMinutes) else {
            throw .invalidConfiguration("holdStepMinutes must be in 10…120, is \(holdStepMinutes)")
        }
        guard (1...30).contains(holdLeadMinutes), holdLeadMinutes < holdStepMinutes else {
            throw .invalidConfiguration("holdLeadMinutes must be in 1…30 and below holdStepMinutes, is \(holdLeadMinutes)")
        }
    }
}
