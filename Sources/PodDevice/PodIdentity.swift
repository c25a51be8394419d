// What a pod looks like on the USB bus and what discovery reports about one.

/// The USB ids that identify a pod. Defaults to the pid.codes test vendor (0x1209) and the
/// product id of `firmware-protocol.md`; both are configurable for other builds of the pod.
package struct PodMatch: Sendable, Hashable, CustomStringConvertible {
    package var vendorID: UInt16
    package var productID: UInt16

    /// pid.codes test vendor id.
    package static let pidCodesVendor: UInt16 = 0x1209
    /// The pod's product id under the pid.codes vendor (firmware-protocol.md, "USB identity").
    package static let defaultProductID: UInt16 = 0x0001

    package static let `default` = PodMatch(vendorID: pidCodesVendor, productID: defaultProductID)

    package init(vendorID: UInt16, productID: UInt16) {
        self.vendorID = vendorID
        self.productID = productID
    }

    /// Parses "1209:0001" (hex, as lsusb prints it).
    package init?(parsing text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let v = UInt16(parts[0], radix: 16), let p = UInt16(parts[1], radix: 16) else { return nil }
        self.init(vendorID: v, productID: p)
    }

    package var description: String { hex4(vendorID) + ":" + hex4(productID) }
}

func hex4(_ v: UInt16) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 4 - s.count) + s
}

/// How bytes reach the pod.
package enum PodLink: Sendable, Hashable, CustomStringConvertible {
    /// CDC-ACM tty, e.g. /dev/ttyACM0.
    case serial
    /// The vendor bulk interface through usbfs (/dev/bus/usb/BBB/DDD) and libusb.
    case usb(interface: Int)

    package var description: String {
        switch self {
        case .serial: "serial"
        case .usb(let i): "usb(if \(i))"
        }
    }
}

/// One way to reach one pod, as discovery found it. Plain values only: no libudev object
/// ever leaves the discovery thread.
package struct DiscoveredPod: Sendable, Hashable, CustomStringConvertible {
    /// Stable identity: the USB serial (`ID_SERIAL_SHORT` / sysfs `serial`), or the USB
    /// device's syspath when the pod reports none. Never the ttyACMn name, which changes
    /// from one plug to the next.
    package var key: String
    package var serial: String?
    /// sysfs path of the node's device (the tty or the usb_device): what removal events name.
    package var syspath: String
    /// The node to open: /dev/ttyACM0 or /dev/bus/usb/001/011.
    package var devnode: String
    package var link: PodLink
    package var match: PodMatch

    package init(key: String, serial: String?, syspath: String, devnode: String, link: PodLink, match: PodMatch) {
        self.key = key
        self.serial = serial
        self.syspath = syspath
        self.devnode = devnode
        self.link = link
        self.match = match
    }

    package var description: String { "\(key) \(link) \(devnode)" }
}

/// A change discovery observed.
package enum DiscoveryEvent: Sendable, Hashable {
    case added(DiscoveredPod)
    case removed(DiscoveredPod)
}
