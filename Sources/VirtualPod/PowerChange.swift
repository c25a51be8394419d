import SleepDomain

/// A change of a side's power on the virtual pod, and what made it: the hub's SET_POWER or the
/// pod's own schedule. The pod's power log, for tests to check what the bed actually did.
package struct PowerChange: Sendable, Hashable {
    package enum Cause: Sendable, Hashable {
        /// SET_POWER from the hub (logged as received, even when it changes nothing).
        case command
        /// The side's power schedule reached its `on` or `off`.
        case schedule
    }
    package var side: BedSide
    package var on: Bool
    package var level: Int
    /// The pod's tick (in the boot `bootCount`).
    package var tick: UInt64
    package var bootCount: UInt32
    /// The pod's UTC time then; nil when its clock was not valid.
    package var unixMillis: Int64?
    package var cause: Cause
}
