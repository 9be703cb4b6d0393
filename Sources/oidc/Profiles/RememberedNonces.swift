import Foundation
import OIDC

/// The latest `DPoP-Nonce` (RFC 9449 §8, §9) of each server a DPoP-bound login's requests met, kept
/// with the login (an attribute of the stored login: in the store, 0600 and sealed like the tokens),
/// so that the next process starts with them: `oidc request` sends its first proof with the nonce
/// the previous one was given, and `oidc proof`, which sends nothing, puts it in the proof it prints.
/// At most ``capacity`` origins, the most recently changed kept. Nonces are not secrets.
enum RememberedNonces {
    /// The stored login's attribute: origin=nonce pairs, form-encoded, least recently changed first.
    static let attribute = "dpop_nonces"
    /// How many origins are remembered.
    static let capacity = 16

    /// The remembered nonces of `login`, least recently changed first; none for a login that is
    /// not DPoP-bound, or an attribute that does not parse.
    static func read(_ login: StoredLogin) -> [(origin: String, nonce: String)] {
        guard login.dpopThumbprint != nil, let text = login.attributes[attribute],
            let pairs = try? FormURLEncoding.decode(Substring(text), allowDuplicates: false)
        else { return [] }
        return pairs.suffix(capacity).map { ($0.name, $0.value) }
    }

    /// The nonce remembered for `url`'s origin.
    static func nonce(for url: URL, in login: StoredLogin) -> String? {
        guard let origin = DPoPNonces.origin(of: url) else { return nil }
        return read(login).last { $0.origin == origin }?.nonce
    }

    /// Puts `remembered` into a session's nonces before its first request.
    static func seed(_ nonces: DPoPNonces, with remembered: [(origin: String, nonce: String)]) {
        for (origin, nonce) in remembered { nonces.remember(nonce, forOrigin: origin) }
    }

    /// `remembered` with what this process learned (`now`, a session's nonces after its requests):
    /// each origin whose nonce changed moves to the end, and only the last ``capacity`` stay.
    static func merged(_ remembered: [(origin: String, nonce: String)], with now: [(origin: String, nonce: String)]) -> [(origin: String, nonce: String)] {
        var result = remembered
        for (origin, nonce) in now where !remembered.contains(where: { $0.origin == origin && $0.nonce == nonce }) {
            result.removeAll { $0.origin == origin }
            result.append((origin, nonce))
        }
        return Array(result.suffix(capacity))
    }

    /// Keeps what a session learned with the login stored under `key`, under the store's lock,
    /// when it changed anything and the stored login is still the DPoP-bound one that used them
    /// (same key thumbprint). The stored login is read again under the lock: a refresh the
    /// session made meanwhile is kept.
    static func keep(
        _ nonces: DPoPNonces, for thumbprint: String?, in keychain: FileKeychain, as key: TokenStoreKey
    ) async throws {
        guard let thumbprint else { return }
        let learned = nonces.latest
        guard !learned.isEmpty else { return }
        try await keychain.withLock(key) {
            guard var login = try keychain.load(key), login.dpopThumbprint == thumbprint else { return }
            let remembered = read(login)
            let updated = merged(remembered, with: learned)
            guard updated.map(\.origin) != remembered.map(\.origin) || updated.map(\.nonce) != remembered.map(\.nonce) else { return }
            login.attributes[attribute] = FormURLEncoding.encode(updated.map { OAuthParameter($0.origin, $0.nonce) })
            try keychain.save(login, for: key)
        }
    }
}
