import OIDCHummingbird

/// The API's request context: Hummingbird's basic one, plus the access `RequireAccess` verified
/// (swift-oidc's OIDCHummingbird product).
public typealias APIRequestContext = BasicAccessRequestContext
