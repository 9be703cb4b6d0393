import ArgumentParser
import Foundation
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// client-go's credential plugin format (kubectl `users[].user.exec`): an `ExecCredential` whose
/// `status` carries the token and its expiry, in the API version `KUBERNETES_EXEC_INFO` asks for.
enum ExecCredential {
    static let v1 = "client.authentication.k8s.io/v1"
    static let v1beta1 = "client.authentication.k8s.io/v1beta1"

    /// The API version kubectl asks for in `KUBERNETES_EXEC_INFO`; v1beta1 when it is unset (older
    /// kubectl, or a manual run).
    static func requestedVersion(environment: [String: String]? = nil) throws -> String {
        // getenv, not ProcessInfo: kubectl runs this before every request (the fast path).
        let info = environment.map { $0["KUBERNETES_EXEC_INFO"] } ?? getenv("KUBERNETES_EXEC_INFO").map { String(cString: $0) }
        guard let info, !info.isEmpty else { return v1beta1 }
        guard let object = try? StrictJSONParser.parseObject(Array(info.utf8)), let version = object["apiVersion"]?.stringValue else {
            throw ValidationError("KUBERNETES_EXEC_INFO is not an ExecCredential with an apiVersion")
        }
        guard version == v1 || version == v1beta1 else {
            throw ValidationError("KUBERNETES_EXEC_INFO asks for \(UntrustedText.sanitized(version, limit: 120)); oidc speaks \(v1) and \(v1beta1)")
        }
        return version
    }

    /// `{"apiVersion":…,"kind":"ExecCredential","spec":{"interactive":false},"status":{"expirationTimestamp":"…Z","token":"…"}}`,
    /// members sorted, no whitespace, `/` not escaped: what `JSONSerialization` writes with
    /// `.sortedKeys` and `.withoutEscapingSlashes`, written by hand because kubectl runs this before
    /// every request and `JSONSerialization` costs milliseconds and megabytes of start-up.
    static func json(version: String, token: Secret, expiresAt: Date?) throws -> String {
        var status = ""
        if let expiresAt { status += #""expirationTimestamp":"# + JSONString.quoted(rfc3339(expiresAt)) + "," }
        status += #""token":"# + JSONString.quoted(token.revealedValue)
        return #"{"apiVersion":"# + JSONString.quoted(version) + #","kind":"ExecCredential","spec":{"interactive":false},"status":{"#
            + status + "}}"
    }

    /// RFC 3339 in UTC with whole seconds, as Kubernetes' metav1.Time writes it: `2026-11-23T12:00:00Z`.
    ///
    /// With `gmtime_r`, not a date formatter: kubectl runs this before every request, and the
    /// formatter would load time-zone and locale data first. A date outside the years 1 to 9999
    /// (a stored value, never a verified one) is written as the nearer end of that range.
    static func rfc3339(_ date: Date) -> String {
        var seconds = time_t(DateRange.unixSeconds(date))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "1970-01-01T00:00:00Z" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return "\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
