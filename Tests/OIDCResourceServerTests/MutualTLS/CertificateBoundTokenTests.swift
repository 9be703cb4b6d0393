import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("Certificate-bound access tokens (RFC 8705 §3)")
struct CertificateBoundTokenTests {
    /// Stand-ins for two client certificates' DER: the binding is the SHA-256 of the bytes the
    /// connection presented, whatever they hold.
    static let certificate: [UInt8] = Array("certificate one: DER bytes as the TLS stack gave them".utf8)
    static let otherCertificate: [UInt8] = Array("certificate two".utf8)

    static func thumbprint(_ der: [UInt8]) throws -> String { Base64URLEncoding.encode(try LibCrypto.sha256(der)) }

    @Test("a token bound to the connection's certificate is accepted; without a certificate or with another it is refused")
    func binding() async throws {
        try await ResourceFixture.run { fixture in
            let x5t = try Self.thumbprint(Self.certificate)
            let token = try await fixture.token(x5t: x5t)
            let headers = [("Authorization", "Bearer " + token)]
            let access = try await fixture.server.verify(ResourceFixture.request(headers, certificate: Self.certificate))
            #expect(access.binding == .certificate(thumbprint: x5t) && access.tokenType == "Bearer")
            for certificate in [nil, Self.otherCertificate] {
                let refusal = try await fixture.refusal(ResourceFixture.request(headers, certificate: certificate))
                #expect(refusal.rule == .certificateMismatch && refusal.status == 401 && refusal.error == "invalid_token")
            }
        }
    }

    @Test("a token bound to a DPoP key and a certificate needs both")
    func both() async throws {
        try await ResourceFixture.run { fixture in
            let key = try DPoPKey.generate()
            let x5t = try Self.thumbprint(Self.certificate)
            let token = try await fixture.token(jkt: key.thumbprint, x5t: x5t)
            var request = try fixture.dpop(token, key: key)
            request.peerCertificate = Self.certificate
            let access = try await fixture.server.verify(request)
            #expect(access.binding == .dpopAndCertificate(keyThumbprint: key.thumbprint, certificateThumbprint: x5t))
            var withoutCertificate = try fixture.dpop(token, key: key)
            withoutCertificate.peerCertificate = nil
            #expect(try await fixture.refusal(withoutCertificate).rule == .certificateMismatch)
        }
    }

    @Test("a cnf that is not an object of strings is refused")
    func malformedConfirmation() async throws {
        try await ResourceFixture.run { fixture in
            for cnf: Any in ["jkt", ["jkt": 42], ["x5t#S256": ""], [String]()] {
                let token = try await fixture.provider.signJWT(claims: fixture.claims(["cnf": cnf]))
                #expect(try await fixture.refusal(ResourceFixture.bearer(token)).rule == .invalidClaim)
            }
        }
    }
}
