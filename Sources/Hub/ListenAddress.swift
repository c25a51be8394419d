import Foundation

/// A `host:port` the local API listens on (`api.listen`), parsed once so that the
/// configuration can refuse a non-loopback bind without a token before anything starts.
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package struct ParseError: Error, CustomStringConvertible {
        package var description: String
    }

    /// `127.0.0.1:8380`, `[::1]:8380`, `0.0.0.0:80`, `localhost:0` (0: any free port).
    package init(parsing text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.contains("://") || trimmed.contains("/") {
            // A URL (as the hub prints its own) is not an address to listen on.
            throw ParseError(description: "expected host:port (such as 127.0.0.1:8380), not a URL: '\(text)'")
        }
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

    /// Only this machine can connect.
    package var isLoopback: Bool { Self.isLoopback(host: host) }

    /// A host only this machine reaches: an address in 127.0.0.0/8, `::1`, `localhost` or a name
    /// under `.localhost` (RFC 6761: never resolved off the machine). A name such as
    /// `127.example.com` is not one: it can resolve anywhere.
    package static func isLoopback(host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h.hasSuffix(".localhost") || h == "::1" { return true }
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
