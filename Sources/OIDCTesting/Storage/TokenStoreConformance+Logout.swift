internal import Foundation
internal import OIDC

extension CheckContext {
    /// Five logins of two issuers, two users, three sessions and two clients, then three
    /// deletions, each through another store value: exactly the matching logins go.
    func deleteLogins() async throws {
        let issuer = "https://issuer.example/\(prefix)", otherIssuer = "https://other.example/\(prefix)"
        func login(_ issuer: String, _ subject: String, _ session: String?, client: String = "conformance") -> StoredLogin {
            var login = Self.login(1)
            login.issuer = issuer
            login.clientID = client
            login.subject = subject
            login.sessionID = session
            return login
        }
        let logins: [String: StoredLogin] = [
            "a": login(issuer, "user-1", "session-1"), "b": login(issuer, "user-1", "session-2"),
            "c": login(issuer, "user-2", "session-3"), "d": login(otherIssuer, "user-1", "session-1"),
            "e": login(issuer, "user-1", nil, client: "other-client"),
        ]
        let writer = try await makeStore()
        // A store without deleteLogins (the protocol's default throws): nothing to check.
        do { _ = try await writer.deleteLogins(LoginSelector(issuer: issuer, subject: "nobody-yet")) } catch let error as OIDCError where error.context["unsupported"] == "deleteLogins" {
            return
        }
        for (name, login) in logins { try await writer.save(login, for: key(name)) }
        guard try await writer.load(key("a"))?.sessionID == "session-1" else { throw Broken("a login's session id was not kept") }

        func delete(_ selector: LoginSelector, expecting count: Int, gone: [String]) async throws {
            let deleted = try await makeStore().deleteLogins(selector)
            guard deleted == count else { throw Broken("deleteLogins(\(selector)) deleted \(deleted) login(s), not \(count)") }
            let reader = try await makeStore()
            for name in gone where try await reader.load(key(name)) != nil {
                throw Broken("deleteLogins(\(selector)) left login \(name), which it matches")
            }
        }
        try await delete(LoginSelector(issuer: issuer, sessionID: "session-1"), expecting: 1, gone: ["a"])
        try await delete(LoginSelector(issuer: issuer, clientID: "conformance", subject: "user-1"), expecting: 1, gone: ["b"])
        try await delete(LoginSelector(issuer: issuer, subject: "user-1", sessionID: "session-9"), expecting: 1, gone: ["e"])
        try await delete(LoginSelector(issuer: issuer, subject: "nobody"), expecting: 0, gone: [])
        let reader = try await makeStore()
        for name in ["c", "d"] {
            guard try await reader.load(key(name)) == logins[name] else { throw Broken("deleteLogins deleted or changed login \(name), which no selector matched") }
        }
        for name in logins.keys { try await writer.delete(key(name)) }
    }
}
