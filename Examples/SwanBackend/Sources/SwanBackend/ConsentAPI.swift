import Foundation
import OIDC

/// Reads a consent's status from Swan's partner API (GraphQL), with the user's access token, so
/// the backend acts on what Swan says and not on the `status` of a redirect anybody can forge.
public struct ConsentAPI: Sendable {
    public var url: URL

    public init(url: URL) { self.url = url }

    /// What went wrong while reading a consent.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case httpStatus(Int)
        case unreadable
        case notFound

        public var description: String {
            switch self {
            case .httpStatus(let status): "Swan's API answered HTTP \(status)."
            case .unreadable: "Swan's API answered something that is not a consent."
            case .notFound: "Swan's API knows no such consent."
            }
        }
    }

    static let query = "query ConsentStatus($consentId: String!) { consent(consentId: $consentId) { status } }"

    /// The consent's status as Swan has it. The session adds the bearer token, refreshes it on a
    /// 401 and retries once.
    public func status(of consentID: String, session: AuthenticatedSession) async throws -> SwanConsentCallback.Status {
        let body = try JSONSerialization.data(withJSONObject: ["query": Self.query, "variables": ["consentId": consentID]])
        let response = try await session.send(
            HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "application/json"], body: Array(body))
        )
        guard response.status == 200 else { throw Failure.httpStatus(response.status) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let data = object["data"] as? [String: Any]
        else { throw Failure.unreadable }
        guard let consent = data["consent"] as? [String: Any] else { throw Failure.notFound }
        guard let status = consent["status"] as? String else { throw Failure.unreadable }
        return SwanConsentCallback.Status(rawValue: status)
    }
}
