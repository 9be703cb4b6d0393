/// A refusal before it is dressed as an answer: the rule, the OAuth error code, the message, and
/// which challenge carries the error. ``ResourceServer`` turns it into an ``AccessRefusal`` with
/// its configuration's challenges (`algs`, `resource_metadata`, the nonce).
struct Denial: Error, Sendable {
    /// The scheme whose challenge carries the error.
    enum Scheme: Sendable {
        case bearer, dpop
    }

    enum Code: String, Sendable {
        case invalidRequest = "invalid_request"
        case invalidToken = "invalid_token"
        case insufficientScope = "insufficient_scope"
        case insufficientUserAuthentication = "insufficient_user_authentication"
        case invalidProof = "invalid_dpop_proof"
        case useNonce = "use_dpop_nonce"

        var status: Int {
            switch self {
            case .invalidRequest: 400
            case .insufficientScope: 403
            case .invalidToken, .invalidProof, .useNonce, .insufficientUserAuthentication: 401
            }
        }
    }

    var rule: AccessRefusal.Rule
    /// `nil`: no credentials came (RFC 6750 §3.1), or ``serverFailure``.
    var code: Code?
    var message: String
    /// The scheme whose challenge carries the error; `nil`: the one the request used, else the first offered.
    var scheme: Scheme?
    /// The scopes the route requires, for `insufficient_scope` and a request without a token.
    var scope: Set<String> = []
    /// What the route requires of the user's authentication, for `insufficient_user_authentication` (RFC 9470 §3).
    var authentication: AuthenticationRequirement?
    /// This server could not check the request (503, no challenge).
    var serverFailure = false

    init(_ rule: AccessRefusal.Rule, _ code: Code?, _ message: String, scheme: Scheme? = nil) {
        self.rule = rule
        self.code = code
        self.message = message
        self.scheme = scheme
    }

    static func invalidToken(_ rule: AccessRefusal.Rule, _ message: String) -> Denial {
        Denial(rule, .invalidToken, message)
    }

    static func invalidRequest(_ rule: AccessRefusal.Rule, _ message: String) -> Denial {
        Denial(rule, .invalidRequest, message)
    }

    static func invalidProof(_ rule: AccessRefusal.Rule, _ message: String) -> Denial {
        Denial(rule, .invalidProof, message, scheme: .dpop)
    }

    static func unavailable(_ rule: AccessRefusal.Rule, _ message: String) -> Denial {
        var denial = Denial(rule, nil, message)
        denial.serverFailure = true
        return denial
    }
}
