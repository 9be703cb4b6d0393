import Foundation
import OIDC
import Testing
@testable import oidc

/// The profile file's format: what earlier versions wrote still loads, and what this version
/// writes is byte for byte what they wrote, so that an older `oidc` reads it too.
@Suite("Profile file format")
struct ProfileFormatTests {
    /// Every setting set, with text that needs escaping (quotes, a slash, non-ASCII).
    static var full: Profile {
        var profile = Profile()
        profile.provider = .schibsted
        profile.issuer = "https://id.example/a \"quoted\" path"
        profile.environment = "pre"
        profile.clientID = "client-é"
        profile.clientSecretFile = "/home/u/secret"
        profile.scopes = ["openid", "profile"]
        profile.parameters = [OAuthParameter("resource", "https://api.example"), OAuthParameter("x", "")]
        profile.prompt = "login"
        profile.loginHint = "user@example.com"
        profile.acrValues = "urn:acr:2"
        profile.maxAge = 300
        profile.uiLocales = "nb en"
        profile.mfa = "otp"
        profile.listen = ["127.0.0.1:0", "[::1]:8000"]
        profile.browser = "/usr/bin/firefox --new-window"
        profile.store = "/home/u/store"
        profile.allowHosts = [".example.com", "api.example"]
        profile.flow = .clientCredentials
        profile.assertionFile = "/home/u/token"
        profile.deviceAuthorizationEndpoint = "https://id.example/device"
        profile.pushedAuthorization = true
        profile.signsRequestObjects = true
        profile.dpop = true
        profile.fapi2 = true
        profile.signedResponses = true
        profile.clientAuth = "private_key_jwt"
        profile.privateKeyFile = "/home/u/key.pem"
        profile.keyID = "k1"
        profile.keyAlgorithm = "PS256"
        profile.assertionAudience = "endpoint"
        profile.clientCertificateFile = "/home/u/cert.pem"
        profile.clientKeyFile = "/home/u/cert.key"
        profile.caFile = "/home/u/ca.pem"
        return profile
    }

    /// What `oidc` 0.x before the key table wrote for ``full`` (JSONSerialization, sorted keys, indented),
    /// with the settings added since (`assertion_file`).
    static let fullFile = #"""
{
  "acr_values" : "urn:acr:2",
  "allow_hosts" : [
    ".example.com",
    "api.example"
  ],
  "assertion_audience" : "endpoint",
  "assertion_file" : "/home/u/token",
  "browser" : "/usr/bin/firefox --new-window",
  "ca_file" : "/home/u/ca.pem",
  "client_auth" : "private_key_jwt",
  "client_certificate_file" : "/home/u/cert.pem",
  "client_id" : "client-é",
  "client_key_file" : "/home/u/cert.key",
  "client_secret_file" : "/home/u/secret",
  "device_authorization_endpoint" : "https://id.example/device",
  "dpop" : true,
  "environment" : "pre",
  "fapi2" : true,
  "flow" : "client-credentials",
  "issuer" : "https://id.example/a \"quoted\" path",
  "jarm" : true,
  "key_algorithm" : "PS256",
  "key_id" : "k1",
  "listen" : [
    "127.0.0.1:0",
    "[::1]:8000"
  ],
  "login_hint" : "user@example.com",
  "max_age" : 300,
  "mfa" : "otp",
  "par" : true,
  "parameters" : [
    [
      "resource",
      "https://api.example"
    ],
    [
      "x",
      ""
    ]
  ],
  "private_key_file" : "/home/u/key.pem",
  "prompt" : "login",
  "provider" : "schibsted",
  "request_object" : true,
  "scopes" : [
    "openid",
    "profile"
  ],
  "store" : "/home/u/store",
  "ui_locales" : "nb en",
  "version" : 1
}
"""#

    static let emptyFile = #"""
{
  "provider" : "generic",
  "version" : 1
}
"""#

    @Test("a profile is written byte for byte as earlier versions wrote it, and reads back the same")
    func writtenAsBefore() throws {
        #expect(String(decoding: try Self.full.serialized(), as: UTF8.self) == Self.fullFile)
        #expect(String(decoding: try Profile().serialized(), as: UTF8.self) == Self.emptyFile)
        #expect(try Profile(serialized: Array(Self.fullFile.utf8)) == Self.full)
        #expect(try Profile(serialized: Array(Self.emptyFile.utf8)) == Profile())
    }

    @Test("an earlier version's compact file, with members this version does not know and nulls, reads; defaults fill the rest")
    func readsOlderFiles() throws {
        let file = #"{"version":1,"issuer":"https://id.example","client_id":"c","fapi2":true,"max_age":0,"prompt":null,"scopes":null,"future_setting":{"x":[1]}}"#
        let profile = try Profile(serialized: Array(file.utf8))
        var expected = Profile()
        expected.issuer = "https://id.example"
        expected.clientID = "c"
        expected.fapi2 = true
        expected.maxAge = 0
        #expect(profile == expected)
    }

    @Test("a member of the wrong type is refused, naming it", arguments: [
        (#"[1]"#, "it is not a JSON object"),
        (#"{"issuer":"x"}"#, "it has no format version"),
        (#"{"version":2}"#, "it has format version 2.0, which this version of oidc does not know"),
        (#"{"version":1,"issuer":1}"#, "'issuer' is not a string"),
        (#"{"version":1,"dpop":"yes"}"#, "'dpop' is not true or false"),
        (#"{"version":1,"scopes":"openid"}"#, "'scopes' is not a list"),
        (#"{"version":1,"listen":[1]}"#, "'listen' holds something other than strings"),
        (#"{"version":1,"parameters":[["a"]]}"#, "'parameters' must be a list of [name, value] pairs"),
        (#"{"version":1,"max_age":1.5}"#, "'max_age' is not a whole number of seconds"),
        (#"{"version":1,"max_age":-1}"#, "'max_age' is not a whole number of seconds"),
        (#"{"version":1,"flow":"carrier-pigeon"}"#, "'flow' is not one of auto, browser, device, client-credentials, jwt-bearer, ciba"),
        (#"{"version":1,"ciba_mode":"push"}"#, "'ciba_mode' is not one of poll, ping"),
        (#"{"version":1,"provider":"acme"}"#, "'provider' is not one of generic, schibsted, swan"),
    ])
    func refused(file: String, reason: String) {
        #expect(throws: ProfileFormatError.self) { try Profile(serialized: Array(file.utf8)) }
        do { _ = try Profile(serialized: Array(file.utf8)) } catch { #expect(error.reason == reason) }
    }

    @Test("every row of the key table has its own key, and every setting of a profile goes through one")
    func oneRowPerSetting() throws {
        let keys = Profile.settings.map(\.key)
        #expect(Set(keys).count == keys.count)
        // Each property set in `full` (and the settings added since 0.x's file) shows in the file: none is missing a row.
        var everything = Self.full
        everything.resource = "https://mcp.example.com/mcp"
        everything.resourceIssuer = "https://as.example.com"
        everything.cibaMode = .ping
        everything.notificationListen = "127.0.0.1:8001"
        everything.identityAssertionFrom = "corp"
        let written = try #require(try JSONSerialization.jsonObject(with: Data(try everything.serialized())) as? [String: Any])
        #expect(Set(written.keys) == Set(keys + ["version"]))
        #expect(Mirror(reflecting: everything).children.count == keys.count)
        #expect(try Profile(serialized: try everything.serialized()) == everything)
    }
}
