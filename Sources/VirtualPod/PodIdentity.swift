import PodProtocol

/// What the virtual pod says it is in its HELLO reply. The serial is its identity: the hub
/// keys pods on it, so a "replugged" virtual pod keeps it.
package struct PodIdentity: Sendable, Hashable {
    /// ASCII, 1–32 characters (the USB serial number of a real pod).
    package var serial: String
    package var firmware: FirmwareVersion
    /// 1 or 2.
    package var sides: Int
    /// Piezo channels per side, 1 or 2.
    package var channelsPerSide: Int
    package var features: FeatureSet
    /// Piezo amplifier gain reported in every PIEZO block.
    package var gain: UInt16
    /// The boot count of the first boot; every reboot adds one.
    package var initialBootCount: UInt32

    package init(serial: String = "VPOD0001", firmware: FirmwareVersion = FirmwareVersion(1, 0, 0),
                sides: Int = 2, channelsPerSide: Int = 2, features: FeatureSet = .all,
                gain: UInt16 = 16, initialBootCount: UInt32 = 1) {
        self.serial = serial
        self.firmware = firmware
        self.sides = sides
        self.channelsPerSide = channelsPerSide
        self.features = features
        self.gain = gain
        self.initialBootCount = initialBootCount
    }

    /// A serial the protocol can carry: printable ASCII, 1–32 bytes.
    package static func isValidSerial(_ s: String) -> Bool { PodSerial.isValid(s) }
}
