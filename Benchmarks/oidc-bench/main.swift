// ID-token verification throughput: the library's full path (split, base64url, strict JSON, key
// selection, EVP_DigestVerify, claim rules) against a bare EVP_DigestVerify loop over the same
// signature with the same key, written here directly against OpenSSL.
//
//     swift run -c release oidc-bench [--seconds S] [--rounds R]
//     swift run -c release oidc-bench --session [--requests N] [--rounds R]   (the session's overhead per request)
//     swift run -c release oidc-bench --dpop [--requests N] [--rounds R]      (a DPoP proof vs a bare ES256 signature; DPoP vs bearer sessions)
//     swift run -c release oidc-bench --resource-server [--requests N] [--rounds R]
//         (OIDCResourceServer: a DPoP request vs two bare verifications; two tasks vs one)
//     swift run -c release oidc-bench --profile-resource-server PASSES [--bearer]   (the kit's DPoP or ES256 bearer path alone, for perf)
//     swift run -c release oidc-bench --profile-dpop N [--bare]   (N DPoP proofs, or N bare ES256 signatures, for callgrind)
//     oidc-bench --in-process-verify --issuer I --audience A --resource URL --jwks FILE --token-file FILE [--seconds S]
//         (one bearer token verified in process on one task, as `oidc resource-server` does it: scripts/bench-http.sh)

import COpenSSL
import Foundation
import OIDC
import OIDCTesting

/// The baseline: an EVP_PKEY from the SPKI DER and a per-verification EVP_MD_CTX, as a C program would.
final class BareVerifier {
    let key: OpaquePointer
    let digest: OpaquePointer?
    let algorithm: JWSAlgorithm
    let signature: [UInt8]  // DER for ECDSA, prepared once
    let message: [UInt8]

    convenience init(der: [UInt8], algorithm: JWSAlgorithm, token: String) throws {
        var cursor: UnsafePointer<UInt8>? = nil
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { throw OIDCError(.cryptoFailure, "d2i_PUBKEY failed") }
        try self.init(key: key, algorithm: algorithm, token: token)
    }

    /// With the public half of a private key in PEM (a DPoP key's).
    convenience init(privateKeyPEM pem: String, algorithm: JWSAlgorithm, token: String) throws {
        let bio = pem.withCString { BIO_new_mem_buf($0, Int32(strlen($0))) }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw OIDCError(.cryptoFailure, "PEM_read_bio_PrivateKey failed") }
        try self.init(key: key, algorithm: algorithm, token: token)
    }

    init(key: OpaquePointer, algorithm: JWSAlgorithm, token: String) throws {
        self.key = key
        self.algorithm = algorithm
        digest = algorithm == .edDSA ? nil : EVP_MD_fetch(nil, algorithm.rawValue.hasSuffix("256") ? "SHA256" : algorithm.rawValue.hasSuffix("384") ? "SHA384" : "SHA512", nil)
        let parts = token.split(separator: ".")
        message = Array("\(parts[0]).\(parts[1])".utf8)
        let raw = Base64URLEncoding.decode(parts[2].utf8)!
        if algorithm.rawValue.hasPrefix("ES") {
            signature = BareVerifier.der(raw)
        } else {
            signature = raw
        }
    }

    static func der(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.first.map({ $0 & 0x80 != 0 }) ?? true { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let half = raw.count / 2
        let body = integer(raw[..<half]) + integer(raw[half...])
        return [0x30, UInt8(body.count)] + body
    }

    func verify() -> Bool {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, digest, nil, key) == 1 else { return false }
        if algorithm.rawValue.hasPrefix("PS") {
            EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING)
            EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(EVP_MD_get_size(digest)))
            EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, digest)
        }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}

func rate(seconds: Double, _ body: () -> Bool) -> Double {
    let clock = ContinuousClock()
    var count = 0
    let start = clock.now
    let deadline = start + .milliseconds(Int(seconds * 1000))
    while clock.now < deadline {
        for _ in 0..<64 {
            guard body() else { fatalError("verification failed during the benchmark") }
        }
        count += 64
    }
    let elapsed = clock.now - start
    return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

var seconds = 0.4
var rounds = 5
var profileIterations = 0
var sessionRequests = 0
var dpop = false
var resourceServer = false
var profilePasses = 0
var profileBearer = false
var profileDPoP = -1
var profileBare = false
var inProcess = false
var inProcessOptions: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--seconds": seconds = Double(arguments.next() ?? "") ?? seconds
    case "--rounds": rounds = Int(arguments.next() ?? "") ?? rounds
    case "--profile-parse": profileIterations = Int(arguments.next() ?? "") ?? 10_000
    case "--session": sessionRequests = 2000
    case "--dpop": dpop = true
    case "--resource-server": resourceServer = true
    case "--profile-resource-server": profilePasses = Int(arguments.next() ?? "") ?? 20
    case "--bearer": profileBearer = true
    case "--profile-dpop": profileDPoP = Int(arguments.next() ?? "") ?? 1000
    case "--bare": profileBare = true
    case "--requests": sessionRequests = Int(arguments.next() ?? "") ?? 2000
    case "--in-process-verify": inProcess = true
    case "--issuer", "--audience", "--resource", "--jwks", "--token-file": inProcessOptions[argument] = arguments.next() ?? ""
    default:
        print("usage: oidc-bench [--seconds S] [--rounds R] | --session|--dpop|--resource-server [--requests N] [--rounds R]")
        exit(2)
    }
}
if inProcess {
    try await InProcessVerification.run(
        issuer: inProcessOptions["--issuer"] ?? "", audience: inProcessOptions["--audience"] ?? "", resource: inProcessOptions["--resource"] ?? "",
        jwksFile: inProcessOptions["--jwks"] ?? "", tokenFile: inProcessOptions["--token-file"] ?? "", seconds: seconds
    )
    exit(0)
}
if profileDPoP >= 0 {
    try DPoPBenchmark.profile(count: profileDPoP, bare: profileBare)
    exit(0)
}
if profilePasses > 0 {
    try await ResourceServerBenchmark.profile(passes: profilePasses, requests: sessionRequests > 0 ? sessionRequests : 2000, bearer: profileBearer)
    exit(0)
}
if resourceServer {
    try await ResourceServerBenchmark.run(rounds: rounds, requests: sessionRequests > 0 ? sessionRequests : 2000)
    exit(0)
}
if dpop {
    try await DPoPBenchmark.run(rounds: rounds, seconds: seconds, requests: sessionRequests > 0 ? sessionRequests : 2000)
    exit(0)
}
if sessionRequests > 0 {
    try await SessionBenchmark.run(rounds: rounds, requests: sessionRequests)
    exit(0)
}

let now = Date(timeIntervalSince1970: 1_800_000_000)
let claims: [String: Any] = [
    "iss": "https://idp.example.com", "sub": "248289761001", "aud": "s6BhdRkqt3", "exp": 1_800_003_600,
    "iat": 1_799_999_990, "auth_time": 1_799_999_900, "nonce": "n-0S6_WzA2Mj", "name": "Jane Doe",
    "email": "janedoe@example.com", "email_verified": true, "amr": ["pwd", "otp"], "acr": "urn:mace:incommon:iap:silver",
]

print("ID-token verification, \(rounds) interleaved rounds of \(seconds) s each, medians; OpenSSL \(OIDCLibrary.openSSLVersion)")
print("alg     full path/s   bare verify/s   full/bare   parse+claims µs   signature µs   parse share")
for algorithm in [JWSAlgorithm.rs256, .es256, .ps256, .edDSA] {
    let signer = try TestSigningKey.generate(algorithm, keyID: "bench-1")
    // A JWKS of realistic size: the signing key among a few others.
    var members = [try signer.publicJWK()]
    for other in [JWSAlgorithm.rs256, .es256] { members.append(try TestSigningKey.generate(other, keyID: "other-\(other.rawValue)").publicJWK()) }
    let jwks = try JWKSet(json: String(decoding: try JSONSerialization.data(withJSONObject: ["keys": members]), as: UTF8.self))
    let token = try signer.sign(claims: claims)
    var verifier = IDTokenVerifier(issuer: "https://idp.example.com", clientID: "s6BhdRkqt3", nonce: .expected("n-0S6_WzA2Mj"))
    verifier.requiredAMRValues = ["otp"]
    let bare = try BareVerifier(der: try signer.publicKeyDER(), algorithm: algorithm, token: token)
    guard bare.verify(), (try? verifier.verify(token, keys: jwks, now: now)) != nil else { fatalError("setup failed for \(algorithm)") }
    let key = try verifier.selectKey(for: ParsedJWS(token), in: jwks)
    let rawSignature = Base64URLEncoding.decode(token.split(separator: ".")[2].utf8)!

    if profileIterations > 0 {
        // For callgrind/perf: the parse and claim path only, no signature, no timing.
        for _ in 0..<profileIterations {
            let jws = try ParsedJWS(token)
            try verifier.validate(try IDTokenClaims(payload: jws.payload), algorithm: jws.algorithm, now: now)
            _ = try verifier.selectKey(for: jws, in: jwks)
        }
        continue
    }
    var full: [Double] = [], baseline: [Double] = [], ratios: [Double] = [], parse: [Double] = [], signature: [Double] = []
    for _ in 0..<rounds {
        let f = rate(seconds: seconds) { (try? verifier.verify(token, keys: jwks, now: now)) != nil }
        let b = rate(seconds: seconds) { bare.verify() }
        let p = rate(seconds: seconds / 2) {
            guard let jws = try? ParsedJWS(token), let claims = try? IDTokenClaims(payload: jws.payload) else { return false }
            return (try? verifier.validate(claims, algorithm: jws.algorithm, now: now)) != nil
        }
        let s = rate(seconds: seconds / 2) { (try? JWS.verify(signature: rawSignature, over: bare.message, with: key, algorithm: algorithm)) != nil }
        full.append(f); baseline.append(b); ratios.append(f / b); parse.append(1e6 / p); signature.append(1e6 / s)
    }
    let parseShare = median(parse) / (1e6 / median(full)) * 100
    print(
        algorithm.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
            + String(format: " %12.0f   %13.0f   %9.3f   %15.2f   %12.2f   %10.1f%%", median(full), median(baseline), median(ratios), median(parse), median(signature), parseShare)
    )
}
