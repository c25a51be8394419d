import Foundation
import SleepDomain
import Hummingbird
import NIOCore
import SleepStore

/// Reading what a client sent, strictly: unknown query parameters and unknown JSON fields
/// are refused (a typo must not silently do nothing), values are checked before anything
/// reaches the pod or the store.
package enum RequestInput {
    /// The query as a dictionary; any parameter outside `allowed` (or given twice) is a 400.
    package static func query(_ request: Request, allowed: Set<String>) throws -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in request.uri.queryParameters {
            let k = String(key)
            guard allowed.contains(k) else {
                throw APIError.badRequest("unknown query parameter '\(k)'"
                                          + (allowed.isEmpty ? "" : "; allowed: \(allowed.sorted().joined(separator: ", "))"))
            }
            guard result[k] == nil else { throw APIError.badRequest("query parameter '\(k)' given twice") }
            // `?pod=` names nothing: refused, not looked up as a pod called "".
            guard !value.isEmpty else { throw APIError.badRequest("query parameter '\(k)' is empty") }
            result[k] = String(value)
        }
        return result
    }

    /// Refuses a body where the route reads none (`DELETE …?side=left`): a body sent there
    /// would be ignored, and its `side` with it, so the request would do more than asked.
    package static func noBody(_ request: Request, context: some RequestContext, hint: String) async throws {
        let buffer = try await body(of: request, context: context)
        guard buffer.readableBytes == 0 else { throw APIError.badRequest("this request takes no body; \(hint)") }
    }

    /// The body, up to the size limit. A `Content-Length` over it is refused before a byte of
    /// the body is read (a client announcing gigabytes gets its 413 at once, not after 16 KiB).
    private static func body(of request: Request, context: some RequestContext) async throws -> ByteBuffer {
        let tooLarge = APIError(.contentTooLarge, "body_too_large", "the body is over \(context.maxUploadSize) bytes")
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > context.maxUploadSize { throw tooLarge }
        do {
            return try await request.body.collect(upTo: context.maxUploadSize)
        } catch {
            throw tooLarge
        }
    }

    /// The body as a JSON object whose keys are all in `allowed`, decoded as `T`. A route with
    /// a body takes no query parameter: one given (`?side=right`) is refused, not ignored.
    package static func json<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext,
                                           allowed: Set<String>) async throws -> T {
        _ = try query(request, allowed: [])
        let buffer = try await body(of: request, context: context)
        let data = Data(buffer.readableBytesView)
        let object: Any
        // Fragments allowed, so `null` or `3` is told it must be an object, not that it is not JSON.
        do { object = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed) } catch {
            throw APIError.badRequest("the body is not valid JSON")
        }
        guard let dictionary = object as? [String: Any] else { throw APIError.badRequest("the body must be a JSON object") }
        let unknown = Set(dictionary.keys).subtracting(allowed)
        guard unknown.isEmpty else {
            throw APIError.badRequest("unknown field(s) \(unknown.sorted().map { "'\($0)'" }.joined(separator: ", ")); "
                                      + "allowed: \(allowed.sorted().joined(separator: ", "))")
        }
        // No field of any body may be null (the document allows none): an optional field is
        // left out, never sent as null — JSONDecoder alone would take null for "absent".
        if let null = dictionary.first(where: { $0.value is NSNull })?.key {
            throw APIError.badRequest("'\(null)' must not be null (leave it out instead)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError.badRequest("missing field '\(key.stringValue)'")
        } catch let DecodingError.typeMismatch(_, context) {
            throw APIError.badRequest("wrong type for '\(context.codingPath.map(\.stringValue).joined(separator: "."))'")
        } catch let DecodingError.valueNotFound(_, context) {
            throw APIError.badRequest("'\(context.codingPath.map(\.stringValue).joined(separator: "."))' must not be null")
        } catch DecodingError.dataCorrupted {
            // Well-formed JSON with a number its field cannot take: Foundation says "not valid
            // JSON" and names no field. Every whole-number field of the API's bodies refuses a
            // fraction, so a fraction in the body is the culprit.
            if let (key, value) = dictionary.first(where: { ($0.value as? NSNumber).map { $0.doubleValue != $0.doubleValue.rounded() } ?? false }) {
                throw APIError.badRequest("wrong value for '\(key)': a whole number is expected, got \(value)")
            }
            throw APIError.badRequest("the body has a value its field cannot take")
        } catch {
            throw APIError.badRequest("the body does not match: \(error)")
        }
    }

    package static func date(_ text: String?, name: String) throws -> CalendarDay? {
        guard let text else { return nil }
        guard let date = CalendarDay(text) else { throw APIError.badRequest("\(name) must be YYYY-MM-DD, got '\(text)'") }
        return date
    }

    package static func side(_ text: String?) throws -> BedSide? {
        guard let text else { return nil }
        guard let side = BedSide(rawValue: text), side == .left || side == .right else {
            throw APIError.badRequest("side must be left or right, got '\(text)'")
        }
        return side
    }
}

extension Response {
    /// A JSON answer (the API's only body type but for exports, metrics and the dashboard).
    package static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
