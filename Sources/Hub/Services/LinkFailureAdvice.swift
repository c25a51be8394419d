/// Turns why a pod could not be opened or handshaken into a sentence a user can act on,
/// printed at the default log level (a daemon that only says "looking for pods" while it
/// fails to open one leaves people guessing). Pure: reads the failure's text.
enum LinkFailureAdvice {
    /// nil for reasons that need no advice (a normal unplug, the hub stopping).
    static func advice(for reason: String) -> String? {
        let text = reason.lowercased()
        if text.contains("permission denied") || text.contains("errno 13)") || text.contains("operation not permitted") {
            return "cannot open the pod: \(reason). The hub's user needs access to the device: install "
                + "udev/70-podbridge.rules (docs/device.md) and add the user to the dialout group "
                + "(plugdev for the USB interface), then re-plug the pod"
        }
        if text.contains("in use") || text.contains("busy") || text.contains("errno 16)") {
            return "cannot open the pod: \(reason). Another program holds it (another podbridge, ModemManager, "
                + "a serial terminal): stop it; the hub keeps retrying"
        }
        if text.contains("no response to hello") || (text.contains("hello") && text.contains("timeout")) {
            return "the pod was opened but did not answer HELLO: \(reason). Check that it runs podbridge-compatible "
                + "firmware (firmware-protocol.md) and re-plug it; the hub keeps retrying"
        }
        if text.contains("no such file") || text.contains("errno 2)") {
            return "cannot open the pod: \(reason). The device is not there (unplugged, or a wrong pod.path); "
                + "the hub keeps retrying"
        }
        if text.contains("device disconnected") || text.contains("transport closed") || text == "link ended"
            || text == "not connected" {
            return nil
        }
        return "the pod link failed: \(reason); the hub keeps retrying"
    }
}
