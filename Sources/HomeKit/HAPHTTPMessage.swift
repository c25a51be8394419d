import Foundation

/// HAP's HTTP/1.1 in both directions: requests read off a byte buffer (plain or decrypted), and
/// the answers and `EVENT/1.0` notifications written out. HAP's controllers send small requests
/// with `Content-Length`, never chunked; anything else is refused rather than guessed at.
public struct HAPHTTPRequest: Sendable, Equatable {
    public let method: String
    /// The path without the query.
    public let path: String
    public let query: String
    public let headers: [String: String]
    public let body: [UInt8]

    /// The largest body a controller sends (pairing TLVs and characteristic writes are small).
    public static let maxBody = 64 * 1024

    /// Takes one complete request off the front of `buffer`; nil while it is incomplete.
    public static func take(from buffer: inout [UInt8]) throws(HAPHTTPError) -> HAPHTTPRequest? {
        guard let end = headerEnd(buffer) else {
            if buffer.count > 16 * 1024 { throw .headerTooLong }
            return nil
        }
        let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { throw .malformed(lines[0]) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed(line) }
            headers[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if headers["transfer-encoding"] != nil { throw .malformed("chunked bodies are not supported") }
        let length = Int(headers["content-length"] ?? "0") ?? -1
        guard (0...maxBody).contains(length) else { throw .malformed("content-length \(headers["content-length"] ?? "")") }
        let bodyStart = end + 4
        guard buffer.count >= bodyStart + length else { return nil }
        let target = String(requestLine[1])
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let request = HAPHTTPRequest(method: String(requestLine[0]), path: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : "",
                                     headers: headers, body: Array(buffer[bodyStart..<(bodyStart + length)]))
        buffer.removeFirst(bodyStart + length)
        return request
    }

    private static func headerEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    public init(method: String, path: String, query: String, headers: [String: String], body: [UInt8]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

public enum HAPHTTPError: Error, Equatable {
    case headerTooLong
    case malformed(String)
}

/// An answer or event as bytes.
public enum HAPHTTPResponse {
    public static let tlvType = "application/pairing+tlv8"
    public static let jsonType = "application/hap+json"

    public static func encode(status: Int, contentType: String? = nil, body: [UInt8] = [], event: Bool = false) -> [UInt8] {
        var head = (event ? "EVENT/1.0" : "HTTP/1.1") + " \(status) \(reason(status))\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        return Array(head.utf8) + body
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 207: "Multi-Status"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 422: "Unprocessable Entity"
        case 470: "Connection Authorization Required"
        case 500: "Internal Server Error"
        default: "Status"
        }
    }
}
