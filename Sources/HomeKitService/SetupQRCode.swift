import CQREncode

/// The setup payload as a QR code's modules (libqrencode), for the dashboard to draw: one
/// string per row, `1` for a dark module. Error correction Q, as Apple's setup codes use.
package enum SetupQRCode {
    package static func rows(_ payload: String) -> [String]? {
        guard let code = QRcode_encodeString(payload, 0, QR_ECLEVEL_Q, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        return (0..<width).map { y in
            String((0..<width).map { x in code.pointee.data[y * width + x] & 1 == 1 ? "1" : "0" })
        }
    }
}
