/// What one side's owner chose for presence-driven power (docs/schedule.md §5). Each rule is on
/// or off on its own; the defaults are what most owners pick: the bed stays on while they are
/// still in it, goes off soon after they get up, and an empty side is not heated.
package struct PresencePowerSettings: Hashable, Sendable, Codable {
    /// Keep on while occupied: the pod's scheduled power-off is postponed while the side is
    /// occupied (a late weekend morning, a nap straight after the night).
    package var keepOnWhileOccupied = true
    /// After the scheduled off, the side goes off once it has been empty this long (1…120 min).
    package var keepOnAfterLeavingMinutes = 10
    /// Keep-on never holds the power more than this past the scheduled off (30…720 min).
    package var keepOnLimitMinutes = 240
    /// Off when the bed is left: once the sleeper has left (the session ended, or the side has
    /// been empty this long), the side goes off without waiting for the scheduled off.
    package var offWhenLeft = true
    /// How long the side must be empty before it is switched off (the hysteresis: a bathroom
    /// trip or a turn-over is shorter; 3…120 min).
    package var offWhenLeftMinutes = 10
    /// With off-when-left, a side nobody has lain in this long after its power-on is switched
    /// off (the partner is late or not coming; 0 = never; else 30…720 min). Someone lying down
    /// later switches it on again.
    package var noShowMinutes = 120
    /// Away: after this many nights in a row with nobody in the side, it is not warmed up
    /// until someone lies in it again (0 = never automatically; 1…30).
    package var awayAfterNights = 1
    /// Away set explicitly by the user: the side is not warmed up, whatever the nights say, until
    /// the user clears it (someone lying in it still gets power that night).
    package var away = false

    package init() {}

    package init(keepOnWhileOccupied: Bool = true, keepOnAfterLeavingMinutes: Int = 10, keepOnLimitMinutes: Int = 240,
                 offWhenLeft: Bool = true, offWhenLeftMinutes: Int = 10, noShowMinutes: Int = 120,
                 awayAfterNights: Int = 1, away: Bool = false) {
        self.keepOnWhileOccupied = keepOnWhileOccupied
        self.keepOnAfterLeavingMinutes = keepOnAfterLeavingMinutes
        self.keepOnLimitMinutes = keepOnLimitMinutes
        self.offWhenLeft = offWhenLeft
        self.offWhenLeftMinutes = offWhenLeftMinutes
        self.noShowMinutes = noShowMinutes
        self.awayAfterNights = awayAfterNights
        self.away = away
    }

    /// Every rule off: power follows the clock only.
    package static let clockOnly = PresencePowerSettings(keepOnWhileOccupied: false, offWhenLeft: false, noShowMinutes: 0,
                                                          awayAfterNights: 0)

    package func validate() throws(ScheduleError) {
        func check(_ name: String, _ value: Int, _ range: ClosedRange<Int>, zeroAllowed: Bool = false) throws(ScheduleError) {
            guard range.contains(value) || (zeroAllowed && value == 0) else {
                throw .invalidConfiguration("\(name) must be \(zeroAllowed ? "0 or " : "")in \(range.lowerBound)…\(range.upperBound), is \(value)")
            }
        }
        try check("keepOnAfterLeavingMinutes", keepOnAfterLeavingMinutes, 1...120)
        try check("keepOnLimitMinutes", keepOnLimitMinutes, 30...720)
        try check("offWhenLeftMinutes", offWhenLeftMinutes, 3...120)
        try check("noShowMinutes", noShowMinutes, 30...720, zeroAllowed: true)
        try check("awayAfterNights", awayAfterNights, 1...30, zeroAllowed: true)
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
