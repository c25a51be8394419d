import ArgumentParser
import PodDevice

extension PodMatch {
    /// `--usb-id`, as `stream` and `devices` take it.
    static func option(_ text: String) throws -> PodMatch {
        guard let match = PodMatch(parsing: text) else { throw ValidationError("--usb-id must look like 1209:0001, got '\(text)'") }
        return match
    }
}
