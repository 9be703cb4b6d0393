import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

@Suite("oidc discover", .timeLimit(.scaledMinutes(1)))
struct DiscoverCommandTests {
    @Test("prints the validated metadata as JSON and exits 0")
    func discover() async throws {
        try await withTestProvider { provider in
            let result = try await OIDCBinary.run(["discover", provider.issuer])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            #expect(object["issuer"] as? String == provider.issuer)
            #expect(object["token_endpoint"] as? String == provider.tokenEndpoint)
        }
    }

    @Test("an issuer mismatch exits 4; an unreachable or failing provider exits 5; a bad issuer is a usage error")
    func failures() async throws {
        try await withTestProvider { provider in
            let mismatch = try await OIDCBinary.run(["discover", provider.issuer + "/"])
            #expect(mismatch.status == 4)
            #expect(mismatch.stderr.contains("issuer"))
            #expect(mismatch.stdout.isEmpty)
            await provider.failNextRequests(1, to: .discovery, with: .serviceUnavailable)
            let unavailable = try await OIDCBinary.run(["discover", provider.issuer])
            #expect(unavailable.status == 5, "\(unavailable.stderr)")
        }
        let refused = try await OIDCBinary.run(["discover", "http://127.0.0.1:1"])
        #expect(refused.status == 5, "\(refused.stderr)")
        let insecure = try await OIDCBinary.run(["discover", "http://idp.example"])
        #expect(insecure.status == 2)
        #expect(insecure.stderr.contains("https"))
    }
}
