import Foundation

/// A `host:port` the local API listens on (`api.listen`), parsed once so that the
/// configuration can refuse a non-loopback bind without a token before anything starts.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public struct ParseError: Error, CustomStringConvertible {
        public var description: String
    }

    /// `127.0.0.1:8380`, `[::1]:8380`, `0.0.0.0:80`, `localhost:0` (0: any free port).
    public init(parsing text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var hostPart: Substring
        let portPart: Substring
        if trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") {
            hostPart = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else { throw ParseError(description: "expected [host]:port, got '\(text)'") }
            portPart = rest.dropFirst()
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else {
                throw ParseError(description: "expected host:port, got '\(text)'")
            }
            hostPart = trimmed[..<colon]
            portPart = trimmed[trimmed.index(after: colon)...]
        }
        guard let port = Int(portPart), (0...65535).contains(port) else {
            throw ParseError(description: "port must be 0…65535, got '\(portPart)'")
        }
        if hostPart.isEmpty { hostPart = "0.0.0.0" }
        host = String(hostPart)
        self.port = port
    }

    /// Only this machine can connect: 127.0.0.0/8, ::1 or `localhost`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
