import Foundation
import Hummingbird
import OIDCHummingbird
import OIDCResourceServer

/// The example's API: each user's orders, behind ``RequireAccess`` with a scope per route.
///
/// | route | needs |
/// | --- | --- |
/// | `GET /.well-known/oauth-protected-resource` | nothing: the RFC 9728 metadata |
/// | `GET /me` | any valid access token |
/// | `GET /orders` | `orders:read` |
/// | `POST /orders` | `orders:write` |
public enum OrdersAPI {
    public static let scopes = ["orders:read", "orders:write"]

    /// The routes, checking tokens with `server`.
    public static func router(server: ResourceServer, orders: OrderBook = OrderBook()) -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        // Where clients learn which authorization server to ask, for which scopes, with DPoP or
        // not; at the path-inserted well-known URL when the resource has a path (RFC 9728 §3.1).
        router.addProtectedResourceMetadata(server)
        func requiring(_ scopes: Set<String>) -> RequireAccess<APIRequestContext> {
            RequireAccess(server, scopes: scopes)
        }
        router.group("me").add(middleware: requiring([])).get { _, context in
            let access = try context.verifiedAccess
            return Me(sub: access.subject, client_id: access.clientID, scope: access.scopes.sorted().joined(separator: " "), token_type: access.tokenType)
        }
        router.group("orders").add(middleware: requiring(["orders:read"])).get { _, context in
            OrderList(orders: await orders.list(for: try context.verifiedAccess.owner))
        }
        router.group("orders").add(middleware: requiring(["orders:write"])).post { request, context in
            let new = try await request.decode(as: NewOrder.self, context: context)
            guard !new.item.isEmpty, new.item.count <= 200 else { throw HTTPError(.badRequest, message: "item: 1 to 200 characters") }
            return EditedResponse(status: .created, response: await orders.add(new.item, for: try context.verifiedAccess.owner))
        }
        return router
    }

    struct Me: ResponseEncodable {
        let sub: String?
        let client_id: String?
        let scope: String
        let token_type: String
    }

    struct NewOrder: Decodable {
        let item: String
    }

    struct OrderList: ResponseEncodable {
        let orders: [Order]
    }
}

public struct Order: ResponseEncodable, Sendable, Equatable {
    public let id: String
    public let item: String
}

/// The orders, in memory, per owner; bounded (100 orders an owner, 1,000 owners: the oldest go).
public actor OrderBook {
    private var orders: [String: [Order]] = [:]
    private var owners: [String] = []

    public init() {}

    func list(for owner: String) -> [Order] { orders[owner] ?? [] }

    func add(_ item: String, for owner: String) -> Order {
        let order = Order(id: UUID().uuidString.lowercased(), item: item)
        if orders[owner] == nil {
            if owners.count == 1_000 { orders[owners.removeFirst()] = nil }
            owners.append(owner)
        }
        orders[owner, default: []].append(order)
        if orders[owner]!.count > 100 { orders[owner]!.removeFirst() }
        return order
    }
}

extension VerifiedAccess {
    /// Whose orders: the user, or the client itself for a client-credentials token without `sub`.
    var owner: String { subject ?? clientID.map { "client:" + $0 } ?? "" }
}
