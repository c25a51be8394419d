import Hub
import Hummingbird
import SleepStore

/// `GET /healthz` (the process answers: always 200, never behind the token) and
/// `GET /readyz` (the store answers, its last write succeeded, and a pod is connected; 503
/// saying why not: a pod found but refused says why it was refused, not "is it plugged in?").
package struct HealthRoutes: Sendable {
    let store: NightStore
    let bus: HubBus

    func register(on router: Router<APIRequestContext>) {
        router.get("healthz") { _, _ in try Response.json(["status": "ok"]) }
        router.get("readyz") { _, _ in try await self.ready() }
    }

    func ready() async throws -> Response {
        do { _ = try await store.sessionCount() } catch {
            throw APIError.unavailable("the store does not answer: \(error)")
        }
        if let failure = store.storageFailure {
            throw APIError.unavailable("the store cannot write (nights are held until it can): \(failure)")
        }
        let pods = bus.state.pods.values
        if let pod = pods.first(where: \.connected) {
            return try Response.json(["status": "ready", "pod": pod.pod.serial])
        }
        if let problem = bus.state.linkProblem {
            throw APIError.unavailable("the pod was found but cannot be used: \(problem.detail)")
        }
        if let gone = pods.max(by: { $0.since < $1.since }) {
            throw APIError.unavailable("pod \(gone.pod.serial) disconnected (\(gone.lastDisconnectReason ?? "unknown reason")); "
                                       + "waiting for it to come back")
        }
        throw APIError.unavailable("no pod connected yet: is it plugged in (podbridge devices)?")
    }
}
