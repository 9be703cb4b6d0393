import Foundation
import OIDC
import Testing

/// Plain http only to loopback, decided from strictly parsed IP literals: a spelling the resolver
/// does not read as an address (`127.0.0.09`) goes to DNS, and a refresh token would travel in clear.
@Suite("Endpoint policy: what counts as loopback")
struct EndpointPolicyTests {
    @Test("loopback literals and the name localhost", arguments: [
        "127.0.0.1", "127.255.0.9", "127.0.0.0", "::1", "[::1]", "0:0:0:0:0:0:0:1", "[0::1]", "localhost", "LOCALHOST",
    ])
    func loopback(host: String) {
        #expect(EndpointPolicy.isLoopback(host: host))
    }

    @Test("odd spellings, other networks and look-alike names are not loopback", arguments: [
        "127.0.0.09", "127.0.0.099", "127.1", "127.0.1", "0x7f.0.0.1", "0177.0.0.1", "127.0.0.1.", "127.0.0.1.evil.example",
        "localhost.evil.example", "evil.localhost", "10.0.0.1", "128.0.0.1", "::2", "::ffff:127.0.0.1", "[::1", "", " 127.0.0.1",
    ])
    func notLoopback(host: String) {
        #expect(!EndpointPolicy.isLoopback(host: host))
    }

    @Test("a token endpoint on http://127.0.0.09 is refused as insecure")
    func insecureLookalike() throws {
        let error = #expect(throws: OIDCError.self) {
            try EndpointPolicy.validate(try #require(URL(string: "http://127.0.0.09/token")), role: "token endpoint")
        }
        #expect(error?.code == .insecureEndpoint)
        #expect(throws: Never.self) { try EndpointPolicy.validate(try #require(URL(string: "http://127.0.0.1:8080/token")), role: "token endpoint") }
    }
}
