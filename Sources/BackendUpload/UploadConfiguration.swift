import Foundation

/// Where and how the worker uploads. Upload is off unless a configuration exists: the hub
/// builds one only when a backend URL is configured.
package struct UploadConfiguration: Sendable, Hashable {
    /// Base URL of the backend, e.g. `https://sleep.example.com`; the worker posts to
    /// `<base>/api/v1/sleep`.
    package var baseURL: String
    /// Bearer token sent as `Authorization: Bearer <token>`; nil sends none.
    package var bearerToken: String?
    /// `source` field of every upload.
    package var source: String
    package var backoff: BackoffPolicy
    /// Attempts after which a retryable failure becomes a final one.
    package var maxAttempts: Int
    /// Per-request deadline, seconds.
    package var requestTimeoutSeconds: Int64
    /// How long a claim on an event lasts; a worker that dies mid-post frees its events when
    /// this runs out. Must exceed the request timeout.
    package var leaseSeconds: Int64

    /// - Throws: `UploadError.invalidConfiguration` for a URL that is not http(s) with a host.
    package init(
        baseURL: String, bearerToken: String?, source: String = "podbridge", backoff: BackoffPolicy = BackoffPolicy(),
        maxAttempts: Int = 12, requestTimeoutSeconds: Int64 = 30, leaseSeconds: Int64 = 120
    ) throws {
        let trimmed = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else { throw UploadError.invalidConfiguration("backend URL must be http(s)://host[:port][/path], got '\(baseURL)'") }
        // The endpoint is the base URL with /api/v1/sleep added: a query or fragment would
        // end up before it (`/?tenant=a/api/v1/sleep`), credentials belong in the token.
        guard url.query == nil, url.fragment == nil, !trimmed.contains("?"), !trimmed.contains("#") else {
            throw UploadError.invalidConfiguration("backend URL must have no query or fragment (the sleep endpoint is added to it), got '\(baseURL)'")
        }
        guard url.user == nil, url.password == nil else {
            throw UploadError.invalidConfiguration("backend URL must not carry a user name or password; give the token instead")
        }
        guard maxAttempts >= 1 else { throw UploadError.invalidConfiguration("max attempts must be at least 1") }
        guard requestTimeoutSeconds >= 1, leaseSeconds > requestTimeoutSeconds else {
            throw UploadError.invalidConfiguration("lease (\(leaseSeconds) s) must exceed the request timeout (\(requestTimeoutSeconds) s)")
        }
        if let bearerToken, bearerToken.contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw UploadError.invalidConfiguration("bearer token contains a line break")
        }
        self.baseURL = trimmed
        self.bearerToken = bearerToken?.isEmpty == true ? nil : bearerToken
        self.source = source
        self.backoff = backoff
        self.maxAttempts = maxAttempts
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.leaseSeconds = leaseSeconds
    }

    /// Full URL of the sleep endpoint.
    package var endpoint: String { baseURL + "/api/v1/sleep" }
}

package enum UploadError: Error, Equatable, CustomStringConvertible {
    case invalidConfiguration(String)

    package var description: String {
        switch self {
        case let .invalidConfiguration(reason): "upload configuration: \(reason)"
        }
    }
}
