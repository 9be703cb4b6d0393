import Foundation
import OIDC
import OIDCTesting
import Testing

/// NIOHTTPTransport over TLS: trust roots, pinning, and their configuration.
extension NIOHTTPTransportTests {
    // MARK: TLS and pinning

    static let tlsProvider = TestProvider.Configuration(
        tls: .init(certificateChainPEM: TLSFixtures.serverChainPEM, privateKeyPEM: TLSFixtures.serverKeyPEM)
    )

    @Test("https to the test provider with its CA trusted")
    func httpsTrusted() async throws {
        try await withTestProvider(Self.tlsProvider) { provider in
            #expect(provider.issuer.hasPrefix("https://127.0.0.1:"))
            try await withNIOHTTPTransport(configuration: .init(additionalTrustRootsPEM: [TLSFixtures.caPEM])) { transport in
                let response = try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
                #expect(response.status == 200)
                let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
                #expect(json?["issuer"] as? String == provider.issuer)
            }
        }
    }

    @Test("https by the name localhost checks the DNS name")
    func httpsByName() async throws {
        let configuration = TestProvider.Configuration(
            tls: .init(certificateChainPEM: TLSFixtures.localhostOnlyPEM, privateKeyPEM: TLSFixtures.serverKeyPEM)
        )
        try await withTestProvider(configuration) { provider in
            let url = URL(string: "https://localhost:\(provider.port)/.well-known/openid-configuration")!
            for pins in [[], [PublicKeyPin(host: "localhost", sha256: [TLSFixtures.serverPin])]] {
                try await withNIOHTTPTransport(configuration: .init(additionalTrustRootsPEM: [TLSFixtures.caPEM], pins: pins)) { transport in
                    let status = try await transport.send(HTTPRequest(url: url)).status
                    #expect(status == 200)
                }
            }
        }
    }

    @Test("https without the CA trusted is a tlsFailure")
    func httpsUntrusted() async throws {
        try await withTestProvider(Self.tlsProvider) { provider in
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
            }
            #expect(error?.code == .tlsFailure)
            #expect(error?.category == .transport)
            #expect(await provider.requestCount(.discovery) == 0)
        }
    }

    @Test("trusting only the given roots: another self-signed server is refused")
    func onlyGivenRoots() async throws {
        let configuration = TestProvider.Configuration(
            tls: .init(certificateChainPEM: TLSFixtures.otherPEM, privateKeyPEM: TLSFixtures.otherKeyPEM)
        )
        try await withTestProvider(configuration) { provider in
            let transport = NIOHTTPTransport(configuration: .init(trustsSystemRoots: false, additionalTrustRootsPEM: [TLSFixtures.caPEM]))
            let error = await #expect(throws: OIDCError.self) {
                try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
            }
            #expect(error?.code == .tlsFailure)
            try await transport.shutdown()
        }
    }

    @Test("a matching pin (leaf or CA key) lets the request through", arguments: [TLSFixtures.serverPin, TLSFixtures.caPin])
    func pinMatches(pin: String) async throws {
        try await withTestProvider(Self.tlsProvider) { provider in
            let configuration = NIOHTTPTransport.Configuration(
                additionalTrustRootsPEM: [TLSFixtures.caPEM],
                pins: [PublicKeyPin(host: "127.0.0.1", sha256: [TLSFixtures.otherPin, pin])]
            )
            try await withNIOHTTPTransport(configuration: configuration) { transport in
                let status = try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!)).status
                #expect(status == 200)
                let jwksStatus = try await transport.send(HTTPRequest(url: URL(string: provider.jwksURI)!)).status
                #expect(jwksStatus == 200)
            }
        }
    }

    @Test("a pin that matches no key fails the handshake: pinMismatch, nothing sent")
    func pinMismatch() async throws {
        try await withTestProvider(Self.tlsProvider) { provider in
            let configuration = NIOHTTPTransport.Configuration(
                additionalTrustRootsPEM: [TLSFixtures.caPEM], pins: [PublicKeyPin(host: "127.0.0.1", sha256: [TLSFixtures.otherPin])]
            )
            try await withNIOHTTPTransport(configuration: configuration) { transport in
                let error = await #expect(throws: OIDCError.self) {
                    try await transport.send(
                        HTTPRequest(url: URL(string: provider.discoveryURL)!, headers: ["Authorization": "Bearer pinned-secret"])
                    )
                }
                #expect(error?.code == .pinMismatch)
                #expect(error?.category == .transport)
                #expect(error?.message.contains("127.0.0.1") == true)
                #expect(error.map { "\($0)" }?.contains("pinned-secret") == false)
            }
            #expect(await provider.requestCount(.discovery) == 0)
        }
    }

    @Test("a pin never replaces verification: a matching pin on an untrusted chain is a tlsFailure")
    func pinWithoutTrust() async throws {
        try await withTestProvider(Self.tlsProvider) { provider in
            let configuration = NIOHTTPTransport.Configuration(pins: [PublicKeyPin(host: "127.0.0.1", sha256: [TLSFixtures.serverPin])])
            try await withNIOHTTPTransport(configuration: configuration) { transport in
                let error = await #expect(throws: OIDCError.self) {
                    try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
                }
                #expect(error?.code == .tlsFailure)
            }
            #expect(await provider.requestCount(.discovery) == 0)
        }
    }

    @Test("a pin for another host does not apply")
    func pinForOtherHost() async throws {
        try await withTestProvider(Self.tlsProvider) { provider in
            let configuration = NIOHTTPTransport.Configuration(
                additionalTrustRootsPEM: [TLSFixtures.caPEM],
                pins: [
                    PublicKeyPin(host: "example.com", includesSubdomains: true, sha256: [TLSFixtures.otherPin]),
                    PublicKeyPin(host: "127.0.0.2", sha256: [TLSFixtures.otherPin]),
                ]
            )
            try await withNIOHTTPTransport(configuration: configuration) { transport in
                let status = try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!)).status
                #expect(status == 200)
            }
        }
    }

    @Test("a certificate without the host's name is a tlsFailure, pinned or not")
    func wrongHostName() async throws {
        let configuration = TestProvider.Configuration(
            tls: .init(certificateChainPEM: TLSFixtures.localhostOnlyPEM, privateKeyPEM: TLSFixtures.serverKeyPEM)
        )
        try await withTestProvider(configuration) { provider in
            for pins in [[], [PublicKeyPin(host: "127.0.0.1", sha256: [TLSFixtures.serverPin])]] {
                try await withNIOHTTPTransport(configuration: .init(additionalTrustRootsPEM: [TLSFixtures.caPEM], pins: pins)) { transport in
                    let error = await #expect(throws: OIDCError.self) {
                        try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
                    }
                    #expect(error?.code == .tlsFailure)
                }
            }
            #expect(await provider.requestCount(.discovery) == 0)
        }
    }

    @Test("plain http to a TLS server and https to a plain server fail cleanly")
    func schemeMismatch() async throws {
        try await withTestProvider(Self.tlsProvider) { provider in
            let plainURL = URL(string: provider.discoveryURL.replacingOccurrences(of: "https://", with: "http://"))!
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: plainURL), options: .init(timeout: .seconds(5)))
            }
            #expect(error.map { [.networkFailure, .timedOut].contains($0.code) } == true)
        }
        try await withTestProvider { provider in
            let tlsURL = URL(string: provider.discoveryURL.replacingOccurrences(of: "http://", with: "https://"))!
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport.shared.send(HTTPRequest(url: tlsURL), options: .init(timeout: .seconds(5)))
            }
            #expect(error.map { [.tlsFailure, .networkFailure].contains($0.code) } == true)
        }
    }

    // MARK: Pins and configuration

    @Test("PublicKeyPin.sha256(ofPEM:) matches openssl's pin of certificates and public keys")
    func pinOfPEM() throws {
        #expect(try PublicKeyPin.sha256(ofPEM: TLSFixtures.serverChainPEM) == TLSFixtures.serverPin)
        #expect(try PublicKeyPin.sha256(ofPEM: TLSFixtures.caPEM) == TLSFixtures.caPin)
        #expect(try PublicKeyPin.sha256(ofPEM: TLSFixtures.otherPEM) == TLSFixtures.otherPin)
        let publicKey = """
            -----BEGIN PUBLIC KEY-----
            MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
            """
        #expect(throws: OIDCError.self) { try PublicKeyPin.sha256(ofPEM: publicKey) }
        #expect(throws: OIDCError.self) { try PublicKeyPin.sha256(ofPEM: "not a pem") }
    }

    @Test("pin host matching", arguments: [
        ("example.com", false, "example.com", true), ("example.com", false, "EXAMPLE.com.", true),
        ("example.com", false, "api.example.com", false), ("example.com", true, "api.example.com", true),
        ("example.com", true, "a.b.example.com", true), ("example.com", true, "badexample.com", false),
        ("::1", false, "[::1]", true),
    ])
    func pinHostMatching(pinned: String, subdomains: Bool, host: String, applies: Bool) {
        #expect(PublicKeyPin(host: pinned, includesSubdomains: subdomains, sha256: [TLSFixtures.caPin]).applies(to: host) == applies)
    }

    @Test("a malformed pin or trust root is an invalidArgument at validate() and at send")
    func badConfiguration() async throws {
        let configurations: [NIOHTTPTransport.Configuration] = [
            .init(pins: [PublicKeyPin(host: "example.com", sha256: ["not base64"])]),
            .init(pins: [PublicKeyPin(host: "example.com", sha256: [])]),
            .init(pins: [PublicKeyPin(host: "*.example.com", sha256: [TLSFixtures.caPin])]),
            .init(additionalTrustRootsPEM: ["-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n"]),
            .init(userAgent: "a\r\nX-Injected: 1"),
        ]
        for configuration in configurations {
            #expect(throws: OIDCError.self) { try configuration.validate() }
            let error = await #expect(throws: OIDCError.self) {
                try await NIOHTTPTransport(configuration: configuration).send(HTTPRequest(url: URL(string: "http://127.0.0.1:1/")!))
            }
            #expect(error?.code == .invalidArgument)
        }
    }
}
