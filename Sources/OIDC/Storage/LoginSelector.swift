/// Which stored logins a logout names: one issuer's logins of a user (`sub`), of one of the user's
/// sessions at the issuer (`sid`), or both (OIDC Back-Channel Logout 1.0 §2.4, §2.7), optionally
/// of one client only. ``TokenStore/deleteLogins(_:)`` deletes the logins it matches.
public struct LoginSelector: Sendable, Hashable, CustomStringConvertible {
    /// The issuer the logins came from: ``StoredLogin/issuer`` must equal it.
    public let issuer: String
    /// When set, ``StoredLogin/clientID`` must equal it.
    public let clientID: String?
    /// When set, ``StoredLogin/subject`` must equal it.
    public let subject: String?
    /// When set, ``StoredLogin/sessionID`` must equal it. A login stored without a session id
    /// (before it was kept) matches by ``subject`` instead, when the selector has one: logging
    /// out too much is safe, leaving a session of the user logged in is not.
    public let sessionID: String?

    /// The logins of `issuer` (and `clientID`, when given) with `subject`, `sessionID`, or both.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when neither `subject` nor `sessionID` is given
    ///   or one is empty: a selector never matches every login of an issuer.
    public init(issuer: String, clientID: String? = nil, subject: String? = nil, sessionID: String? = nil) throws(OIDCError) {
        guard subject != nil || sessionID != nil else {
            throw .invalidArgument("A login selector needs a subject (sub), a session id (sid), or both.")
        }
        guard subject?.isEmpty != true, sessionID?.isEmpty != true, !issuer.isEmpty else {
            throw .invalidArgument("A login selector's issuer, subject and session id must not be empty.")
        }
        self.init(checkedIssuer: issuer, clientID: clientID, subject: subject, sessionID: sessionID)
    }

    /// A selector whose subject or session id the caller has checked (a verified logout token
    /// carries one of them, never empty).
    package init(checkedIssuer issuer: String, clientID: String?, subject: String?, sessionID: String?) {
        self.issuer = issuer
        self.clientID = clientID
        self.subject = subject
        self.sessionID = sessionID
    }

    /// Whether `login` is one of the logins this selector names.
    public func matches(_ login: StoredLogin) -> Bool {
        guard login.issuer == issuer else { return false }
        if let clientID, login.clientID != clientID { return false }
        if let subject, login.subject != subject { return false }
        if let sessionID, login.sessionID != sessionID {
            // Stored before sessions were kept: the subject decides, when the selector names one.
            guard login.sessionID == nil, subject != nil else { return false }
        }
        return true
    }

    /// `issuer … sub … sid …`: names, for logs and messages.
    public var description: String {
        var parts = ["issuer \(issuer)"]
        if let clientID { parts.append("client \(clientID)") }
        if let subject { parts.append("sub \(subject)") }
        if let sessionID { parts.append("sid \(sessionID)") }
        return parts.joined(separator: ", ")
    }
}
