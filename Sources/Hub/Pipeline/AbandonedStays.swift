import Foundation
import SleepDomain
import SleepStore

/// The open stays a stopped hub kept for pods that are not on the link now. `PodPipeline`
/// carries a pod's stays on when it connects, and `PodPipeline.expire()` ends them if its data
/// stop; a pod that never comes back after the restart (unplugged, broken, swapped for another)
/// has no pipeline, so its stays are ended here, once no data reached them for longer than
/// `maxDataGap`: stored as final nights (their exit unseen) and no longer kept.
struct AbandonedStays {
    let keeper: NightKeeper
    let rules: SessionTracker.Rules
    let reporter: HubReporter

    /// Ends the kept stays of every pod but `serial` (the one on the link, if any) whose last
    /// second is more than `maxDataGap` before `now`. Returns how many final nights were stored.
    func end(now: Date, except serial: String?) async -> Int {
        let kept: [KeptOpenStay]
        do {
            kept = try await keeper.store.keptOpenStays()
        } catch {
            reporter.warning("cannot read the open sessions a stopped hub left: \(error)")
            return 0
        }
        var stored = 0
        for stay in kept where stay.podSerial != serial
            && now.timeIntervalSince1970 - Double(stay.lastSecond + 1) > rules.maxDataGap {
            stored += await end(stay)
        }
        return stored
    }

    private func end(_ kept: KeptOpenStay) async -> Int {
        let serial = kept.podSerial, side = kept.side
        var stored = 0
        do {
            if let data = try await keeper.store.openStay(podSerial: serial, side: side) {
                var tracker = SessionTracker(rules: rules, resuming: try OpenStayArchive.decode(data))
                if let night = tracker.flush() {
                    reporter.event("\(side): pod \(serial) has sent nothing since \(timeOfDay(Double(kept.lastSecond + 1))): "
                                   + "the session it left open since \(timeOfDay(night.start)) ends there")
                    let outcome = await keeper.keepEnded(night, serial: serial, side: side)
                    // Refused (a full disk): the kept stay stays, and the next sweep tries again.
                    guard !outcome.failed else { return outcome.finals }
                    stored = outcome.finals
                }
            }
        } catch {
            // The night's preliminary session stays as it was; only the data to carry it on go.
            reporter.warning("\(side): the open session pod \(serial) left cannot be ended: \(error)")
        }
        do {
            try await keeper.store.dropOpenStay(podSerial: serial, side: side)
        } catch {
            reporter.warning("\(side): cannot forget the open session pod \(serial) left: \(error)")
        }
        return stored
    }

    private func timeOfDay(_ unixTime: Double) -> TimeOfDay {
        LocalDateTime(Date(timeIntervalSince1970: unixTime), in: keeper.configuration.hubTimeZone).timeOfDay
    }
}
