// A quick look at a pod without keeping it: open, HELLO, close. `podbridge devices` uses it
// to show firmware versions; it never sets the clock or starts a stream.
import PodProtocol

public enum PodProbe {
    /// Opens the pod, performs HELLO and closes it again.
    public static func hello(_ opener: any PodOpener, timing: LinkTiming = LinkTiming(retries: 1)) async throws -> PodInfo {
        let transport = try await opener.open()
        let session = PodSession(transport: transport, timing: timing, recorder: nil) { _, _ in }
        await session.start()
        let hub = Wire.version...Wire.version
        let result: Result<Response, PodLinkError>
        do {
            try await session.sendDelimiter()
            result = .success(try await session.request(.hello(HelloRequest(minVersion: hub.lowerBound, maxVersion: hub.upperBound, maxMinor: Wire.minorVersion))))
        } catch {
            result = .failure(error)
        }
        await session.close()
        switch result {
        case .success(let response):
            guard case .hello(let info) = response.body else { throw PodLinkError.unexpectedResponse(request: .hello, detail: "no pod info") }
            return info
        case .failure(.nack(_, .unsupportedVersion)):
            throw PodLinkError.protocolVersionMismatch(hub: hub, pod: "has no version in that range")
        case .failure(let error):
            throw error
        }
    }

    /// The opener for one discovered link.
    public static func opener(for pod: DiscoveredPod) -> any PodOpener { LinkOpener(pod: pod) }
}

/// Opens exactly one discovered link (no waiting, no fallback).
struct LinkOpener: PodOpener {
    let pod: DiscoveredPod
    var description: String { pod.devnode }
    func open() async throws -> any Transport {
        switch pod.link {
        case .serial: try SerialTransport(path: pod.devnode)
        case .usb(let interface): try USBTransport(devnode: pod.devnode, interface: interface)
        }
    }
}
