import Synchronization

/// What the dashboard shows about HomeKit: whether the bridge is paired and, while it is not,
/// its setup code, `X-HM://` payload and the payload's QR code. The HomeKit service writes it,
/// the API reads it; nil while HomeKit is off.
package final class HomeKitSetupBoard: Sendable {
    package struct Setup: Sendable, Codable, Equatable {
        package var paired: Bool
        /// `XXX-XX-XXX`, only while unpaired.
        package var setupCode: String?
        package var setupPayload: String?
        /// The payload's QR code: one string per row, `1` for a dark module.
        package var qr: [String]?

        package init(paired: Bool, setupCode: String?, setupPayload: String?, qr: [String]?) {
            self.paired = paired
            self.setupCode = setupCode
            self.setupPayload = setupPayload
            self.qr = qr
        }
    }

    private let value = Mutex<Setup?>(nil)

    package init() {}

    package var setup: Setup? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
