import Foundation
import Hummingbird
import OIDC
import OIDCTesting

/// A stand-in for Swan's partner GraphQL API, enough for `ConsentAPI`: `POST /graphql` answers
/// `consent(consentId:) { status }` from `statuses`, for a bearer token the provider accepts (it is
/// checked at the provider's userinfo endpoint, so an expired token gets a 401 as at Swan).
public actor ConsentAPIStandIn {
    public let provider: TestProvider
    public let transport: any HTTPTransport
    public var statuses: [String: String]
    /// How many queries were answered, and with which bearer tokens (for the tests).
    public private(set) var tokensSeen: [String] = []
    public private(set) var unauthorizedCount = 0

    public init(provider: TestProvider, transport: any HTTPTransport, statuses: [String: String]) {
        self.provider = provider
        self.transport = transport
        self.statuses = statuses
    }

    public func setStatus(_ status: String, for consentID: String) { statuses[consentID] = status }

    public nonisolated func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("graphql") { request, _ in await self.answer(request) }
    }

    func answer(_ request: Request) async -> Response {
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
            return unauthorized()
        }
        let token = String(authorization.dropFirst("Bearer ".count))
        let check = try? await transport.send(
            OIDC.HTTPRequest(url: URL(string: provider.userinfoEndpoint)!, headers: ["Authorization": "Bearer " + token])
        )
        guard check?.status == 200 else { return unauthorized() }
        tokensSeen.append(token)

        let buffer = try? await request.body.collect(upTo: 64 * 1024)
        guard let buffer, let query = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any],
            let variables = query["variables"] as? [String: Any], let id = variables["consentId"] as? String
        else {
            return Response(status: .badRequest)
        }
        let consent: Any = statuses[id].map { ["status": $0] } ?? NSNull()
        let body = (try? JSONSerialization.data(withJSONObject: ["data": ["consent": consent]])) ?? Data()
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        )
    }

    private func unauthorized() -> Response {
        unauthorizedCount += 1
        return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
    }
}
