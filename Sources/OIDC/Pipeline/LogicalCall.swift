public import Foundation
internal import Synchronization

/// One logical call, as a ``CallStage`` sees it: which call it is, where it goes, and how many
/// requests it has sent so far (a DPoP nonce retry or the retry after a refresh is one more; a
/// refresh inside a resource call is a logical call of its own, at the provider).
public final class LogicalCall: Sendable, CustomStringConvertible {
    /// Which call: a ``ProviderCall`` or a resource request.
    public let call: HTTPCall
    /// The method of its first request.
    public let method: String
    /// The URL of its first request: an endpoint of the provider, or the resource's.
    public let url: URL
    private let sent = Atomic<Int>(0)

    /// A call `call` of `method` to `url`, none of whose requests has left yet.
    package init(call: HTTPCall, method: String, url: URL) {
        self.call = call
        self.method = method
        self.url = url
    }

    /// How many requests of this call went to the per-attempt stages and the transport so far:
    /// 0 when it failed before sending anything, 1 for a plain call, more after retries.
    public var attempts: Int { sent.load(ordering: .relaxed) }

    /// Counts one more request leaving.
    package func attemptLeaves() { sent.add(1, ordering: .relaxed) }

    /// The call's name and URL (never a query or a credential), and its attempts so far.
    public var description: String { "\(call.logName) \(method) \(HTTPErrorMapping.describe(url)) (\(attempts) attempt\(attempts == 1 ? "" : "s"))" }
}
