import Foundation
import Hub
import Testing

/// `api.listen` / `api.token` / `api.allowedOrigins`: parsed at load, and an API reachable from
/// other machines or other sites' pages without a token is refused before anything starts.
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
        c.api.token = ""
        #expect(c.api.requiredToken == nil)
        #expect(throws: ConfigurationError.self, "an empty token is no token") { try c.validate() }
        c.api.allowedOrigins = ["https://ha.example"]
        c.api.listen = "127.0.0.1:8380"
        #expect(throws: ConfigurationError.self, "nor may other sites' pages use it") { try c.validate() }
        c.api.listen = "0.0.0.0:8380"
        c.api.token = "s3cret"
        #expect(c.api.requiredToken == "s3cret")
        try c.validate()
        c.api.allowedOrigins = []
        // Off entirely: nothing listens, nothing to refuse.
        c.api.token = nil
        c.api.enabled = false
        try c.validate()
    }

    /// A short token is said at start (the service logs it), not refused: a loopback-only hub may keep one.
    @Test func aShortTokenIsCalledGuessable() throws {
        var api = HubConfiguration.APISettings()
        #expect(api.weakTokenWarning == nil, "no token, nothing to warn of")
        api.token = "s3cret"
        #expect(api.weakTokenWarning == "api.token is 6 characters long, short enough to guess: use 16 or more random ones (openssl rand -hex 16)")
        api.token = String(repeating: "a", count: 15)
        #expect(api.weakTokenWarning != nil)
        api.token = "0123456789abcdef"
        #expect(api.weakTokenWarning == nil)
        api.token = ""
        #expect(api.weakTokenWarning == nil, "an empty token is no token (refused off loopback)")
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

    @Test func allowedOriginsAreWhatABrowserSends() throws {
        #expect(try WebOrigin(parsing: "https://ha.example.org:8123").description == "https://ha.example.org:8123")
        // The scheme's default port and upper case are not what a browser sends: written as it does.
        #expect(try WebOrigin(parsing: "HTTPS://HA.Example.org:443").description == "https://ha.example.org")
        #expect(try WebOrigin(parsing: "http://dash.example:80").description == "http://dash.example")
        #expect(try WebOrigin(parsing: "http://dash.example:443").description == "http://dash.example:443")
        #expect(try WebOrigin(parsing: "http://[FD00::2]:8123").description == "http://[fd00::2]:8123")
        #expect(try WebOrigin(parsing: "http://192.168.1.20:8123").description == "http://192.168.1.20:8123")
        for (bad, says) in [("*", "no wildcards"), ("https://*.example.org", "no wildcards"),
                            ("https://ha.example.org/", "no trailing slash"), ("https://ha.example.org:8123/lovelace", "no path"),
                            ("ha.example.org", "no scheme"), ("null", "no scheme"), ("ws://ha.example.org", "http or https"),
                            ("https://", "no host"), ("https://:8123", "no host"), ("https://ha.example.org:", "port"),
                            ("https://ha.example.org:0", "port"), ("https://ha.example.org:99999", "port"),
                            ("https://fd00::2", "in brackets"), ("https://user@ha.example.org", "user name"),
                            ("https://ha.example.org?x", "query"), ("https://bücher.example", "xn--"),
                            ("https://ha example.org", "spaces"), ("https://[ha.example.org]", "IPv6")] {
            #expect { try WebOrigin(parsing: bad) } throws: { error in
                let text = "\(error)"
                return text.contains(says) && text.contains("got '\(bad)'")
            }
        }
    }

    @Test func allowedOriginsAreCheckedAtLoadAndNeedAToken() throws {
        var c = HubConfiguration()
        #expect(c.api.allowedOrigins.isEmpty)
        c.api.token = "s3cret"
        c.api.allowedOrigins = ["https://ha.example.org:8123", "http://192.168.1.20:8123", "HTTPS://HA.Example.org:8123"]
        try c.validate()
        // What the API serves: each as a browser sends it, once.
        #expect(try c.api.allowedWebOrigins() == ["https://ha.example.org:8123", "http://192.168.1.20:8123"])
        func refusal(_ config: HubConfiguration) -> String {
            do { try config.validate(); return "accepted" } catch { return error.description }
        }
        for bad in ["*", "https://ha.example.org:8123/", "https://ha.example.org:8123/lovelace"] {
            var wrong = c
            wrong.api.allowedOrigins = ["https://ha.example.org:8123", bad]
            let message = refusal(wrong)
            #expect(message.hasPrefix("configuration: api.allowedOrigins: ") && message.contains("'\(bad)'"), "\(message)")
        }
        // Cross-site pages and no token: refused, as a non-loopback listen without one is.
        var open = c
        open.api.token = nil
        #expect(refusal(open) == "configuration: api.allowedOrigins: pages on other origins may use only an API with a token: "
                + "set a token (api.token or PODBRIDGE_API_TOKEN) or leave api.allowedOrigins empty")
        // The API service asks the same question, and is told the same.
        #expect(throws: ConfigurationError.badValue(
            key: "api.allowedOrigins", reason: "pages on other origins may use only an API with a token: "
                + "set a token (api.token or PODBRIDGE_API_TOKEN) or leave api.allowedOrigins empty")) {
            try open.api.allowedWebOrigins()
        }
        open.api.token = ""
        #expect(refusal(open).contains("api.allowedOrigins"))
        // Off entirely: nothing listens, nothing to refuse.
        open.api.enabled = false
        try open.validate()
    }

    @Test func allowedOriginsComeFromTheFileOrTheEnvironment() throws {
        var c = HubConfiguration()
        try c.applyEnvironment(["PODBRIDGE_API_TOKEN": "t0k",
                                "PODBRIDGE_API_ALLOWED_ORIGINS": " https://ha.example.org:8123, http://10.0.0.5:8123 ,"])
        #expect(c.api.allowedOrigins == ["https://ha.example.org:8123", "http://10.0.0.5:8123"])
        var bad = HubConfiguration()
        var message = ""
        do { try bad.applyEnvironment(["PODBRIDGE_API_ALLOWED_ORIGINS": "https://ha.example.org"]) } catch { message = error.description }
        #expect(message.hasPrefix("configuration: api.allowedOrigins (from $PODBRIDGE_API_ALLOWED_ORIGINS): "
                                  + "pages on other origins may use only an API with a token"), "\(message)")
        let file = Data(#"{"api": {"token": "abc", "allowedOrigins": ["https://ha.example.org:8123"]}}"#.utf8)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("api-origins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("config.json")
        try file.write(to: path)
        #expect(try HubConfiguration.load(path: path.path).api.allowedOrigins == ["https://ha.example.org:8123"])
        try Data(#"{"api": {"token": "abc", "allowedOrigins": "https://ha.example.org:8123"}}"#.utf8).write(to: path)
        #expect { try HubConfiguration.load(path: path.path) } throws: { "\($0)".contains("api.allowedOrigins: expected a list") }
        try Data(#"{"api": {"token": "abc", "allowedOrigins": ["*"]}}"#.utf8).write(to: path)
        #expect { try HubConfiguration.load(path: path.path) } throws: { "\($0)".contains("api.allowedOrigins: no wildcards") }
    }
}
