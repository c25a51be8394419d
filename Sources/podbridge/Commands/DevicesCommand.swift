import ArgumentParser
import Foundation
import PodDevice
import PodProtocol

/// `podbridge devices`: the pods present, by serial, with their node, link and firmware.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the pods present: serial, device node, link (serial/usb) and firmware.",
        discussion: "Pods are found with libudev by USB id (default 1209:0001). Firmware comes from a quick HELLO; a pod another process holds shows as busy.")

    @Option(name: .customLong("usb-id"), help: "The pod's USB vendor:product id, in hex.")
    var usbID: String = PodMatch.default.description

    @Option(name: .customLong("path"), help: "Also probe this tty (e.g. a virtual pod's pty); repeatable.")
    var paths: [String] = []

    @Flag(name: .customLong("no-hello"), help: "Do not open the pods to ask their firmware version (a --path pod's serial then shows as ?).")
    var noHello = false

    func validate() throws {
        _ = try PodMatch.option(usbID)
    }

    func run() async throws {
        let match = try PodMatch.option(usbID)
        var rows: [(serial: String, node: String, link: String, firmware: String)] = []
        let found = try PodDiscovery.enumerate(configuration: DiscoveryConfiguration(match: match))
        var failedFound = 0
        for pod in found {
            let firmware = noHello ? "-" : await Self.firmware(PodProbe.opener(for: pod))
            if firmware.hasPrefix("error: ") { failedFound += 1 }
            rows.append((pod.serial ?? "(no serial) \(pod.key)", pod.devnode, "\(pod.link)", firmware))
        }
        var failedPaths = 0
        for path in paths {
            var serial = "?"
            var firmware = "-"
            if noHello {
                // Unopened, a path's pod is known by its node only; one that is not there fails.
                if !FileManager.default.fileExists(atPath: path) {
                    firmware = "error: No such file or directory"
                    failedPaths += 1
                }
                rows.append((serial, path, "serial", firmware))
                continue
            }
            do {
                let info = try await PodProbe.hello(PathOpener(path: path))
                serial = info.serial
                firmware = "\(info.firmware) (protocol \(info.protocolDescription))"
            } catch let error as TransportError where error.meaning == .inUse {
                // Held by the hub or a stream: there, and not a failure (as for a pod udev found).
                firmware = "busy (in use by another process)"
            } catch {
                firmware = "error: \(error)"
                failedPaths += 1
            }
            rows.append((serial, path, "serial", firmware))
        }
        if rows.isEmpty {
            print("no pods found (USB id \(match); try --path for a virtual pod)")
            return
        }
        let header = ("SERIAL", "NODE", "LINK", "FIRMWARE")
        let w0 = max(header.0.count, rows.map(\.serial.count).max() ?? 0)
        let w1 = max(header.1.count, rows.map(\.node.count).max() ?? 0)
        let w2 = max(header.2.count, rows.map(\.link.count).max() ?? 0)
        func pad(_ s: String, _ w: Int) -> String { s + String(repeating: " ", count: max(0, w - s.count)) }
        print("\(pad(header.0, w0))  \(pad(header.1, w1))  \(pad(header.2, w2))  \(header.3)")
        for r in rows { print("\(pad(r.serial, w0))  \(pad(r.node, w1))  \(pad(r.link, w2))  \(r.firmware)") }
        if Self.fails(found: found.count, failedFound: failedFound, failedPaths: failedPaths) { throw ExitCode.failure }
    }

    /// Whether the listing is a failure a script must see: a pod asked for by path that did not
    /// answer, or pods found of which not one answered (every one refused, say for permissions).
    /// One pod of several that fails while another answers is listed, not failed: the hub can
    /// still run.
    static func fails(found: Int, failedFound: Int, failedPaths: Int) -> Bool {
        failedPaths > 0 || (found > 0 && failedFound == found)
    }

    static func firmware(_ opener: any PodOpener) async -> String {
        do {
            let info = try await PodProbe.hello(opener)
            return "\(info.firmware) (protocol \(info.protocolDescription))"
        } catch let error as TransportError {
            if error.meaning == .inUse { return "busy (in use by another process)" }
            return "error: \(error)"
        } catch {
            return "error: \(error)"
        }
    }
}
