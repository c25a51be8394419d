import TestSupport
import Foundation
import SleepDomain
import Hub
import HubAPI
import PodProtocol
import SleepStore
import NIOHTTP1
import Testing

/// Commands and the manual schedule through the API against the virtual pod (firmware
/// only), bad input refused before the pod or the store, and the token.
@Suite(.serialized) struct APIControlTests {
    @Test func aManualScheduleSetThroughTheAPIReachesThePodAndBadInputReachesNothing() async throws {
        let hub = try await APITestHub.start(serial: "API-CTL", speed: 10)
        #expect(await eventually { hub.daemon.bus.state.pods["API-CTL"]?.connected == true },
                "never connected; the hub said \(hub.lines.all.suffix(10))")
        #expect(try await hub.get("/readyz").status == 200)

        // Set: the pod ends up holding the alarm at the manual wake time.
        let set = try await hub.request(.PUT, "/api/v1/schedule/manual",
                                        body: #"{"side": "left", "bedtime": "22:45", "wake": "06:15"}"#)
        #expect(set.status == 200, "\(set.body)")
        #expect((set.json?["sides"] as? [String]) == ["left"])
        #expect(await eventually { hub.pod.currentSchedule(side: .left)?.alarm?.time == TimeOfDay(wrapping: 6 * 60 + 15) },
                "the pod holds \(String(describing: hub.pod.currentSchedule(side: .left)))")
        let shown = try await hub.get("/api/v1/schedule")
        #expect(shown.status == 200)
        let left = try #require((shown.json?["sides"] as? [[String: Any]])?.first { $0["side"] as? String == "left" })
        #expect((left["manual"] as? [String: Any])?["weekdayWake"] as? String == "06:15")
        // What the inference alone gives, beside the manual schedule: the schedule service's
        // decision, read, not worked out again by the API (no nights: the default).
        #expect((left["inference"] as? [String: Any])?["origin"] as? String == "default", "\(left)")
        #expect(await eventually {
            let s = try? await hub.get("/api/v1/schedule")
            let l = (s?.json?["sides"] as? [[String: Any]])?.first { $0["side"] as? String == "left" }
            return (l?["inForce"] as? [String: Any])?["acknowledged"] as? Bool == true
        })

        // A wake window alone: stored for the side, the manual schedule and the pod's alarm unchanged.
        let window = try await hub.request(.PUT, "/api/v1/schedule/manual",
                                           body: #"{"side": "left", "windowMinutes": 30, "untilOutOfBed": true}"#)
        #expect(window.status == 200, "\(window.body)")
        #expect((window.json?["lines"] as? [String])?.first?.contains("30-min window") == true, "\(window.body)")
        let wake = try #require(try await hub.daemon.store.wakeSettings(podSerial: "API-CTL", side: .left))
        #expect(wake.windowMinutes == 30 && wake.untilOutOfBed)
        #expect(try await hub.daemon.store.wakeSettings(podSerial: "API-CTL", side: .right) == nil)
        #expect(try await hub.daemon.store.manualSchedule(podSerial: "API-CTL", side: .left)?.weekdayWake == "06:15")

        // A command answered by the pod. The left side keeps what its schedule gave it (on inside
        // its window: the hub restores it after the start-up, firmware-protocol.md §7.4).
        let leftPower = hub.pod.snapshot.powerOn.first ?? false
        let power = try await hub.request(.POST, "/api/v1/pods/API-CTL/power", body: #"{"side": "right", "on": true, "level": 40}"#)
        #expect(power.status == 200 && power.json?["answer"] as? String == "ack", "\(power.body)")
        #expect(hub.pod.snapshot.powerOn == [leftPower, true])
        // `/pods` says what the pod is doing: the left side as its status reported it, the right
        // as it acknowledged the command.
        let powerKnown = await eventually {
            let pod = (try? await hub.get("/api/v1/pods"))?.json.flatMap { ($0["pods"] as? [[String: Any]])?.first }
            let power = pod?["power"] as? [String: Any]
            return power?.count == 2 && power?["left"] as? Bool == leftPower && power?["right"] as? Bool == true
        }
        let pods = try await hub.get("/api/v1/pods").body
        #expect(powerKnown, "\(pods)")
        let snooze = try await hub.request(.POST, "/api/v1/pods/API-CTL/alarm/snooze", body: #"{"side": "left", "seconds": 60}"#)
        #expect(snooze.status == 200 && snooze.json?["answer"] as? String == "nack", "nothing rings: \(snooze.body)")
        // Stop is CLEAR_ALARM, which clears the pod's alarm too: the hub arms it again (at 22:00
        // today's 06:15 is past, so at once), and the next morning still rings.
        let stop = try await hub.request(.POST, "/api/v1/pods/API-CTL/alarm/stop", body: #"{"side": "left"}"#)
        #expect(stop.status == 200 && stop.json?["answer"] as? String == "ack", "\(stop.body)")
        #expect(await eventually { hub.lines.all.contains { $0.contains("left: alarm cleared on the pod by a stop; armed again now") } },
                "\(hub.lines.all.suffix(10))")
        #expect(await eventually { hub.pod.currentSchedule(side: .left)?.alarm?.time == TimeOfDay(wrapping: 6 * 60 + 15) },
                "the pod holds \(String(describing: hub.pod.currentSchedule(side: .left)))")

        // Bad requests: each a 4xx JSON error, none reaching the pod or the store.
        let store = hub.daemon.store
        let manualBefore = try await store.manualSchedule(podSerial: "API-CTL", side: .left)
        let pushesBefore = try await store.schedulePushes(podSerial: "API-CTL").count
        let scheduleBefore = hub.pod.currentSchedule(side: .left)
        let huge = "{\"side\": \"left\", \"bedtime\": \"22:00\", \"wake\": \"06:00\", \"x\": \"" + String(repeating: "a", count: 200_000) + "\"}"
        let bad: [(HTTPMethod, String, String?, Int)] = [
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "bedtime": "22:00", "wake": "#, 400),  // malformed
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "bedtime": "22:00", "wake": "06:00", "snooze": 5}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "bedtime": "25:00", "wake": "06:00"}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "bedtime": "7:5", "wake": "06:00"}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "middle", "bedtime": "22:00", "wake": "06:00"}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"pod": "NOPE", "side": "left", "bedtime": "22:00", "wake": "06:00"}"#, 404),
            (.PUT, "/api/v1/schedule/manual", #"["left"]"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "bedtime": 2200, "wake": "06:00"}"#, 400),
            (.PUT, "/api/v1/schedule/manual", huge, 413),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "windowMinutes": 121}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "windowMinutes": -1}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "windowMinutes": 30.5}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "bedtime": "07:00", "wake": "07:00"}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left", "bedtime": "22:00"}"#, 400),
            (.PUT, "/api/v1/schedule/manual", #"{"side": "left"}"#, 400),
            (.DELETE, "/api/v1/schedule/manual?side=top", nil, 400),
            (.DELETE, "/api/v1/schedule/manual?side=left&force=1", nil, 400),
            // A body where the route reads none, and a query where it reads a body: each would
            // be ignored and the request act on another side than asked.
            (.DELETE, "/api/v1/schedule/manual", #"{"side": "left"}"#, 400),
            (.PUT, "/api/v1/schedule/manual?side=right", #"{"side": "left", "windowMinutes": 5}"#, 400),
            (.POST, "/api/v1/pods/API-CTL/alarm/stop?force=1", #"{"side": "left"}"#, 400),
            (.POST, "/api/v1/pods/NOPE/power", #"{"side": "left", "on": true, "level": 40}"#, 404),
            (.POST, "/api/v1/pods/API-CTL/power", #"{"side": "left", "on": true, "level": 250}"#, 400),
            (.POST, "/api/v1/pods/API-CTL/power", #"{"side": "up", "on": true}"#, 400),
            (.POST, "/api/v1/pods/API-CTL/alarm/stop", #"{"side": "left", "now": true}"#, 400),
            (.POST, "/api/v1/pods/API-CTL/alarm/snooze", #"{"side": "left", "seconds": 99999}"#, 400),
            (.GET, "/api/v1/nights?from=2026-13-01", nil, 400),
            (.GET, "/api/v1/nights?from=2026-11-20&to=2026-11-01", nil, 400),
            (.GET, "/api/v1/nights/yesterday/left", nil, 400),
            (.GET, "/api/v1/nights/2026-11-17/middle", nil, 400),
            (.GET, "/api/v1/export?format=pdf&all=true", nil, 400),
            (.GET, "/api/v1/schedule?pod=NOPE", nil, 404),
            (.GET, "/api/v1/schedule?pod=", nil, 400),
            (.DELETE, "/api/v1/schedule/manual?side=", nil, 400),
            (.GET, "/api/v1/nowhere", nil, 404),
        ]
        let blocksEpochs = try await hub.request(.GET, "/api/v1/export?format=blocks&all=true&epochs=true")
        #expect(blocksEpochs.status == 400 && blocksEpochs.json?["detail"] as? String == "epochs=true applies to the json and csv formats only",
                "\(blocksEpochs.body)")
        // A body announced far over the limit is refused at once, unread: the client sends the
        // head only and waits (it would wait for ever if the hub waited for the body).
        let url = try #require(URL(string: hub.base))
        let (probeStatus, probe) = try await runTool(["python3", "-c", """
            import socket
            s = socket.create_connection(("\(url.host ?? "")", \(url.port ?? 0)), 10)
            s.sendall(b"PUT /api/v1/schedule/manual HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\n"
                      b"Content-Length: 99999999999\\r\\n\\r\\n")
            s.settimeout(20)
            print(s.recv(4096).decode().split("\\r\\n")[0])
            """], deadline: 60)
        #expect(probeStatus == 0 && probe.contains("413"), "\(probe)")
        let fraction = try await hub.request(.PUT, "/api/v1/schedule/manual", body: #"{"side": "left", "windowMinutes": 30.5}"#)
        #expect(fraction.json?["detail"] as? String == "wrong value for 'windowMinutes': a whole number is expected, got 30.5", "\(fraction.body)")
        for fragment in ["null", "3", #""left""#] {
            let answer = try await hub.request(.PUT, "/api/v1/schedule/manual", body: fragment)
            #expect(answer.status == 400 && answer.json?["detail"] as? String == "the body must be a JSON object", "\(fragment): \(answer.body)")
        }
        let emptyPod = try await hub.get("/api/v1/schedule?pod=")
        #expect(emptyPod.json?["detail"] as? String == "query parameter 'pod' is empty", "\(emptyPod.body)")
        let sameTime = try await hub.request(.PUT, "/api/v1/schedule/manual", body: #"{"side": "left", "bedtime": "07:00", "wake": "07:00"}"#)
        #expect((sameTime.json?["detail"] as? String)?.contains("bedtime and wake are both 07:00") == true, "\(sameTime.body)")
        for (method, path, body, status) in bad {
            let answer = try await hub.request(method, path, body: body)
            #expect(answer.status == status, "\(method) \(path): \(answer.status) \(answer.body.prefix(200))")
            #expect(answer.contentType?.hasPrefix("application/json") == true, "\(method) \(path)")
            #expect(answer.json?["error"] is String && answer.json?["detail"] is String, "\(method) \(path): \(answer.body.prefix(200))")
        }
        #expect(try await store.manualSchedule(podSerial: "API-CTL", side: .left) == manualBefore)
        #expect(try await store.manualSchedule(podSerial: "API-CTL", side: .right) == nil)
        #expect(try await store.wakeSettings(podSerial: "API-CTL", side: .left)?.windowMinutes == 30)
        #expect(try await store.schedulePushes(podSerial: "API-CTL").count == pushesBefore)
        #expect(try await store.pods().map(\.serial) == ["API-CTL"])
        #expect(hub.pod.currentSchedule(side: .left) == scheduleBefore)
        #expect(hub.pod.snapshot.powerOn == [leftPower, true])

        // Clear: back to the inferred (default) schedule on the pod.
        let clear = try await hub.request(.DELETE, "/api/v1/schedule/manual?side=left")
        #expect(clear.status == 200, "\(clear.body)")
        #expect(try await store.manualSchedule(podSerial: "API-CTL", side: .left) == nil)
        #expect(await eventually { hub.pod.currentSchedule(side: .left)?.alarm?.time != TimeOfDay(wrapping: 6 * 60 + 15) })
        await hub.stop()
    }

    /// A pod the hub finds and cannot use reads as that, with the log's advice, until it
    /// connects: `/readyz` used to ask "is it plugged in?" of a pod plugged in and refused.
    @Test func aPodThatCannotBeOpenedIsNamedUntilItConnects() async throws {
        let dir = try TempDir()
        let later = dir.path("pod-later")
        let hub = try await APITestHub.start(serial: "API-LATE", speed: 10, directory: dir) { $0.pod.path = later }
        // Nothing at the path: no pod yet, not a pod found and refused (the log says to check
        // pod.path).
        #expect(await eventually { hub.lines.all.contains { $0.contains("The device is not there") } }, "\(hub.lines.all.suffix(10))")
        let none = try await hub.get("/readyz")
        #expect(none.status == 503 && none.body.contains("is it plugged in") && !none.body.contains("cannot be used"), "\(none.body)")
        #expect(try await hub.get("/api/v1/pods").json?["linkProblem"] == nil)
        // Something there that is no pod's tty: found, and refused.
        _ = FileManager.default.createFile(atPath: later, contents: Data("not a pod".utf8))
        #expect(await eventually { hub.daemon.bus.state.linkProblem != nil }, "\(hub.lines.all.suffix(10))")
        let ready = try await hub.get("/readyz")
        #expect(ready.status == 503)
        let reason = ready.json?["detail"] as? String ?? ready.body
        #expect(reason.contains("the pod was found but cannot be used") && reason.contains("the pod link failed"), "\(ready.body)")
        #expect(!reason.contains("is it plugged in"), "\(ready.body)")
        let pods = try await hub.get("/api/v1/pods")
        let problem = try #require(pods.json?["linkProblem"] as? [String: Any], "\(pods.body)")
        #expect((problem["detail"] as? String)?.contains("tcgetattr") == true, "\(pods.body)")
        #expect(problem["since"] is String)
        // Taken away again: the problem is over, as for an unplugged pod.
        try FileManager.default.removeItem(atPath: later)
        #expect(await eventually { hub.daemon.bus.state.linkProblem == nil }, "\(hub.lines.all.suffix(10))")

        // The pod appears where the hub looks: it connects, and the problem is over.
        try FileManager.default.createSymbolicLink(atPath: later, withDestinationPath: dir.path("pod-link"))
        #expect(await eventually { (try? await hub.get("/readyz"))?.status == 200 }, "\(hub.lines.all.suffix(10))")
        let after = try await hub.get("/api/v1/pods")
        #expect(after.json?["linkProblem"] == nil, "\(after.body)")
        #expect(((after.json?["pods"] as? [[String: Any]])?.first?["connected"] as? Bool) == true, "\(after.body)")
        await hub.stop()
    }

    @Test func withATokenEveryRequestButHealthzNeedsIt() async throws {
        let hub = try await APITestHub.start(serial: "API-AUTH", speed: 10, token: "s3cret-token")
        for path in ["/api/v1/pods", "/api/v1/live", "/api/v1/nights", "/api/v1/schedule", "/metrics", "/readyz",
                     "/api/v1/openapi.json", "/api/v1/live/events", "/api/v1/live/ws"] {
            for token in [nil, "wrong", "s3cret-tokenX", "s3cret-toke", ""] as [String?] {
                let answer = try await hub.get(path, token: token)
                #expect(answer.status == 401, "\(path) with \(token ?? "no token"): \(answer.status)")
                #expect(answer.json?["error"] as? String == "unauthorized")
            }
        }
        let denied = try await hub.request(.PUT, "/api/v1/schedule/manual", body: #"{"side": "left", "bedtime": "22:00", "wake": "06:00"}"#)
        #expect(denied.status == 401)
        #expect(try await hub.get("/healthz").status == 200)
        #expect(try await hub.get("/api/v1/pods", token: "s3cret-token").status == 200)
        // HEAD answers as GET would, without the body: uptime checkers probe /healthz so.
        let healthHead = try await hub.request(.HEAD, "/healthz")
        let healthGet = try await hub.get("/healthz")
        #expect(healthHead.status == 200 && healthHead.body.isEmpty, "\(healthHead.status) \(healthHead.body)")
        #expect(healthHead.headers.first(name: "content-length") == "\(healthGet.body.utf8.count)")
        let podsHead = try await hub.request(.HEAD, "/api/v1/pods", token: "s3cret-token")
        #expect(podsHead.status == 200 && podsHead.body.isEmpty && podsHead.contentType?.hasPrefix("application/json") == true)
        let deniedHead = try await hub.request(.HEAD, "/api/v1/pods")
        #expect(deniedHead.status == 401 && deniedHead.body.isEmpty, "\(deniedHead.status) \(deniedHead.body)")
        #expect(try await hub.request(.HEAD, "/api/v1/nowhere", token: "s3cret-token").status == 404)
        // A known path with a method it lacks: 405, and HEAD listed wherever GET is.
        let post = try await hub.request(.POST, "/healthz")
        #expect(post.status == 405 && post.headers.first(name: "allow") == "GET, HEAD", "\(post.status) \(post.headers)")
        let putPower = try await hub.request(.GET, "/api/v1/pods/API-AUTH/power", token: "s3cret-token")
        #expect(putPower.status == 405 && putPower.headers.first(name: "allow") == "POST", "\(putPower.headers)")
        #expect(try await hub.get("/api/v1/openapi.json", token: "s3cret-token").status == 200)
        // The WebSocket route asked without an upgrade: a reason naming the SSE stream, not an empty 200.
        let plain = try await hub.get("/api/v1/live/ws", token: "s3cret-token")
        #expect(plain.status == 400 && (plain.json?["detail"] as? String)?.contains("/api/v1/live/events") == true, "\(plain.body)")
        // The dashboard's static files hold no data: a browser must be able to open the page.
        #expect(try await hub.get("/").status == 200)
        #expect(try await hub.get("/dashboard/app.js").status == 200)
        let sse = StreamClient.sse(hub.http, base: hub.base, token: "s3cret-token")
        #expect(await eventually(60) { !sse.messages(ofType: "hello").isEmpty })
        await sse.close()
        #expect(try await hub.daemon.store.manualSchedule(podSerial: "API-AUTH", side: .left) == nil)
        await hub.stop()
    }

    @Test func withoutATokenOnlyLoopbackIsServed() async throws {
        // No token on loopback: open.
        let hub = try await APITestHub.start(serial: "API-OPEN", speed: 10)
        #expect(try await hub.get("/api/v1/pods").status == 200)
        await hub.stop()
        // Anything else refuses to start, even if the configuration check was skipped.
        try await APITestHub.expectNeverStarts(naming: "api.token") { $0.api.listen = "0.0.0.0:0" }
    }

    /// A day holding several sessions (the night, a nap, a session still open): the night's
    /// detail is the longest final one, and `?session=` picks any of them by the list's id, so
    /// a client shows one session's summary with that same session's hypnogram.
    @Test func aDayOfSeveralSessionsGivesTheNightOrTheSessionAsked() async throws {
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.path("state"), withIntermediateDirectories: true)
        let store = try NightStore(path: dir.path("state/podbridge.sqlite"), timeZone: .gmt)
        let day = Int64(1_794_787_200)  // 2026-11-16 00:00 UTC
        func record(from start: Int64, minutes: Int, final: Bool) -> NightRecord {
            let epochs = (0..<(minutes * 2)).map { EpochRecord(start: start + Int64($0) * 30, stage: .core) }
            let m = Double(minutes)
            return NightRecord(podSerial: "API-DAY", side: .left, start: start, end: start + Int64(minutes) * 60, epochs: epochs,
                               metrics: NightMetrics(timeInBedMinutes: m, totalSleepMinutes: m, efficiency: 100, onsetLatencyMinutes: 0,
                                                     wasoMinutes: 0, awakenings: 0, awakeMinutes: 0, coreMinutes: m, deepMinutes: 0,
                                                     remMinutes: 0, awakePercent: 0, corePercent: 100, deepPercent: 0, remPercent: 0,
                                                     meanHeartRate: 55, meanHRV: nil, meanBreathingRate: 13, score: minutes / 10),
                               isFinal: final)
        }
        _ = try await store.save(record(from: day - 3600, minutes: 360, final: true))          // 23:00–05:00, the night
        _ = try await store.save(record(from: day + 13 * 3600, minutes: 40, final: true))      // 13:00–13:40, a nap
        _ = try await store.save(record(from: day + 14 * 3600, minutes: 480, final: false))    // 14:00–22:00, still open
        try store.close()
        let hub = try await APITestHub.start(serial: "API-DAY", speed: 1, directory: dir)
        let list = try #require(try await hub.get("/api/v1/nights?from=2026-11-16&to=2026-11-16&side=left").json?["nights"] as? [[String: Any]])
        #expect(list.count == 3, "\(list)")
        func id(minutes: Double) throws -> Int {
            try #require(list.first { ($0["metrics"] as? [String: Any])?["timeInBedMinutes"] as? Double == minutes }?["id"] as? Int)
        }
        let (nightID, napID, openID) = (try id(minutes: 360), try id(minutes: 40), try id(minutes: 480))
        let night = try await hub.get("/api/v1/nights/2026-11-16/left")
        #expect(night.status == 200 && (night.json?["night"] as? [String: Any])?["id"] as? Int == nightID,
                "the night is the longest final session: \(night.body.prefix(300))")
        let nap = try await hub.get("/api/v1/nights/2026-11-16/left?session=\(napID)")
        #expect(nap.status == 200 && (nap.json?["night"] as? [String: Any])?["id"] as? Int == napID, "\(nap.body.prefix(300))")
        #expect((nap.json?["epochs"] as? [Any])?.count == 80)
        let open = try await hub.get("/api/v1/nights/2026-11-16/left?session=\(openID)")
        #expect(open.status == 200 && (open.json?["night"] as? [String: Any])?["final"] as? Bool == false)
        #expect(try await hub.get("/api/v1/nights/2026-11-16/left?session=999999").status == 404)
        #expect(try await hub.get("/api/v1/nights/2026-11-17/left?session=\(napID)").status == 404)
        #expect(try await hub.get("/api/v1/nights/2026-11-16/left?session=nap").status == 400)
        #expect(try await hub.get("/api/v1/nights/2026-11-16/left?sessions=1").status == 400)
        await hub.stop()
    }

    /// Without a token the API is this machine's alone: a page elsewhere cannot post commands
    /// through the user's browser (cross-site), read it under a name of its own (DNS rebinding),
    /// and a proxy cannot pass the LAN in. What the dashboard and local tools send still works.
    @Test func withoutATokenOtherSitesNamesAndProxiesAreRefused() async throws {
        // Noon: no power window of the default schedule switches the pod while this runs.
        let hub = try await APITestHub.start(serial: "API-SITE", speed: 10, start: Date(timeIntervalSince1970: 1_794_830_400))
        #expect(await eventually { hub.daemon.control.connectedSerials == ["API-SITE"] }, "\(hub.lines.all.suffix(10))")
        let url = try #require(URL(string: hub.base))
        // Each request as a browser or proxy would send it: status and the error's detail.
        func send(_ method: String, _ path: String, headers: [String: String], body: String? = nil) async throws -> String {
            let (status, output) = try await runTool(["python3", "-c", """
                import http.client, json, sys
                c = http.client.HTTPConnection("\(url.host ?? "")", \(url.port ?? 0), timeout=20)
                c.putrequest(sys.argv[1], sys.argv[2], skip_host=True, skip_accept_encoding=True)
                headers = json.loads(sys.argv[3])
                body = sys.argv[4].encode() if len(sys.argv) > 4 else None
                for k, v in headers.items(): c.putheader(k, v)
                if body is not None: c.putheader("Content-Length", str(len(body)))
                c.endheaders(body)
                r = c.getresponse()
                print(r.status, r.read().decode())
                """, method, path, String(decoding: try JSONSerialization.data(withJSONObject: headers), as: UTF8.self)]
                + (body.map { [$0] } ?? []), deadline: 60)
            #expect(status == 0, "\(output)")
            return output
        }
        let own = "127.0.0.1:\(url.port ?? 0)"
        let power = "/api/v1/pods/API-SITE/power"
        let on = #"{"side": "right", "on": true, "level": 30}"#
        // A page on another site posting a command as text/plain (no preflight): refused, unsent.
        let forged = try await send("POST", power, headers: ["Host": own, "Origin": "http://evil.example",
                                                              "Content-Type": "text/plain"], body: on)
        #expect(forged.hasPrefix("403") && forged.contains("cross-site"), "\(forged)")
        #expect(hub.pod.snapshot.powerOn.last == false)
        // A name of the attacker's pointing at 127.0.0.1: nothing is read.
        let rebound = try await send("GET", "/api/v1/pods", headers: ["Host": "rebind.evil.example:\(url.port ?? 0)"])
        #expect(rebound.hasPrefix("403") && rebound.contains("api.token"), "\(rebound)")
        // Through a proxy, which passes the LAN in.
        let proxied = try await send("GET", "/api/v1/pods", headers: ["Host": own, "X-Forwarded-For": "192.168.1.20"])
        #expect(proxied.hasPrefix("403") && proxied.contains("proxy"), "\(proxied)")
        // The dashboard's own request (its origin is the hub's), a local tool (no Origin), and
        // localhost and [::1] as names: answered.
        let page = try await send("POST", power, headers: ["Host": own, "Origin": "http://\(own)", "Content-Type": "application/json"],
                                  body: on)
        #expect(page.hasPrefix("200") && page.contains("ack"), "\(page)")
        #expect(hub.pod.snapshot.powerOn.last == true)
        #expect(try await send("GET", "/api/v1/pods", headers: ["Host": "localhost:\(url.port ?? 0)"]).hasPrefix("200"))
        #expect(try await send("GET", "/readyz", headers: ["Host": "[::1]:\(url.port ?? 0)"]).hasPrefix("200"))
        #expect(try await send("GET", "/api/v1/pods", headers: ["Host": own, "Origin": "http://evil.example"]).hasPrefix("200"),
                "a read carries no change; the browser keeps its answer from the other site")
        await hub.stop()
    }

    /// An SSE stream with nothing to say still sends a comment line every 15 s, so a reverse
    /// proxy (nginx closes a response silent for 60 s) keeps it open; EventSource ignores it.
    @Test func anIdleEventStreamKeepsAlive() async throws {
        let dir = try TempDir()
        // No pod at the path: no readings, the stream's only message is its hello.
        let hub = try await APITestHub.start(serial: "API-IDLE", speed: 1, directory: dir) { $0.pod.path = dir.path("no-pod") }
        let (_, output) = try await runTool(["curl", "-sN", "--max-time", "17", hub.base + "/api/v1/live/events"], deadline: 60)
        #expect(output.contains("event: hello"), "\(output)")
        #expect(output.components(separatedBy: "\n").contains(": keep-alive"), "\(output)")
        await hub.stop()
    }

    /// The readings' gauges are each side's newest second, however many came since the last
    /// scrape: read from the hub's state when scraped, not followed event by event.
    @Test func theReadingsGaugesAreTheNewestSecond() async throws {
        let dir = try TempDir()
        let hub = try await APITestHub.start(serial: "API-GAUGE", speed: 1, directory: dir) { $0.pod.path = dir.path("no-pod") }
        let pod = PodSummary(serial: "GAUGE", firmware: "1.2.3", protocolVersion: 1, sides: 2, piezoChannelsPerSide: 2,
                             sampleRate: 500, bootCount: 1)
        hub.daemon.bus.publish(.podConnected(pod, endpoint: "/dev/ttyACM0", at: Date()))
        for n in 0..<5000 {
            hub.daemon.bus.publish(.live(serial: "GAUGE", side: .left, LiveSecond(time: 1_800_000_000 + Double(n), present: n % 2 == 0,
                                                                                   heartRate: 40 + Double(n % 50), breathingRate: nil,
                                                                                   movement: Double(n), quality: 0.5)))
        }
        // 4999 is the newest: 40 + 49 bpm, absent, no breathing, movement 4999.
        let metrics = try await hub.metrics()
        let left = ["pod": "GAUGE", "side": "left"]
        #expect(metrics.value("podbridge_side_heart_rate_bpm", left) == 89, "\(metrics.text.prefix(3000))")
        #expect(metrics.value("podbridge_side_present", left) == 0 && metrics.value("podbridge_side_movement", left) == 4999)
        #expect(metrics.value("podbridge_side_breathing_rate_bpm", left)?.isNaN == true)
        #expect(metrics.value("podbridge_side_heart_rate_bpm", ["pod": "GAUGE", "side": "right"]) == nil, "no reading, no series")
        await hub.stop()
    }

    /// EventSource reconnects with the last id it saw: the stream picks up from there, each
    /// event once, and says so when it cannot (ids of an earlier run of the hub).
    @Test func anEventStreamResumesAfterTheLastEventItSaw() async throws {
        let dir = try TempDir()
        let hub = try await APITestHub.start(serial: "API-RESUME", speed: 1, directory: dir) { $0.pod.path = dir.path("no-pod") }
        func reading(_ n: Int) -> HubEvent {
            .live(serial: "RESUME", side: .left, LiveSecond(time: 1_800_000_000 + Double(n), present: true, heartRate: 50 + Double(n),
                                                           breathingRate: 14, movement: 0.1, quality: 0.9))
        }
        func heartRates(_ client: StreamClient) -> [Double] {
            client.messages(ofType: "live").filter { $0["serial"] as? String == "RESUME" }.compactMap { $0["heartRate"] as? Double }
        }
        let first = StreamClient.sse(hub.http, base: hub.base)
        #expect(await eventually { first.count(ofType: "hello") == 1 })
        hub.daemon.bus.publish(reading(0))
        hub.daemon.bus.publish(reading(1))
        #expect(await eventually { heartRates(first).count == 2 }, "\(first.messages)")
        let seen = try #require(first.messages(ofType: "live").last?["_id"] as? String)
        await first.close()

        // While away: two more.
        hub.daemon.bus.publish(reading(2))
        hub.daemon.bus.publish(reading(3))
        let again = StreamClient.sse(hub.http, base: hub.base, lastEventID: seen)
        #expect(await eventually { heartRates(again).count == 2 }, "\(again.messages)")
        hub.daemon.bus.publish(reading(4))
        #expect(await eventually { heartRates(again).count == 3 }, "\(again.messages)")
        #expect(heartRates(again) == [52, 53, 54], "each event since, once: \(again.messages)")
        let ids = again.messages(ofType: "live").compactMap { ($0["_id"] as? String).flatMap(UInt64.init) }
        #expect(ids.count == 3 && ids == ids.sorted() && ids.first! > UInt64(seen)!, "\(ids) after \(seen)")
        #expect(again.count(ofType: "missed") == 0)
        await again.close()

        // An id of no run of this hub: told, and nothing replayed.
        let stranger = StreamClient.sse(hub.http, base: hub.base, lastEventID: "17")
        #expect(await eventually { stranger.count(ofType: "missed") == 1 }, "\(stranger.messages)")
        #expect((stranger.messages(ofType: "missed").first?["detail"] as? String)?.contains("restarted") == true)
        #expect(heartRates(stranger).isEmpty)
        await stranger.close()

        // The WebSocket resumes the same way: each event's number is its message's `id`, and
        // `?after=` takes it.
        let socket = StreamClient.ws(base: hub.base)
        #expect(await eventually { socket.count(ofType: "hello") == 1 })
        hub.daemon.bus.publish(reading(5))
        #expect(await eventually { heartRates(socket) == [55] }, "\(socket.messages)")
        let seenOnSocket = try #require(socket.messages(ofType: "live").last?["id"] as? UInt64, "\(socket.messages)")
        #expect(socket.messages(ofType: "hello").first?["id"] == nil, "housekeeping carries no number")
        await socket.close()
        hub.daemon.bus.publish(reading(6))
        hub.daemon.bus.publish(reading(7))
        let resumed = StreamClient.ws(base: hub.base, after: String(seenOnSocket))
        #expect(await eventually { heartRates(resumed).count == 2 }, "\(resumed.messages)")
        hub.daemon.bus.publish(reading(8))
        #expect(await eventually { heartRates(resumed).count == 3 }, "\(resumed.messages)")
        #expect(heartRates(resumed) == [56, 57, 58], "each event since, once: \(resumed.messages)")
        let socketIDs = resumed.messages(ofType: "live").compactMap { $0["id"] as? UInt64 }
        #expect(socketIDs.count == 3 && socketIDs == socketIDs.sorted() && socketIDs.first! > seenOnSocket, "\(socketIDs)")
        await resumed.close()
        let strangerSocket = StreamClient.ws(base: hub.base, after: "17")
        #expect(await eventually { strangerSocket.count(ofType: "missed") == 1 }, "\(strangerSocket.messages)")
        await strangerSocket.close()
        // Not a number: the upgrade is refused (400), and the reason is in the metrics' status.
        let garbled = StreamClient.ws(base: hub.base, after: "yesterday")
        #expect(await eventually { garbled.hasEnded }, "a refused upgrade ends the client")
        #expect(garbled.messages.isEmpty)
        let metrics = try await hub.metrics()
        #expect(metrics.value("podbridge_api_requests_total", ["route": "/api/v1/live/ws", "status": "400"]) == 1, "\(metrics.text)")
        #expect(metrics.value("podbridge_api_requests_total", ["route": "/api/v1/live/ws", "status": "101"]) == 3)
        await hub.stop()
    }
}
