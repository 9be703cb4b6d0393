internal import Foundation
internal import Logging

/// The resource pipeline's outermost stage: the access token goes only to the hosts of the
/// ``HostAllowlist``, over https (http only to loopback); anything else is refused before a login
/// is read or a token refreshed.
struct HostAllowlistStage: HTTPStage {
    let allowlist: HostAllowlist
    let logger: Logger

    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        do { try allowlist.check(request.url) } catch {
            logger.notice("bearer token withheld from a host off the allowlist", metadata: ["url": .endpoint(request.url), "error": .code(error)])
            throw error
        }
        return try await next(request)
    }
}
