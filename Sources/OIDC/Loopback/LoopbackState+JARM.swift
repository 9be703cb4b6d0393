internal import Foundation
internal import Logging

/// An answer of the loopback listener: made at once, or after an asynchronous check (a signed
/// callback's verification with the provider's keys, which may fetch them).
enum LoopbackAnswer: Sendable {
    case now(LoopbackResponse)
    case later(@Sendable () async -> LoopbackResponse)
}

/// How the listener verifies the signed callbacks (JARM) of the request it serves.
struct LoopbackJARMCheck: Sendable {
    let verifier: JARMVerifier
    let keys: JWKSCache
}

extension LoopbackState {
    /// A callback of a request that asked for a signed response (JARM): its state is inside the
    /// signed `response`, so the response is verified first, then its state checked, then the
    /// callback concluded as a plain one is.
    ///
    /// - A `response` that fails its verification proves nothing (not even which login it is
    ///   for): it is answered with a refusal page and ignored, as a wrong state is, and remembered
    ///   for the timeout to report.
    /// - A verified response with another state: ignored, as a plain one.
    /// - Plain parameters (`code`, `error`, …) instead of or beside `response`, with this login's
    ///   state: a downgrade, the login's outcome (``OIDCError/Code/unsecuredResponse``); without
    ///   it, not this login's, ignored.
    func signedCallback(query: Substring, request: AuthorizationRequest, check: LoopbackJARMCheck) -> LoopbackAnswer {
        let response: String
        do {
            response = try AuthorizationResponse.securedResponse(in: try FormURLEncoding.decode(query))
        } catch {
            guard error.code == .unsecuredResponse, Self.carriesState(of: request, query: query) else {
                logger.notice("callback without a signed response (JARM) for this login ignored")
                return .now(LoopbackPage.foreign())
            }
            logger.warning("callback with plain parameters where a signed response (JARM) was asked for: refused as a downgrade")
            return .now(conclude(.failure(error), for: request))
        }
        return .later { [self] in
            let claims: [String: String]
            do throws(OIDCError) { claims = try await check.verifier.verify(response, keys: check.keys, now: Date()) } catch {
                logger.notice("signed callback (JARM) failed its verification and was ignored", metadata: .failure(error))
                rememberRefusal(error)
                return LoopbackPage.refused(error)
            }
            guard let state = claims["state"], ConstantTime.equals(state, request.state) else {
                logger.notice("signed callback (JARM) without this login's state ignored (missing or wrong)")
                return LoopbackPage.foreign()
            }
            let result = Result { () throws(OIDCError) in
                try AuthorizationResponse(checking: claims.map { OAuthParameter($0.key, $0.value) }, request: request)
            }
            return conclude(result, for: request)
        }
    }
}
