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

    /// What each minute and night count may be (`validate()`; the API's and Home Assistant's
    /// limits). `noShowMinutes` and `awayAfterNights` may also be 0 (never).
    package static let keepOnAfterLeavingRange = 1...120
    package static let keepOnLimitRange = 30...720
    package static let offWhenLeftRange = 3...120
    package static let noShowRange = 30...720
    package static let awayAfterNightsRange = 1...30

    /// Every rule off: power follows the clock only.
    package static let clockOnly = PresencePowerSettings(keepOnWhileOccupied: false, offWhenLeft: false, noShowMinutes: 0,
                                                          awayAfterNights: 0)
}
