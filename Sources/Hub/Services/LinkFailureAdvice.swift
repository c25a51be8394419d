import PodDevice
import PodProtocol

/// Turns why a pod could not be opened or handshaken into a sentence a user can act on,
/// printed at the default log level (a daemon that only says "looking for pods" while it
/// fails to open one leaves people guessing). Pure: reads the failure's typed cause
/// (errno, libusb code, the request that went unanswered), never its text.
enum LinkFailureAdvice {
    /// nil for failures that need no advice (a normal unplug, the hub stopping).
    static func advice(for failure: LinkFailure) -> String? {
        switch failure {
        case .transport(let error):
            switch error.meaning {
            case .gone:
                return nil
            case .permissionDenied:
                return "cannot open the pod: \(error). The hub's user needs access to the device: install "
                    + "udev/70-podbridge.rules (docs/device.md) and add the user to the dialout group "
                    + "(plugdev for the USB interface), then re-plug the pod"
            case .inUse:
                return "cannot open the pod: \(error). Another program holds it (another podbridge, ModemManager, "
                    + "a serial terminal): stop it; the hub keeps retrying"
            case .notFound:
                return "cannot open the pod: \(error). The device is not there (unplugged, or a wrong pod.path); "
                    + "the hub keeps retrying"
            case .other:
                return "the pod link failed: \(error); the hub keeps retrying"
            }
        case .link(.timeout(.hello, _)):
            return "the pod was opened but did not answer HELLO: \(failure). Check that it runs podbridge-compatible "
                + "firmware (firmware-protocol.md) and re-plug it; the hub keeps retrying"
        case .link(.disconnected(let error)):
            return advice(for: .transport(error))
        case .link(.notConnected):
            return nil
        case .link:
            return "the pod link failed: \(failure); the hub keeps retrying"
        }
    }

    /// Whether the failure is of a device that is there (refused, held, silent), as opposed to
    /// one that is not (no such file: unplugged, or a pod.path nothing was ever plugged in at).
    static func podIsThere(_ failure: LinkFailure) -> Bool {
        switch failure {
        case .transport(let error), .link(.disconnected(let error)):
            return error.meaning != .notFound && error.meaning != .gone
        case .link:
            return true
        }
    }
}
