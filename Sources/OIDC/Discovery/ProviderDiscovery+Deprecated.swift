public import Foundation

extension ProviderDiscovery {
    /// The two well-known locations for `issuer`, in the order they are tried.
    @available(*, deprecated, message: "documentURLs(for:) is internal plumbing: ProviderDiscovery.metadata(for:) tries the locations itself and its errors name them")
    public static func documentURLs(for issuer: String) throws(OIDCError) -> [URL] { try wellKnownURLs(for: issuer) }
}
