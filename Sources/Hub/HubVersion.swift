/// The hub's release, one place for `podbridge --version` and what it tells others (Home
/// Assistant's discovery `origin`).
package enum HubVersion {
    package static let current = "0.1.0"
}
