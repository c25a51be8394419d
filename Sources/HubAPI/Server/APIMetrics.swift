import Foundation
import Hub
import Hummingbird
import Prometheus
import SleepStore
import Synchronization

/// The hub's Prometheus metrics (`/metrics`): swift-prometheus objects, each family with its
/// help text, on a registry of this server's own (no global bootstrap, so tests can run several
/// hubs in one process), fed
/// from the bus (link counters, readings, nights), from the store at scrape time (outbox)
/// and from the API itself (requests by route and status, live clients).
package final class APIMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// What the tallies read at scrape time stood at when last added to their counters.
    private let tallied = Mutex<[String: Int]>([:])

    package init() {}

    func counter(_ name: String, _ dimensions: [(String, String)] = []) -> Prometheus.Counter {
        registry.makeCounter(descriptor: Self.descriptor(name), labels: dimensions)
    }

    func gauge(_ name: String, _ dimensions: [(String, String)] = []) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: Self.descriptor(name), labels: dimensions)
    }

    /// The whole name as the metric name (no namespace or unit parts to join), with its help.
    static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "")
    }

    /// Each family's `# HELP` line: what a dashboard's author reads in Prometheus and Grafana.
    static let help: [String: String] = [
        "podbridge_api_requests_total": "HTTP requests answered, by route pattern and status",
        "podbridge_link_frames_total": "Frames received from the pod",
        "podbridge_link_bytes_total": "Bytes received from the pod",
        "podbridge_link_crc_errors_total": "Frames from the pod dropped for a bad CRC",
        "podbridge_link_decode_errors_total": "Frames from the pod that could not be decoded (malformed or of an unknown type)",
        "podbridge_link_dropped_frames_total": "Frames the pod could not send (its transmit queue was full) or lost on the way (sequence gaps)",
        "podbridge_link_reconnects_total": "Times the link to the pod was opened again",
        "podbridge_link_timeouts_total": "Requests to the pod that went unanswered",
        "podbridge_pod_reboots_total": "Pod resets seen by the hub (its BOOT event or a new boot count)",
        "podbridge_pod_connected": "1 while the pod's link is up, 0 when it is down",
        "podbridge_side_present": "1 while someone is on the side, 0 when not (the newest second)",
        "podbridge_side_heart_rate_bpm": "Heart rate on the side, beats per minute (NaN without a reading)",
        "podbridge_side_breathing_rate_bpm": "Breathing rate on the side, breaths per minute (NaN without a reading)",
        "podbridge_side_movement": "Movement index on the side (0 still)",
        "podbridge_side_signal_quality": "Signal quality on the side, 0 to 1",
        "podbridge_nights_stored_total": "Nights stored as final, by side",
        "podbridge_alarm_events_total": "Alarm events from the pod, by kind",
        "podbridge_schedule_pushes_total": "Schedule, alarm and clock commands sent to the pod, by outcome",
        "podbridge_wake_events_total": "Smart-wake events, by kind",
        "podbridge_outbox_depth": "Sleep sessions waiting to be uploaded",
        "podbridge_upload_failures": "Sleep sessions whose upload failed for good",
        "podbridge_uploads_delivered": "Sleep sessions uploaded",
        "podbridge_api_live_clients": "Live-stream clients attached, by stream",
        "podbridge_api_live_missed_events_total": "Live-stream events dropped for clients that did not keep up",
        "podbridge_api_live_slow_disconnects_total": "Live-stream clients cut off for falling too far behind",
        "podbridge_bus_dropped_events_total": "Events the hub's own subscribers dropped, by subscriber",
    ]

    /// Brings a counter up to `total`, a tally of the hub's that only grows (it is read at
    /// scrape time, not told of each event): a counter, so `rate()` and `increase()` work.
    func count(_ name: String, _ dimensions: [(String, String)] = [], upTo total: Int) {
        let key = ([name] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: ",")
        let c = counter(name, dimensions)
        tallied.withLock { last in
            let delta = total - (last[key] ?? 0)
            if delta > 0 { c.increment(by: Int64(delta)) }
            last[key] = max(total, last[key] ?? 0)
        }
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
        var last: [String: LinkStats] = [:]
        // The live seconds are no metric: not queued, so this task sleeps through them.
        let events = bus.subscribe(name: "metrics", bufferSize: 1024, accepts: { !$0.isLive })
        // A pod that connected before this subscription (the API starts beside the link).
        for serial in bus.state.pods.keys { for name in Self.linkCounters { _ = counter(name, [("pod", serial)]) } }
        for await event in events {
            switch event {
            case .linkCounters(let serial, let c):
                let before = last[serial] ?? LinkStats()
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
            case .podConnected(let pod, _, _):
                gauge("podbridge_pod_connected", [("pod", pod.serial)]).record(Int64(1))
                for name in Self.linkCounters { _ = counter(name, [("pod", pod.serial)]) }
            case .podDisconnected(let serial, _, _):
                gauge("podbridge_pod_connected", [("pod", serial)]).record(Int64(0))
            case .nightFinished(let n):
                counter("podbridge_nights_stored_total", [("side", n.side.description)]).increment()
            case .alarm(let a):
                counter("podbridge_alarm_events_total", [("kind", a.kind.rawValue)]).increment()
            case .schedulePushed(let p):
                counter("podbridge_schedule_pushes_total", [("outcome", p.outcome.rawValue)]).increment()
            case .wake(let w):
                counter("podbridge_wake_events_total", [("kind", w.kind.rawValue)]).increment()
            case .presencePower(let p):
                counter("podbridge_presence_power_changes_total", [("action", p.action), ("outcome", p.outcome)]).increment()
            // Readings are read from the bus's state at scrape time (`render`): a second per
            // side, thousands a second at the demo's 1800×, five registry look-ups each here
            // made this subscriber fall behind and drop the events it counts.
            case .live, .clockSet, .linkProblem, .presence, .preliminaryStage, .scheduleAcknowledged, .powerSet, .powerReported,
                 .presencePowerSettings, .wakeSettings:
                break
            }
        }
    }

    /// The Prometheus text, with the values read now (outbox, live clients, readings, bus drops).
    func render(store: NightStore, clients: LiveClients?, bus: HubBus?) async -> String {
        if let outbox = try? await store.outboxSummary() {
            gauge("podbridge_outbox_depth").record(Int64(outbox.pendingDue + outbox.pendingLater + outbox.inFlight))
            gauge("podbridge_upload_failures").record(Int64(outbox.failed))
            gauge("podbridge_uploads_delivered").record(Int64(outbox.delivered))
        }
        if let stats = clients?.stats {
            gauge("podbridge_api_live_clients", [("stream", "sse")]).record(Int64(stats.sseClients))
            gauge("podbridge_api_live_clients", [("stream", "ws")]).record(Int64(stats.wsClients))
            count("podbridge_api_live_missed_events_total", upTo: stats.missed)
            count("podbridge_api_live_slow_disconnects_total", upTo: stats.slowDisconnects)
        }
        if let bus {
            for (serial, pod) in bus.state.pods {
                for (side, s) in pod.live {
                    let d = [("pod", serial), ("side", side.description)]
                    gauge("podbridge_side_present", d).record(Int64(s.present ? 1 : 0))
                    gauge("podbridge_side_heart_rate_bpm", d).record(s.heartRate ?? .nan)
                    gauge("podbridge_side_breathing_rate_bpm", d).record(s.breathingRate ?? .nan)
                    gauge("podbridge_side_movement", d).record(s.movement)
                    gauge("podbridge_side_signal_quality", d).record(s.quality)
                }
            }
            for s in bus.subscriberStats() where !s.name.hasPrefix("api-") {
                count("podbridge_bus_dropped_events_total", [("subscriber", s.name)], upTo: s.dropped)
            }
        }
        return registry.emitToString()
    }
}

/// Counts every answer by route pattern and status (errors included). A request the router
/// did not route (a CORS preflight, a method its path has not) is counted under its path's
/// pattern all the same; only a path the API has not is `NotFound`.
package struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: APIMetrics
    let knownPaths: MethodNotAllowedMiddleware<Context>
    /// Routes whose `200` is a WebSocket upgrade, written to the client as `101`.
    let upgradeRoutes: Set<String>

    package func handle(_ request: Request, context: Context,
                        next: (Request, Context) async throws -> Response) async throws -> Response {
        let route = context.endpointPath ?? knownPaths.template(path: request.uri.path) ?? "NotFound"
        do {
            let response = try await next(request, context)
            let upgraded = response.status == .ok && upgradeRoutes.contains(route)
            metrics.request(route: route, status: upgraded ? 101 : response.status.code)
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
