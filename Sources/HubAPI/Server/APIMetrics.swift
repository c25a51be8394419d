import Foundation
import Hub
import Hummingbird
import CoreMetrics
import Metrics
import PodDevice
import Prometheus
import SleepStore

/// The hub's Prometheus metrics (`/metrics`): swift-metrics objects on a registry of this
/// server's own (no global bootstrap, so tests can run several hubs in one process), fed
/// from the bus (link counters, readings, nights), from the store at scrape time (outbox)
/// and from the API itself (requests by route and status, live clients).
package final class APIMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    package init() {
        factory = PrometheusMetricsFactory(registry: registry)
    }

    func counter(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Counter {
        CoreMetrics.Counter(label: name, dimensions: dimensions, factory: factory)
    }

    func gauge(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Gauge {
        CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory)
    }

    /// One answered request; `route` is the route's pattern, never the raw path (bounded labels).
    func request(route: String, status: Int) {
        counter("podbridge_api_requests_total", [("route", route), ("status", String(status))]).increment()
    }

    /// The link's counters, each at 0 from the pod's connection on.
    static let linkCounters = ["podbridge_link_frames_total", "podbridge_link_bytes_total", "podbridge_link_crc_errors_total",
                               "podbridge_link_decode_errors_total", "podbridge_link_dropped_frames_total",
                               "podbridge_link_reconnects_total", "podbridge_link_timeouts_total", "podbridge_pod_reboots_total"]

    /// Follows the bus for as long as the task runs: counters as deltas of the link's
    /// cumulative counts, readings as gauges per pod and side.
    func follow(_ bus: HubBus) async {
        // Every counter is there from the first scrape, at 0: a rate() or an alert on a
        // series that appears only with its first event misses that event.
        for side in ["left", "right"] { _ = counter("podbridge_nights_stored_total", [("side", side)]) }
        for kind in AlarmNotice.Kind.allCases { _ = counter("podbridge_alarm_events_total", [("kind", kind.rawValue)]) }
        for outcome in SchedulePushNotice.Outcome.allCases {
            _ = counter("podbridge_schedule_pushes_total", [("outcome", outcome.rawValue)])
        }
        for kind in WakeNotice.Kind.allCases { _ = counter("podbridge_wake_events_total", [("kind", kind.rawValue)]) }
        var last: [String: LinkCounters] = [:]
        let events = bus.subscribe(name: "metrics", bufferSize: 1024)
        // A pod that connected before this subscription (the API starts beside the link).
        for serial in bus.state.pods.keys { for name in Self.linkCounters { _ = counter(name, [("pod", serial)]) } }
        for await event in events {
            switch event {
            case .linkCounters(let serial, let c):
                let before = last[serial] ?? LinkCounters()
                last[serial] = c
                func add(_ name: String, _ now: UInt64, _ was: UInt64) {
                    let delta = now >= was ? now - was : now
                    if delta > 0 { counter(name, [("pod", serial)]).increment(by: Int64(clamping: delta)) }
                }
                add("podbridge_link_frames_total", c.frames, before.frames)
                add("podbridge_link_bytes_total", c.bytes, before.bytes)
                add("podbridge_link_crc_errors_total", c.crcErrors, before.crcErrors)
                add("podbridge_link_decode_errors_total", c.malformed &+ c.unknownTypes, before.malformed &+ before.unknownTypes)
                add("podbridge_link_dropped_frames_total", c.droppedFrames, before.droppedFrames)
                add("podbridge_link_reconnects_total", c.reconnects, before.reconnects)
                add("podbridge_link_timeouts_total", c.timeouts, before.timeouts)
                add("podbridge_pod_reboots_total", c.podReboots, before.podReboots)
            case .live(let serial, let side, let s):
                let d = [("pod", serial), ("side", side.description)]
                gauge("podbridge_side_present", d).record(s.present ? 1 : 0)
                gauge("podbridge_side_heart_rate_bpm", d).record(s.heartRate ?? .nan)
                gauge("podbridge_side_breathing_rate_bpm", d).record(s.breathingRate ?? .nan)
                gauge("podbridge_side_movement", d).record(s.movement)
                gauge("podbridge_side_signal_quality", d).record(s.quality)
            case .podConnected(let pod, _, _):
                gauge("podbridge_pod_connected", [("pod", pod.serial)]).record(1)
                for name in Self.linkCounters { _ = counter(name, [("pod", pod.serial)]) }
            case .podDisconnected(let serial, _, _):
                gauge("podbridge_pod_connected", [("pod", serial)]).record(0)
            case .nightFinished(let n):
                counter("podbridge_nights_stored_total", [("side", n.side.description)]).increment()
            case .alarm(let a):
                counter("podbridge_alarm_events_total", [("kind", a.kind.rawValue)]).increment()
            case .schedulePushed(let p):
                counter("podbridge_schedule_pushes_total", [("outcome", p.outcome.rawValue)]).increment()
            case .wake(let w):
                counter("podbridge_wake_events_total", [("kind", w.kind.rawValue)]).increment()
            case .clockSet, .linkProblem, .presence, .preliminaryStage, .scheduleAcknowledged, .powerSet, .powerReported:
                break
            }
        }
    }

    /// The Prometheus text, with the values read now (outbox, live clients, bus drops).
    func render(store: NightStore, clients: LiveClients?, bus: HubBus?) async -> String {
        if let outbox = try? await store.outboxSummary() {
            gauge("podbridge_outbox_depth").record(outbox.pendingDue + outbox.pendingLater + outbox.inFlight)
            gauge("podbridge_upload_failures").record(outbox.failed)
            gauge("podbridge_uploads_delivered").record(outbox.delivered)
        }
        if let stats = clients?.stats {
            gauge("podbridge_api_live_clients", [("stream", "sse")]).record(stats.sseClients)
            gauge("podbridge_api_live_clients", [("stream", "ws")]).record(stats.wsClients)
            gauge("podbridge_api_live_missed_events").record(stats.missed)
            gauge("podbridge_api_live_slow_disconnects").record(stats.slowDisconnects)
        }
        if let bus {
            for s in bus.subscriberStats() where !s.name.hasPrefix("api-") {
                gauge("podbridge_bus_dropped_events", [("subscriber", s.name)]).record(s.dropped)
            }
        }
        return registry.emitToString()
    }
}

/// Counts every answer by route pattern and status (errors included).
package struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: APIMetrics

    package func handle(_ request: Request, context: Context,
                        next: (Request, Context) async throws -> Response) async throws -> Response {
        let route = context.endpointPath ?? "NotFound"
        do {
            let response = try await next(request, context)
            metrics.request(route: route, status: response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            metrics.request(route: route, status: error.status.code)
            throw error
        } catch {
            metrics.request(route: route, status: 500)
            throw error
        }
    }
}
