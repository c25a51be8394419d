import Foundation
import SleepDomain
import SleepSchedule
import SleepStore

/// A side's presence-driven power in force: what the owner set at run time (the API, MQTT,
/// the dashboard; stored per pod side) over the configuration's `schedule.presencePower`, and
/// the nights in a row nobody slept in it. The API, MQTT and the dashboard show this; the
/// service runs it.
package struct PresencePowerInForce: Sendable, Hashable, Codable {
    /// Presence-driven power on for the side.
    package var enabled: Bool
    package var settings: PresencePowerSettings
    /// Power windows in a row that ended with nobody in the side.
    package var emptyNights: Int
    /// `configuration`, or `set` when the owner changed something at run time.
    package var source: String

    /// Away in force: set by the owner, or counted from empty nights.
    package var isAway: Bool {
        settings.away || (settings.awayAfterNights > 0 && emptyNights >= settings.awayAfterNights)
    }

    package init(enabled: Bool, settings: PresencePowerSettings, emptyNights: Int, source: String) {
        self.enabled = enabled
        self.settings = settings
        self.emptyNights = emptyNights
        self.source = source
    }

    package init(stored: PresencePowerSide?, configuration: HubConfiguration.PresencePowerConfiguration, side: BedSide) {
        self.init(enabled: stored?.enabled ?? configuration.enabled, settings: stored?.settings ?? configuration[side],
                  emptyNights: stored?.emptyNights ?? 0,
                  source: stored?.enabled != nil || stored?.settings != nil ? "set" : "configuration")
    }

    package static func resolve(store: NightStore, configuration: HubConfiguration.PresencePowerConfiguration,
                                podSerial: String, side: BedSide) async -> PresencePowerInForce {
        PresencePowerInForce(stored: try? await store.presencePowerSide(podSerial: podSerial, side: side),
                             configuration: configuration, side: side)
    }
}

/// A change the owner asks for (the API's `PUT /presence-power/settings`, an MQTT command, the
/// dashboard): every field is optional, what is left out stays as it is.
package struct PresencePowerChangeRequest: Sendable, Hashable, Codable {
    package var enabled: Bool?
    package var keepOnWhileOccupied: Bool?
    package var keepOnAfterLeavingMinutes: Int?
    package var keepOnLimitMinutes: Int?
    package var offWhenLeft: Bool?
    package var offWhenLeftMinutes: Int?
    package var noShowMinutes: Int?
    package var awayAfterNights: Int?
    package var away: Bool?
    /// Back to the configuration's switch and rules (applied before the fields above).
    package var reset: Bool?

    package init(enabled: Bool? = nil, keepOnWhileOccupied: Bool? = nil, keepOnAfterLeavingMinutes: Int? = nil,
                 keepOnLimitMinutes: Int? = nil, offWhenLeft: Bool? = nil, offWhenLeftMinutes: Int? = nil,
                 noShowMinutes: Int? = nil, awayAfterNights: Int? = nil, away: Bool? = nil, reset: Bool? = nil) {
        self.enabled = enabled
        self.keepOnWhileOccupied = keepOnWhileOccupied
        self.keepOnAfterLeavingMinutes = keepOnAfterLeavingMinutes
        self.keepOnLimitMinutes = keepOnLimitMinutes
        self.offWhenLeft = offWhenLeft
        self.offWhenLeftMinutes = offWhenLeftMinutes
        self.noShowMinutes = noShowMinutes
        self.awayAfterNights = awayAfterNights
        self.away = away
        self.reset = reset
    }

    /// Nothing asked.
    package var isEmpty: Bool { self == PresencePowerChangeRequest() }

    /// The settings after this change, checked (`ScheduleError.invalidConfiguration` says which
    /// field is out of range).
    func applied(to settings: PresencePowerSettings) throws(ScheduleError) -> PresencePowerSettings {
        var s = settings
        if let keepOnWhileOccupied { s.keepOnWhileOccupied = keepOnWhileOccupied }
        if let keepOnAfterLeavingMinutes { s.keepOnAfterLeavingMinutes = keepOnAfterLeavingMinutes }
        if let keepOnLimitMinutes { s.keepOnLimitMinutes = keepOnLimitMinutes }
        if let offWhenLeft { s.offWhenLeft = offWhenLeft }
        if let offWhenLeftMinutes { s.offWhenLeftMinutes = offWhenLeftMinutes }
        if let noShowMinutes { s.noShowMinutes = noShowMinutes }
        if let awayAfterNights { s.awayAfterNights = awayAfterNights }
        if let away { s.away = away }
        try s.validate()
        return s
    }
}

extension ScheduleConsole {
    /// Stores the owner's change of a side's presence-driven power and returns what is in force
    /// after it. Setting `away` to false also starts the count of empty nights again (the owner
    /// says someone is back).
    package func setPresencePower(podSerial: String, side: BedSide,
                                  change: PresencePowerChangeRequest) async throws(ScheduleServiceError) -> PresencePowerInForce {
        let configured = settings.presencePower
        let stored: PresencePowerSide?
        do { stored = try await store.presencePowerSide(podSerial: podSerial, side: side) } catch { throw .store("\(error)") }
        let base = change.reset == true
            ? PresencePowerInForce(stored: nil, configuration: configured, side: side)
            : PresencePowerInForce(stored: stored, configuration: configured, side: side)
        let next: PresencePowerSettings
        do { next = try change.applied(to: base.settings) } catch { throw .schedule(error) }
        let resetCount = change.away == false
        // What the owner set is stored; what they left alone stays the configuration's (nil).
        var storedEnabled = change.reset == true ? nil : stored?.enabled
        if let enabled = change.enabled { storedEnabled = enabled }
        var storedSettings = change.reset == true ? nil : stored?.settings
        var settingsOnly = change
        settingsOnly.enabled = nil
        settingsOnly.reset = nil
        if !settingsOnly.isEmpty { storedSettings = next }
        do {
            try await store.savePresencePowerChoice(podSerial: podSerial, side: side, enabled: storedEnabled,
                                                    settings: storedSettings, resetEmptyNights: resetCount,
                                                    at: Int64(now.timeIntervalSince1970))
        } catch {
            throw .store("\(error)")
        }
        return PresencePowerInForce(stored: PresencePowerSide(podSerial: podSerial, side: side, enabled: storedEnabled,
                                                              settings: storedSettings,
                                                              emptyNights: resetCount ? 0 : (stored?.emptyNights ?? 0), setAt: 0),
                                    configuration: configured, side: side)
    }
}
