import Foundation
import Hub
import Testing

/// `api.listen` / `api.token`: parsed at load, and an API reachable from other machines
/// without a token is refused before anything starts.
@Suite struct APISettingsTests {
    @Test func listenAddressesParse() throws {
        let v4 = try ListenAddress(parsing: "127.0.0.1:8380")
        #expect(v4.host == "127.0.0.1" && v4.port == 8380 && v4.isLoopback)
        let v6 = try ListenAddress(parsing: "[::1]:9000")
        #expect(v6.host == "::1" && v6.port == 9000 && v6.isLoopback && v6.description == "[::1]:9000")
        #expect(try ListenAddress(parsing: "localhost:0").isLoopback)
        #expect(try !ListenAddress(parsing: "0.0.0.0:8380").isLoopback)
        #expect(try !ListenAddress(parsing: ":8380").isLoopback)
        #expect(try !ListenAddress(parsing: "192.168.1.20:8380").isLoopback)
        // A name that merely starts like a loopback address can resolve anywhere.
        #expect(try !ListenAddress(parsing: "127.example.com:8380").isLoopback)
        #expect(try !ListenAddress(parsing: "127.0.0.1.nip.io:8380").isLoopback)
        #expect(try ListenAddress(parsing: "127.3.2.1:8380").isLoopback)
        #expect(try ListenAddress(parsing: "LocalHost:8380").isLoopback)
        #expect(try ListenAddress(parsing: "hub.localhost:8380").isLoopback)
        for bad in ["8380", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", "[::1]8380"] {
            #expect(throws: ListenAddress.ParseError.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
        // The URL the hub prints, given back: named as a URL, not taken for a host "http" (which
        // was then refused for want of a token).
        #expect { try ListenAddress(parsing: "http://127.0.0.1:8380") } throws: { error in
            (error as? ListenAddress.ParseError)?.description.contains("not a URL") == true
        }
        var c = HubConfiguration()
        c.api.listen = "http://127.0.0.1:8380/"
        #expect { try c.validate() } throws: { "\($0)".contains("api.listen") && "\($0)".contains("not a URL") }
    }

    @Test func aNonLoopbackListenNeedsAToken() throws {
        var c = HubConfiguration()
        #expect(c.api.listen == "127.0.0.1:8380" && c.api.token == nil)
        try c.validate()
        c.api.listen = "0.0.0.0:8380"
        #expect(throws: ConfigurationError.self) { try c.validate() }
        c.api.token = "s3cret"
        try c.validate()
        // Off entirely: nothing listens, nothing to refuse.
        c.api.token = nil
        c.api.enabled = false
        try c.validate()
    }

    @Test func environmentAndFileSetTheAPI() throws {
        var c = HubConfiguration()
        try c.applyEnvironment(["PODBRIDGE_API_LISTEN": "0.0.0.0:9999", "PODBRIDGE_API_TOKEN": "t0k"])
        #expect(c.api.listen == "0.0.0.0:9999" && c.api.token == "t0k")
        var bad = HubConfiguration()
        #expect(throws: ConfigurationError.self) { try bad.applyEnvironment(["PODBRIDGE_API_LISTEN": "10.0.0.1:80"]) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("api-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("config.json")
        try Data(#"{"api": {"listen": "127.0.0.1:0", "token": "abc"}}"#.utf8).write(to: file)
        let loaded = try HubConfiguration.load(path: file.path)
        #expect(loaded.api.listen == "127.0.0.1:0" && loaded.api.token == "abc" && loaded.api.enabled)
        try Data(#"{"api": {"listen": "nowhere"}}"#.utf8).write(to: file)
        #expect(throws: ConfigurationError.self) { try HubConfiguration.load(path: file.path) }
    }
}
