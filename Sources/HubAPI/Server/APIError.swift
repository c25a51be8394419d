import Foundation
import Hummingbird

/// Every error the API answers with: a status and `{"error": code, "detail": text}`.
/// Handlers throw these; `JSONErrorMiddleware` turns anything else into one too, so no
/// client ever sees a plain-text or HTML error.
package struct APIError: Error, HTTPResponseError, CustomStringConvertible {
    package var status: HTTPResponse.Status
    /// Short machine-readable code (`bad_request`, `not_found`, `unauthorized`, …).
    package var error: String
    /// What was wrong, for a person.
    package var detail: String
    /// Extra response headers (`Allow` on a 405).
    package var headers: HTTPFields

    package init(_ status: HTTPResponse.Status, _ error: String, _ detail: String, headers: HTTPFields = [:]) {
        self.status = status
        self.error = error
        self.detail = detail
        self.headers = headers
    }

    package static func badRequest(_ detail: String) -> APIError { APIError(.badRequest, "bad_request", detail) }
    package static func notFound(_ detail: String) -> APIError { APIError(.notFound, "not_found", detail) }
    package static func unavailable(_ detail: String) -> APIError { APIError(.serviceUnavailable, "unavailable", detail) }
    package static func internalError(_ detail: String) -> APIError { APIError(.internalServerError, "internal", detail) }

    package var description: String { "\(status.code) \(error): \(detail)" }

    /// The JSON body every error answer carries, on every path (a handler's, or the connection
    /// guard's for a request that never reached one).
    package var body: Data { (try? JSONEncoder().encode(["error": error, "detail": detail])) ?? Data() }

    /// The code of an error answered with `status` for want of a more telling one.
    package static func code(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "bad_request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 413: "body_too_large"
        case 415: "unsupported_media_type"
        case 431: "header_too_large"
        case 501: "not_implemented"
        default: status.code >= 500 ? "internal" : "bad_request"
        }
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"podbridge\"" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// Turns every error a handler or Hummingbird throws (unknown route, body too large, a
/// decoding error) into an `APIError` JSON answer.
package struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(_ request: Request, context: Context,
                        next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            throw APIError(error.status, APIError.code(for: error.status), error.body ?? error.status.reasonPhrase,
                           headers: error.headers)
        } catch let error as any HTTPResponseError {
            throw APIError(error.status, APIError.code(for: error.status), "\(error)")
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            context.logger.error("unhandled error: \(error)")
            throw APIError.internalError("\(error)")
        }
    }
}
