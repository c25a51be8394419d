import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP client the worker uses by default: `HTTPClient.shared`'s event loops, but a
/// failed connection fails the request at once instead of being retried with backoff until
/// the request deadline (a backend that refuses connections made `podbridge sync` sit out
/// the whole 30 s), and connecting gives up after 10 s. Never shut down, like `.shared`.
package enum UploadHTTPClient {
    package static let shared: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        // A redirect is answered, never followed: following a 301/302/303 turns the POST into a
        // GET, and the backend's list answered it 200, so every night read as stored while none
        // was (a proxy sending http to https). OutboxWorker names the redirect instead.
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}

/// Plain words for an error that kept a request from getting an answer.
enum NetworkFailure {
    /// "cannot connect to http://127.0.0.1:18556: connection refused", "no answer from
    /// https://sleep.example.com within 30 s (timed out)", "cannot connect to
    /// https://nope.invalid: unknown host 'nope.invalid'".
    static func describe(_ error: any Error, baseURL: String, timeoutSeconds: Int64) -> String {
        let timedOut = "no answer from \(baseURL) within \(timeoutSeconds) s (timed out)"
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout: return timedOut
            case .connectTimeout: return "cannot connect to \(baseURL): timed out connecting"
            case .remoteConnectionClosed: return "\(baseURL) closed the connection before answering"
            default: break
            }
        }
        if let error = error as? HTTPParserError {
            if case .invalidEOFState = error { return "\(baseURL) closed the connection in the middle of its answer" }
            return "\(baseURL) did not answer in HTTP (\(error))"
        }
        let text = String(describing: error)
        if text.contains("handshakeFailed") || text.contains("BoringSSL") || text.contains("NIOSSL") {
            if text.contains("CERTIFICATE_VERIFY_FAILED") {
                return "cannot connect to \(baseURL): its TLS certificate is not trusted by this machine (CERTIFICATE_VERIFY_FAILED)"
            }
            if text.contains("WRONG_VERSION_NUMBER") {
                return "cannot connect to \(baseURL): it does not answer in TLS (is it http:// rather than https://?)"
            }
            return "cannot connect to \(baseURL): the TLS handshake failed"
        }
        if let cause = cause(of: error) { return "cannot connect to \(baseURL): \(cause)" }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return "cannot connect to \(baseURL): timed out connecting"
        }
        // Whatever else, without a source path a library put in its text.
        let plain = text.replacingOccurrences(of: #" at /[^\]\)]*"#, with: "", options: .regularExpression)
        return "cannot reach \(baseURL): \(plain)"
    }

    /// The server answered, then the answer broke off: this request's bad luck, not a
    /// backend that cannot be reached (the pass goes on with the next session).
    static func answeredInPart(_ error: any Error) -> Bool {
        if (error as? HTTPClientError) == .remoteConnectionClosed { return true }
        if let error = error as? HTTPParserError, case .invalidEOFState = error { return true }
        return false
    }

    /// The cause inside `error`, found by walking its stored properties (NIO wraps the
    /// socket's error in `NIOConnectionError`, a NIOPosix type, with one error per address
    /// tried and the DNS errors).
    private static func cause(of error: Any, depth: Int = 0) -> String? {
        if let error = error as? IOError { return describe(errno: error.errnoCode) }
        if let error = error as? SocketAddressError {
            switch error {
            case let .unknown(host, _): return "unknown host '\(host)'"
            default: return "\(error)"
            }
        }
        if let error = error as? SocketAddressError.UnknownHost {
            if error.errorCode == Int(EAI_NONAME) { return "unknown host '\(error.host)'" }
            return "cannot look up host '\(error.host)': \(error.errorDescription.lowercased())"
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return "timed out connecting" }
        guard depth < 4 else { return nil }
        let mirror = Mirror(reflecting: error)
        // Socket errors first (a refused connection also carries a harmless DNS error for
        // the address family the host does not have), then anything else, DNS included.
        var fallback: String?
        for child in mirror.children {
            var values: [Any] = [child.value]
            if let optional = child.value as? (any OptionalProtocol) { values = optional.wrapped.map { [$0] } ?? [] }
            for value in values {
                for element in elements(value) {
                    guard let found = cause(of: element, depth: depth + 1) else { continue }
                    if found.hasPrefix("unknown host") || found.hasPrefix("cannot look up") {
                        fallback = fallback ?? found
                    } else {
                        return found
                    }
                }
            }
        }
        return fallback
    }

    private static func elements(_ value: Any) -> [Any] {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .collection ? mirror.children.map(\.value) : [value]
    }

    private static func describe(errno code: Int32) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case ECONNRESET: "connection reset"
        case ETIMEDOUT: "timed out connecting"
        case EHOSTUNREACH: "host unreachable"
        case ENETUNREACH: "network unreachable"
        default: String(cString: strerror(code)).lowercased()
        }
    }
}

private protocol OptionalProtocol { var wrapped: Any? { get } }
extension Optional: OptionalProtocol {
    var wrapped: Any? { map { $0 as Any } }
}
