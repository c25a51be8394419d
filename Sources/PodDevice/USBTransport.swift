// The vendor-interface path: the same frames over bulk IN/OUT endpoints through libusb.
// Opened from the usbfs node udev found (libusb_wrap_sys_device), so discovery stays in
// one place (libudev) for both links; or, where udev is unavailable, by vendor/product id
// and serial through libusb's own enumeration.
//
// One I/O thread per transport runs every transfer, one at a time: a synchronous bulk IN
// with a short timeout while a reader waits, pending writes in between. libusb objects
// never leave that thread except for open/close, which happen before it starts and after
// it has been joined.
import CLibUSB
import SystemCalls
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public final class USBTransport: Transport {
    public let endpoint: String
    /// The claimed interface and its bulk endpoint addresses.
    public let interfaceNumber: Int
    public let inEndpoint: UInt8
    public let outEndpoint: UInt8

    private struct Handles: @unchecked Sendable {
        // libusb handles are used by one thread at a time (see the type comment).
        let context: OpaquePointer
        let handle: OpaquePointer
        let fd: Int32?
    }
    private struct PendingWrite {
        let bytes: [UInt8]
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let handles: Handles
    private let inbox = ByteInbox()
    private let writes = Mutex<[PendingWrite]>([])
    private let kick = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let closedOnce = Atomic<Bool>(false)
    private let readTimeoutMilliseconds: UInt32
    private let writeTimeoutMilliseconds: UInt32

    /// Opens a usbfs node (/dev/bus/usb/BBB/DDD) found by discovery and claims `interface`
    /// (or the first vendor-class interface with a bulk IN and a bulk OUT endpoint).
    public convenience init(devnode: String, interface: Int? = nil) throws {
        let fd: Int32
        do {
            fd = try SystemCalls.open(devnode, flags: O_RDWR | O_CLOEXEC)
        } catch {
            throw TransportError.failed(.system(error))
        }
        var context: OpaquePointer?
        var rc = podbridge_libusb_init_without_discovery(&context)
        guard rc == 0, let context else {
            SystemCalls.close(fd)
            throw TransportError.failed(.usb(call: "libusb_init", code: rc))
        }
        var handle: OpaquePointer?
        rc = libusb_wrap_sys_device(context, Int(fd), &handle)
        guard rc == 0, let handle else {
            libusb_exit(context)
            SystemCalls.close(fd)
            throw TransportError.failed(.usb(call: "libusb_wrap_sys_device(\(devnode))", code: rc))
        }
        try self.init(handles: Handles(context: context, handle: handle, fd: fd), endpoint: devnode, interface: interface)
    }

    /// Opens the first device with these ids (and this serial, when given) via libusb's
    /// own enumeration: the fallback where no udev is available.
    public convenience init(match: PodMatch, serial: String?, interface: Int? = nil) throws {
        var context: OpaquePointer?
        var rc = libusb_init(&context)
        guard rc == 0, let context else { throw TransportError.failed(.usb(call: "libusb_init", code: rc)) }
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        var opened: OpaquePointer?
        if count > 0, let list {
            for i in 0..<count {
                guard let device = list[i] else { continue }
                var desc = libusb_device_descriptor()
                guard libusb_get_device_descriptor(device, &desc) == 0,
                      desc.idVendor == match.vendorID, desc.idProduct == match.productID else { continue }
                var h: OpaquePointer?
                guard libusb_open(device, &h) == 0, let h else { continue }
                if let serial {
                    var buffer = [UInt8](repeating: 0, count: 128)
                    let n = libusb_get_string_descriptor_ascii(h, desc.iSerialNumber, &buffer, Int32(buffer.count))
                    if n <= 0 || String(decoding: buffer[0..<Int(n)], as: UTF8.self) != serial {
                        libusb_close(h)
                        continue
                    }
                }
                opened = h
                break
            }
        }
        if let list { libusb_free_device_list(list, 1) }
        guard let opened else {
            libusb_exit(context)
            rc = LIBUSB_ERROR_NOT_FOUND.rawValue
            throw TransportError.failed(.usb(call: "open \(match)\(serial.map { " serial \($0)" } ?? "")", code: rc))
        }
        try self.init(handles: Handles(context: context, handle: opened, fd: nil), endpoint: "usb \(match)", interface: interface)
    }

    private init(handles: Handles, endpoint: String, interface: Int?,
                 readTimeoutMilliseconds: UInt32 = 100, writeTimeoutMilliseconds: UInt32 = 2000) throws {
        self.handles = handles
        self.readTimeoutMilliseconds = readTimeoutMilliseconds
        self.writeTimeoutMilliseconds = writeTimeoutMilliseconds
        func fail(_ cause: TransportError.Cause) -> TransportError {
            libusb_close(handles.handle)
            libusb_exit(handles.context)
            if let fd = handles.fd { SystemCalls.close(fd) }
            return TransportError.failed(cause)
        }
        guard let found = Self.bulkInterface(handles.handle, preferred: interface) else {
            closedOnce.store(true, ordering: .releasing)
            throw fail(.noBulkInterface(endpoint: endpoint))
        }
        interfaceNumber = found.number
        inEndpoint = found.inEndpoint
        outEndpoint = found.outEndpoint
        self.endpoint = "\(endpoint) if \(found.number)"
        // No kernel driver binds a vendor-class interface, so nothing is detached: claiming
        // fails (LIBUSB_ERROR_BUSY) if another program holds it, which is what we want.
        let rc = libusb_claim_interface(handles.handle, Int32(found.number))
        guard rc == 0 else {
            closedOnce.store(true, ordering: .releasing)  // deinit must not touch the freed handles
            throw fail(.usb(call: "libusb_claim_interface(\(self.endpoint))", code: rc))
        }
        let thread = Thread { [self] in ioLoop() }
        thread.name = "podbridge.usb"
        thread.start()
    }

    /// Finds the interface to use in the active configuration.
    private static func bulkInterface(_ handle: OpaquePointer, preferred: Int?) -> (number: Int, inEndpoint: UInt8, outEndpoint: UInt8)? {
        guard let device = libusb_get_device(handle) else { return nil }
        var config: UnsafeMutablePointer<libusb_config_descriptor>?
        guard libusb_get_active_config_descriptor(device, &config) == 0, let config else { return nil }
        defer { libusb_free_config_descriptor(config) }
        for i in 0..<Int(config.pointee.bNumInterfaces) {
            let interface = config.pointee.interface[i]
            guard interface.num_altsetting > 0 else { continue }
            let alt = interface.altsetting[0]
            let number = Int(alt.bInterfaceNumber)
            if let preferred { guard number == preferred else { continue } } else {
                guard alt.bInterfaceClass == UInt8(LIBUSB_CLASS_VENDOR_SPEC.rawValue) else { continue }
            }
            var input: UInt8?
            var output: UInt8?
            for e in 0..<Int(alt.bNumEndpoints) {
                let ep = alt.endpoint[e]
                guard ep.bmAttributes & 0x03 == UInt8(LIBUSB_TRANSFER_TYPE_BULK.rawValue) else { continue }
                if ep.bEndpointAddress & 0x80 != 0 { input = input ?? ep.bEndpointAddress } else { output = output ?? ep.bEndpointAddress }
            }
            if let input, let output { return (number, input, output) }
        }
        return nil
    }

    static func name(_ rc: Int32) -> String { String(cString: libusb_error_name(rc)) }

    /// The only place transfers happen.
    private func ioLoop() {
        var buffer = [UInt8](repeating: 0, count: 512)
        var end: TransportError?
        while end == nil, !stopping.load(ordering: .acquiring) {
            let next: PendingWrite? = writes.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            if let write = next {
                var data = write.bytes
                var transferred: Int32 = 0
                let rc = libusb_bulk_transfer(handles.handle, outEndpoint, &data, Int32(data.count), &transferred, writeTimeoutMilliseconds)
                if rc == 0, Int(transferred) == data.count {
                    write.continuation.resume()
                } else {
                    let error = Self.transportError(rc, what: "bulk OUT")
                    write.continuation.resume(throwing: rc == 0 ? TransportError.failed(.shortWrite(sent: Int(transferred), of: data.count)) : error)
                    if Self.isFatal(rc) { end = error }
                }
                continue
            }
            guard inbox.hasWaiter else {
                _ = kick.wait(timeout: .now() + .milliseconds(50))
                continue
            }
            var transferred: Int32 = 0
            let rc = libusb_bulk_transfer(handles.handle, inEndpoint, &buffer, Int32(buffer.count), &transferred, readTimeoutMilliseconds)
            if transferred > 0 { inbox.deliver(buffer[0..<Int(transferred)]) }
            if rc == 0 || rc == LIBUSB_ERROR_TIMEOUT.rawValue { continue }
            if rc == LIBUSB_ERROR_OVERFLOW.rawValue { continue }  // counted by the frame decoder as garbage
            end = Self.transportError(rc, what: "bulk IN")
        }
        let reason = end ?? .closed
        inbox.finish(reason)
        for write in writes.withLock({ w -> [PendingWrite] in defer { w.removeAll() }; return w }) {
            write.continuation.resume(throwing: reason)
        }
        finished.signal()
    }

    private static func isFatal(_ rc: Int32) -> Bool {
        rc == LIBUSB_ERROR_NO_DEVICE.rawValue || rc == LIBUSB_ERROR_IO.rawValue || rc == LIBUSB_ERROR_PIPE.rawValue
    }

    private static func transportError(_ rc: Int32, what: String) -> TransportError {
        isFatal(rc) ? .disconnected(.usb(call: what, code: rc)) : .failed(.usb(call: what, code: rc))
    }

    public func read() async throws -> [UInt8] {
        kick.signal()
        return try await inbox.next()
    }

    public func write(_ bytes: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            let accepted = writes.withLock { w -> Bool in
                guard !inbox.isFinished else { return false }
                w.append(PendingWrite(bytes: bytes, continuation: c))
                return true
            }
            if accepted { kick.signal() } else { c.resume(throwing: TransportError.closed) }
        }
    }

    /// Stops the I/O thread, then releases the interface and the device. After an unplug
    /// the release fails with NO_DEVICE, which is expected and ignored.
    public func close() {
        if closedOnce.exchange(true, ordering: .acquiringAndReleasing) { return }
        stopping.store(true, ordering: .releasing)
        kick.signal()
        finished.wait()
        _ = libusb_release_interface(handles.handle, Int32(interfaceNumber))
        libusb_close(handles.handle)
        libusb_exit(handles.context)
        if let fd = handles.fd { SystemCalls.close(fd) }
    }

    deinit { close() }
}
