import OIDC

enum Version {
    static let number = "0.1.0"
    static var description: String { "\(number) (\(OIDCLibrary.openSSLVersion))" }
}
