import Hummingbird

/// `HEAD` on any path is answered as `GET` would be, status and headers alike, without the
/// body (RFC 9110 §9.3.2: a general-purpose server must support HEAD). Uptime checkers and
/// `curl -I` probe `/healthz` this way; without it they got a 405.
///
/// It wraps the whole router, not a middleware inside it: the router picks the route by method
/// before its middleware runs, so the request must already be a GET when it gets there. An
/// error (401, 404, 405) is answered with its status and headers and no body too, and a stream
/// (`/live/events`) is never started: its body is what is dropped.
package struct HeadResponder<Wrapped: HTTPResponder>: HTTPResponder where Wrapped.Context: RequestContext {
    let wrapped: Wrapped

    package func respond(to request: Request, context: Wrapped.Context) async throws -> Response {
        guard request.method == .head else { return try await wrapped.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        let response: Response
        do {
            response = try await wrapped.respond(to: Request(head: head, body: request.body), context: context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        // The headers keep the GET's Content-Length, as HEAD's answer should.
        return Response(status: response.status, headers: response.headers, body: .init())
    }
}

/// The router, answering HEAD (`HeadResponder`).
package struct AnsweringHead<Builder: HTTPResponderBuilder>: HTTPResponderBuilder where Builder.Responder.Context: RequestContext {
    let router: Builder

    package func buildResponder() -> HeadResponder<Builder.Responder> { HeadResponder(wrapped: router.buildResponder()) }
}
