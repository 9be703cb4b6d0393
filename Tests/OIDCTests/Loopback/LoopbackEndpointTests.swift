import OIDC
import Testing

@Suite("Loopback listener endpoints")
struct LoopbackEndpointTests {
    typealias Endpoint = LoopbackRedirectListener.Endpoint

    @Test(
        "listen addresses as written on a command line",
        arguments: [
            ("127.0.0.1:0", "127.0.0.1", 0, "127.0.0.1:0"),
            ("127.0.0.1:8000", "127.0.0.1", 8000, "127.0.0.1:8000"),
            ("127.1.2.3:65535", "127.1.2.3", 65535, "127.1.2.3:65535"),
            ("[::1]:0", "::1", 0, "[::1]:0"),
            ("[::1]:8000", "::1", 8000, "[::1]:8000"),
            ("[0:0:0:0:0:0:0:1]:8000", "::1", 8000, "[::1]:8000"),
            ("8000", "127.0.0.1", 8000, "127.0.0.1:8000"),
            ("0", "127.0.0.1", 0, "127.0.0.1:0"),
        ]
    )
    func parses(text: String, host: String, port: Int, description: String) throws {
        let endpoint = try Endpoint(parsing: text)
        #expect(endpoint.host == host)
        #expect(endpoint.port == port)
        #expect(endpoint.description == description)
    }

    @Test(
        "names, other networks, odd spellings and bad ports are refused",
        arguments: [
            "localhost:8000", "LOCALHOST:0", "app.localhost:80", "127.0.0.09:1", "127.000.0.1:1", "127.1:80", "10.0.0.1:80",
            "0.0.0.0:80", "192.168.1.1:80", "127.0.0.1:70000", "127.0.0.1:-1", "127.0.0.1:", "127.0.0.1", "::1", "::2",
            "[::2]:80", "[::]:80", "[::ffff:127.0.0.1]:80", "[::1]", "[::1]8000", "[::1%lo]:80", "::1:80", "", ":80",
            "127.0.0.1:80x", "127.0.0.1:+80", "99999", "1234567",
        ]
    )
    func refuses(text: String) {
        let error = #expect(throws: OIDCError.self) { try Endpoint(parsing: text) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("the checking initializer refuses localhost and says to use the literal")
    func localhostRefused() {
        let error = #expect(throws: OIDCError.self) { try Endpoint(host: "localhost", port: 8000) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("127.0.0.1") == true)
        #expect(error?.message.contains("RFC 8252") == true)
    }

    @Test("ports outside 0...65535 are refused by the checking initializer", arguments: [-1, 65536, Int.max])
    func portRange(port: Int) {
        #expect(throws: OIDCError.self) { try Endpoint(host: "127.0.0.1", port: port) }
    }

    @Test("the presets are 127.0.0.1:0 and [::1]:0")
    func presets() {
        #expect(Endpoint.ipv4.description == "127.0.0.1:0")
        #expect(Endpoint.ipv6.description == "[::1]:0")
        #expect(Endpoint.ipv6.host == "::1")
    }

    @Test("a configuration with no endpoint, a host twice or a bad callback path is refused at start")
    func badConfigurations() async {
        var configurations: [LoopbackRedirectListener.Configuration] = [
            .init(endpoints: []),
            .init(endpoints: [.ipv4, .ipv4]),
            .init(callbackPath: "callback"),
            .init(callbackPath: "/callback?x=1"),
            .init(callbackPath: "/call back"),
            .init(callbackPath: "/callback#f"),
        ]
        var noConnections = LoopbackRedirectListener.Configuration()
        noConnections.maximumConnections = 0
        configurations.append(noConnections)
        var noIdle = LoopbackRedirectListener.Configuration()
        noIdle.idleTimeout = .zero
        configurations.append(noIdle)
        var edited = LoopbackRedirectListener.Configuration()
        edited.endpoints[0].host = "localhost"
        configurations.append(edited)
        for configuration in configurations {
            let error = await #expect(throws: OIDCError.self) { try await LoopbackRedirectListener.start(configuration) }
            #expect(error?.code == .invalidArgument)
        }
    }
}
