import CAvahi
import HomeKit
import Hub
import Synchronization

/// The `_hap._tcp` advertisement through the machine's Avahi daemon (libavahi-client): the
/// bridge's name and port with HAP's TXT record, whose `sf` (1 while unpaired) and `c#` follow
/// the pairing state. Without a running avahi-daemon the bridge still serves, and says so.
package final class HomeKitAdvertiser: Sendable {
    private let name: String
    private let reporter: HubReporter
    private let avahi = Mutex<Handles?>(nil)

    /// Avahi's objects, used under the threaded poll's lock once it runs.
    private struct Handles: @unchecked Sendable {
        let poll: OpaquePointer
        let client: OpaquePointer
        let group: OpaquePointer
        let port: Int
    }

    package init(name: String, reporter: HubReporter) {
        self.name = name
        self.reporter = reporter
    }

    /// HAP's TXT record for `state` (the specification's table 6-7).
    package static func txt(name: String, state: HAPPairingState) -> [String] {
        ["c#=\(state.configurationNumber)", "ff=0", "id=\(state.accessoryID)", "md=\(name)", "pv=1.1", "s#=1",
         "sf=\(state.isPaired ? 0 : 1)", "ci=\(SetupPayload.bridgeCategory)",
         "sh=\(SetupPayload.setupHash(setupID: state.setupID, accessoryID: state.accessoryID))"]
    }

    package func start(port: Int, state: HAPPairingState) {
        guard let poll = avahi_threaded_poll_new() else { return reporter.warning("HomeKit: Avahi: no poll object") }
        var error: Int32 = 0
        guard let client = avahi_client_new(avahi_threaded_poll_get(poll), AvahiClientFlags(0), nil, nil, &error) else {
            avahi_threaded_poll_free(poll)
            return reporter.warning("HomeKit: not advertised over DNS-SD: Avahi: \(String(cString: avahi_strerror(error))) (is avahi-daemon running?)")
        }
        guard let group = avahi_entry_group_new(client, nil, nil) else {
            avahi_client_free(client)
            avahi_threaded_poll_free(poll)
            return reporter.warning("HomeKit: Avahi: no entry group")
        }
        let txt = Self.list(Self.txt(name: name, state: state))
        defer { avahi_string_list_free(txt) }
        let added = avahi_entry_group_add_service_strlst(group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                                                         AvahiPublishFlags(0), name, "_hap._tcp", nil, nil, UInt16(port), txt)
        guard added == 0, avahi_entry_group_commit(group) == 0 else {
            reporter.warning("HomeKit: Avahi refused the service: \(String(cString: avahi_strerror(avahi_client_errno(client))))")
            avahi_client_free(client)
            avahi_threaded_poll_free(poll)
            return
        }
        avahi_threaded_poll_start(poll)
        avahi.withLock { $0 = Handles(poll: poll, client: client, group: group, port: port) }
        reporter.event("HomeKit: advertised as \"\(name)\" (_hap._tcp, port \(port))")
    }

    /// A new TXT record after the pairing state changed (paired, unpaired, `c#`).
    package func update(_ state: HAPPairingState) {
        avahi.withLock { handles in
            guard let handles else { return }
            let txt = Self.list(Self.txt(name: name, state: state))
            defer { avahi_string_list_free(txt) }
            avahi_threaded_poll_lock(handles.poll)
            _ = avahi_entry_group_update_service_txt_strlst(handles.group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                                                            AvahiPublishFlags(0), name, "_hap._tcp", nil, txt)
            avahi_threaded_poll_unlock(handles.poll)
        }
    }

    package func stop() {
        avahi.withLock { handles in
            guard let current = handles else { return }
            avahi_threaded_poll_stop(current.poll)
            avahi_client_free(current.client)
            avahi_threaded_poll_free(current.poll)
            handles = nil
        }
    }

    private static func list(_ items: [String]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>?
        // Avahi prepends: add in reverse to keep the order.
        for item in items.reversed() { list = avahi_string_list_add(list, item) }
        return list
    }
}
