import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A provider that echoes the request's DPoP proof in its error text (some copy the offending
/// header into `error_description`): the proof is a credential for its request, so it is
/// redacted from the error like the code and the client secret are.
@Suite("DPoP: a proof echoed by the provider is not in the error", .timeLimit(.scaledMinutes(1)))
struct DPoPProofRedactionTests {
    /// Answers every call as a provider that quotes the proof back would.
    struct EchoingProvider: HTTPStage {
        func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
            let proof = request.headers["DPoP"] ?? "none"
            let body = #"{"error":"invalid_dpop_proof","error_description":"bad proof: \#(proof)"}"#
            return HTTPResponse(status: 400, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
        }
    }

    /// Keeps the proof that left, for the check.
    final class ProofTap: HTTPStage, @unchecked Sendable {
        private let lock = NSLock()
        private var proofs: [String] = []
        var seen: [String] { lock.withLock { proofs } }
        func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
            if let proof = request.headers["DPoP"] { lock.withLock { proofs.append(proof) } }
            return try await next(request)
        }
    }

    @Test("a refresh refused with the proof quoted: the error names the provider's code, and neither its message, context nor description holds the proof")
    func proofRedacted() async throws {
        try await withTestProvider { provider in
            let tap = ProofTap()
            let rp = try await provider.relyingParty(configuration: RelyingParty.Configuration(providerStages: [tap, EchoingProvider()]))
            let client = rp.tokenClient(proving: try DPoPKey.generate())
            let error = await #expect(throws: OIDCError.self) { try await client.refresh(Secret("refresh-token-value")) }
            let proof = try #require(tap.seen.first)
            #expect(error?.providerError?.error == "invalid_dpop_proof")
            let text = [error?.message ?? "", error?.description ?? "", error?.providerError?.errorDescription ?? ""]
                + (error?.context.values.map { $0 } ?? [])
            #expect(!text.contains { $0.contains(proof) }, "the proof is redacted")
            #expect(!text.contains { $0.contains("refresh-token-value") })
        }
    }
}
