import ArgumentParser
import Foundation
import OIDC

/// client-go's credential plugin format (kubectl `users[].user.exec`): an `ExecCredential` whose
/// `status` carries the token and its expiry, in the API version `KUBERNETES_EXEC_INFO` asks for.
enum ExecCredential {
    static let v1 = "client.authentication.k8s.io/v1"
    static let v1beta1 = "client.authentication.k8s.io/v1beta1"

    /// The API version kubectl asks for in `KUBERNETES_EXEC_INFO`; v1beta1 when it is unset (older
    /// kubectl, or a manual run).
    static func requestedVersion(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard let info = environment["KUBERNETES_EXEC_INFO"], !info.isEmpty else { return v1beta1 }
        guard let object = try? StrictJSON.parseObject(Array(info.utf8)), let version = object["apiVersion"]?.stringValue else {
            throw ValidationError("KUBERNETES_EXEC_INFO is not an ExecCredential with an apiVersion")
        }
        guard version == v1 || version == v1beta1 else {
            throw ValidationError("KUBERNETES_EXEC_INFO asks for \(Display.sanitized(version, limit: 120)); oidc speaks \(v1) and \(v1beta1)")
        }
        return version
    }

    /// `{"apiVersion":…,"kind":"ExecCredential","spec":{"interactive":false},"status":{"expirationTimestamp":"…Z","token":"…"}}`
    static func json(version: String, token: Secret, expiresAt: Date?) throws -> String {
        var status: [String: Any] = ["token": token.revealedValue]
        status["expirationTimestamp"] = expiresAt.map(rfc3339)
        let object: [String: Any] = [
            "apiVersion": version, "kind": "ExecCredential", "spec": ["interactive": false], "status": status,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// RFC 3339 in UTC with whole seconds, as Kubernetes' metav1.Time writes it: `2026-11-23T12:00:00Z`.
    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
