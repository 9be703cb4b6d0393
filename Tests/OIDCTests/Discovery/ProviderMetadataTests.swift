import Foundation
import OIDC
import Testing

@Suite("Provider metadata")
struct ProviderMetadataTests {
    @Test("a document without jwks_uri or response_types_supported (or with null) is refused; endpoints must be https off loopback")
    func required() {
        let base = #""issuer":"https://idp.example","authorization_endpoint":"https://idp.example/a","token_endpoint":"https://idp.example/t""#
        for body in [
            "{\(base),\"response_types_supported\":[\"code\"]}", "{\(base),\"jwks_uri\":\"https://idp.example/k\"}",
            "{\(base),\"response_types_supported\":[\"code\"],\"jwks_uri\":null}",
            "{\(base),\"response_types_supported\":null,\"jwks_uri\":\"https://idp.example/k\"}",
        ] {
            let error = #expect(throws: OIDCError.self) { try ProviderMetadata(document: Array(body.utf8), expectedIssuer: "https://idp.example") }
            #expect(error?.code == .malformedResponse)
        }
        let insecure = "{\(base),\"response_types_supported\":[\"code\"],\"jwks_uri\":\"http://idp.example/k\"}"
        let error = #expect(throws: OIDCError.self) { try ProviderMetadata(document: Array(insecure.utf8), expectedIssuer: "https://idp.example") }
        #expect(error?.code == .insecureEndpoint)
        let fine = "{\(base),\"response_types_supported\":[\"code\"],\"jwks_uri\":\"https://idp.example/k\"}"
        #expect(throws: Never.self) { try ProviderMetadata(document: Array(fine.utf8), expectedIssuer: "https://idp.example") }
    }
}
