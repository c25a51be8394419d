/// What a pod's serial can be: its USB serial number, which HELLO carries as 1–32 ASCII bytes
/// (firmware-protocol.md §1, §6.2); one a person types is printable, without spaces.
public enum PodSerial {
    public static let maxLength = 32

    public static func isValid(_ serial: String) -> Bool {
        let bytes = Array(serial.utf8)
        return (1...maxLength).contains(bytes.count) && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
