public import OIDC

extension ResourceServer {
    /// The request the kit checks, from what an HTTP server received, its ``ResourceRequest/url``
    /// the URL the client addressed by the kit's one rule: on ``Configuration/publicOrigin`` when
    /// set, else on `scheme` and the request's one `Host`; with the request target's path and
    /// query. `Forwarded` and `X-Forwarded-*` are never read. An integration (a Hummingbird or
    /// Vapor middleware, your own server) calls this instead of building the URL itself.
    ///
    /// ```swift
    /// let request = try server.request(method: "GET", target: "/orders?page=2", headers: headers)
    /// let access = try await server.verify(request, requiring: ["orders:read"])
    /// ```
    ///
    /// - Parameters:
    ///   - method: the request's method.
    ///   - target: the request target as received: a path and query (`/orders?page=2`), or an
    ///     absolute URL of this resource (absolute-form, RFC 9112 §3.2.2).
    ///   - authority: the HTTP/2 `:authority`, or a `Host` value the framework moved out of the
    ///     header fields (Hummingbird's `request.head.authority`); counted with the `Host` fields.
    ///   - headers: every header field as received.
    ///   - scheme: `https` when this server terminated TLS itself, `http` otherwise.
    ///   - peerCertificate: the DER of the client's TLS certificate, if it presented one.
    /// - Throws: ``AccessRefusal`` (400 `invalid_request`): ``AccessRefusal/Rule/malformedHost`` for
    ///   several `Host` fields, one that is not `host[:port]`, or none without a public origin;
    ///   ``AccessRefusal/Rule/malformedRequestTarget`` for a target that is not a path, is an
    ///   absolute URL of another origin, has a fragment or a byte outside visible ASCII, or is
    ///   longer than 8 KiB.
    public func request(
        method: String, target: String, authority: String? = nil, headers: HTTPHeaders, scheme: String = "http", peerCertificate: [UInt8]? = nil
    ) throws(AccessRefusal) -> ResourceRequest {
        let hosts = (authority.map { [$0] } ?? []) + headers.values("Host")
        do throws(Denial) {
            let url = try AddressedURL.url(target: target, hosts: hosts, scheme: scheme, publicOrigin: publicOrigin)
            return ResourceRequest(method: method, url: url, headers: headers, peerCertificate: peerCertificate)
        } catch {
            throw refusal(error)
        }
    }
}
