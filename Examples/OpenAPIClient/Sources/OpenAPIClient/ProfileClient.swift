import Foundation
import OIDC
import OIDCOpenAPI
import OpenAPIURLSession

/// The generated client of `openapi.yaml`, authorized by `session`'s login: the whole user code.
public func profileClient(api: URL, session: AuthenticatedSession) -> Client {
    Client(serverURL: api, transport: URLSessionTransport(), middlewares: [SessionMiddleware(session: session)])
}

/// Who the session's access token speaks for, as the API says.
public func currentUser(api: URL, session: AuthenticatedSession) async throws -> Components.Schemas.Me {
    try await profileClient(api: api, session: session).getMe().ok.body.json
}
