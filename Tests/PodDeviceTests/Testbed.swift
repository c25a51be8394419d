// A umockdev testbed for one test: mocked /sys and /dev seen by libudev, the tty layer and
// usbfs of this process (through libumockdev-preload, which scripts/test-device.sh preloads).
import CUmockdev
import Foundation
@testable import PodDevice

/// Paths of the test fixtures, from this file's location (works from a fresh clone).
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    static func text(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }
}

/// True when the umockdev preload library is loaded: only then may testbed tests run.
enum UmockdevEnvironment {
    static let preloaded: Bool = (ProcessInfo.processInfo.environment["LD_PRELOAD"] ?? "").contains("umockdev-preload")
}

struct TestbedError: Error, CustomStringConvertible {
    let description: String
}

/// Owns a UMockdevTestbed; freed (and the mocked tree removed) on deinit.
final class Testbed {
    let handle: UnsafeMutablePointer<UMockdevTestbed>

    init() {
        handle = umockdev_testbed_new()
    }

    deinit { g_object_unref(handle) }

    func add(_ description: String) throws {
        var error: UnsafeMutablePointer<GError>?
        if umockdev_testbed_add_from_string(handle, description, &error) == 0 {
            defer { g_error_free(error) }
            throw TestbedError(description: error.map { String(cString: $0.pointee.message) } ?? "add_from_string failed")
        }
    }

    func addFixture(_ name: String) throws { try add(try Fixtures.text(name)) }

    func uevent(_ syspath: String, _ action: String) {
        umockdev_testbed_uevent(handle, syspath, action)
    }

    func remove(_ syspath: String) { umockdev_testbed_remove_device(handle, syspath) }

    func loadScript(device: String, fixture: String) throws {
        var error: UnsafeMutablePointer<GError>?
        if umockdev_testbed_load_script(handle, device, Fixtures.path(fixture), &error) == 0 {
            defer { g_error_free(error) }
            throw TestbedError(description: error.map { String(cString: $0.pointee.message) } ?? "load_script failed")
        }
    }

    func loadIoctl(device: String, fixture: String) throws {
        var error: UnsafeMutablePointer<GError>?
        if umockdev_testbed_load_ioctl(handle, device, Fixtures.path(fixture), &error) == 0 {
            defer { g_error_free(error) }
            throw TestbedError(description: error.map { String(cString: $0.pointee.message) } ?? "load_ioctl failed")
        }
    }
}

/// Syspaths of the fixture devices.
enum FixturePaths {
    static let podUSB = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1"
    static let podTTY = podUSB + "/1-1:1.0/tty/ttyACM0"
    static let otherUSB = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2"
    static let otherTTY = otherUSB + "/1-2:1.0/ttyUSB0/tty/ttyUSB0"
}
