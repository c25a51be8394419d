/// A side of the bed, as seen lying in it: each side has its own sleeper, power stage and
/// vibration motor. The one name for a side everywhere (protocol, analysis, schedule, store);
/// its wire byte lives with the protocol (`PodProtocol`), its text here (`left`, `right`).
public enum BedSide: String, Sendable, Hashable, CaseIterable, Codable, Comparable, CustomStringConvertible {
    case left
    case right

    public var description: String { rawValue }

    /// Position in per-side arrays (and the pod's side number): left 0, right 1.
    public var index: Int { self == .left ? 0 : 1 }

    /// Left sorts before right.
    public static func < (lhs: BedSide, rhs: BedSide) -> Bool { lhs == .left && rhs == .right }
}
