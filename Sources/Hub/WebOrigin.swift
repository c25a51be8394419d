import Foundation

/// An origin a web page may call the API from (`api.allowedOrigins`), parsed when the
/// configuration is read. A browser's `Origin` is always `scheme://host[:port]`, so an entry
/// with a path, a trailing slash or a wildcard would never match one: refused as a typo rather
/// than left to fail silently in the browser.
package struct WebOrigin: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`.
    package var scheme: String
    /// Lower case; an IPv6 address without its brackets.
    package var host: String
    /// Nil for the scheme's default port, which a browser leaves out.
    package var port: Int?

    package struct ParseError: Error, CustomStringConvertible {
        package var description: String
    }

    /// `https://ha.example.org:8123`, `http://192.168.1.20:8123`, `http://[fd00::2]:8123`.
    package init(parsing text: String) throws(ParseError) {
        func refuse(_ why: String) -> ParseError {
            ParseError(description: "\(why); an origin is scheme://host[:port] (such as https://ha.example.org:8123), got '\(text)'")
        }
        if text.contains("*") {
            throw refuse("no wildcards: the API is bearer-authenticated and serves bedroom data, so each page's origin is listed")
        }
        guard let separator = text.range(of: "://") else { throw refuse("no scheme") }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw refuse("the scheme must be http or https") }
        var authority = text[separator.upperBound...]
        if let slash = authority.firstIndex(of: "/") {
            throw refuse(authority[slash...] == "/" ? "no trailing slash" : "no path")
        }
        if authority.contains(where: { $0 == "?" || $0 == "#" || $0 == "@" || $0.isWhitespace || !$0.isASCII }) {
            throw refuse("no query, fragment, user name or spaces, and an ASCII host (a name's xn-- form, as browsers send it)")
        }
        var host: Substring
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            authority = authority[authority.index(after: close)...]
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }), host.contains(":") else {
                throw refuse("not an IPv6 address in brackets")
            }
            guard authority.isEmpty || authority.hasPrefix(":") else { throw refuse("expected :port after the address") }
        } else {
            host = authority.prefix { $0 != ":" }
            authority = authority.dropFirst(host.count)
            if authority.dropFirst().contains(":") { throw refuse("an IPv6 address goes in brackets") }
            guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" }) else {
                throw refuse("not a host name")
            }
        }
        guard !host.isEmpty else { throw refuse("no host") }
        var port: Int?
        if authority.hasPrefix(":") {
            let digits = authority.dropFirst()
            guard !digits.isEmpty, digits.allSatisfy(\.isNumber), let number = Int(digits), (1...65535).contains(number) else {
                throw refuse("the port must be 1…65535")
            }
            port = number == (scheme == "https" ? 443 : 80) ? nil : number
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }

    /// As a browser sends it in `Origin`, so a configured `https://HA.example.org:443` matches
    /// the page's `https://ha.example.org`.
    package var description: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }
}
