// Access-token verification: OIDCResourceServer's `ResourceServer.verify` (the whole request:
// Authorization header, RFC 9068 rules, scope) beside jwt-kit 5 with the same checks written by
// hand (JWTKitVerifier), for the same RS256 and ES256 tokens and the same JWKS, in one process.
// Both are first shown to accept the same token and refuse the same bad ones (another audience,
// another issuer, expired, untyped, tampered, a missing scope): the same work is timed.
//
//     swift run -c release access-token-bench [--requests N] [--rounds R]

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import JWTKit
import OIDC
import OIDCResourceServer
import OIDCTesting

let now = Date(timeIntervalSince1970: 1_800_000_000)
let issuer = "https://idp.example.com"
let resource = "https://api.example.com/"
let url = URL(string: "https://api.example.com/v1/orders")!
let required: Set<String> = ["orders:read"]

var requests = 2000
var rounds = 7
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--requests": requests = Int(arguments.next() ?? "") ?? requests
    case "--rounds": rounds = Int(arguments.next() ?? "") ?? rounds
    default:
        print("usage: access-token-bench [--requests N] [--rounds R]")
        exit(2)
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Wall and CPU microseconds per call of `body`, called `count` times.
func microseconds(_ count: Int, _ body: () async throws -> Void) async rethrows -> (wall: Double, cpu: Double) {
    let clock = ContinuousClock()
    let start = clock.now, cpu = processCPUTime()
    for _ in 0..<count { try await body() }
    let elapsed = clock.now - start
    let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return (wall / Double(count) * 1e6, (processCPUTime() - cpu) / Double(count) * 1e6)
}

/// The CPU time this process has used, in seconds: what the machine's other load does not change.
func processCPUTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func base64url(_ text: String) -> String {
    Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

func claims(_ changes: [String: Any] = [:]) -> [String: Any] {
    let seconds = Int(now.timeIntervalSince1970)
    return [
        "iss": issuer, "sub": "248289761001", "aud": resource, "client_id": "s6BhdRkqt3", "scope": "openid orders:read orders:write",
        "iat": seconds - 10, "nbf": seconds - 10, "exp": seconds + 3600, "jti": "a6b2c1e0-5f3d-4c1b-9e2a-7d8f0b1c2d3e",
    ].merging(changes) { $1 }
}

print("Access-token verification, OIDCResourceServer vs jwt-kit 5 with the same checks by hand; \(rounds) interleaved rounds of \(requests), medians")
let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.map(String.init) ?? "?"
print("wall µs (CPU µs) per token; the signature alone: OpenSSL 3 (the kit's) and swift-crypto (jwt-kit's); load average \(load) before")
print("alg     kit µs            jwt-kit µs        jwt-kit/kit (CPU)   (goal ≥ 1.05)   signature: OpenSSL µs   swift-crypto µs")
for algorithm in [JWSAlgorithm.rs256, .es256] {
    let signer = try TestSigningKey.generate(algorithm, keyID: "bench-\(algorithm.rawValue)")
    // A JWKS of realistic size: the signing key among a few others.
    var members = [try signer.publicJWK()]
    for other in [JWSAlgorithm.rs256, .es256] { members.append(try TestSigningKey.generate(other, keyID: "other-\(other.rawValue)").publicJWK()) }
    let jwks = Array(try JSONSerialization.data(withJSONObject: ["keys": members]))

    var configuration = ResourceServer.Configuration(
        resource: URL(string: resource)!,
        issuers: [TrustedIssuer(issuer: issuer, keys: JWKSCache(now: { now }, fetch: { jwks }))]
    )
    configuration.now = { now }
    let kit = try ResourceServer(configuration)
    let jwtKit = JWTKitVerifier(
        keys: try await JWTKeyCollection().add(jwksJSON: String(decoding: jwks, as: UTF8.self)), issuer: issuer, audience: resource, leeway: 60, now: now
    )
    func kitAccepts(_ token: String) async -> Bool {
        let request = ResourceRequest(method: "GET", url: url, headers: HTTPHeaders([("Authorization", "Bearer " + token)]))
        return (try? await kit.verify(request, requiring: required)) != nil
    }
    func jwtKitAccepts(_ token: String) async -> Bool {
        (try? await jwtKit.verify(authorization: "Bearer " + token, requiring: required)) != nil
    }

    // The same verdicts first.
    let token = try signer.sign(claims: claims(), extraHeader: ["typ": "at+jwt"])
    let seconds = Int(now.timeIntervalSince1970)
    let refused: [(String, String)] = [
        ("another audience", try signer.sign(claims: claims(["aud": "https://other.example/"]), extraHeader: ["typ": "at+jwt"])),
        ("another issuer", try signer.sign(claims: claims(["iss": "https://evil.example"]), extraHeader: ["typ": "at+jwt"])),
        ("expired", try signer.sign(claims: claims(["exp": seconds - 120]), extraHeader: ["typ": "at+jwt"])),
        ("not yet valid", try signer.sign(claims: claims(["nbf": seconds + 120]), extraHeader: ["typ": "at+jwt"])),
        ("typ JWT", try signer.sign(claims: claims(), extraHeader: ["typ": "JWT"])),
        ("no orders:read", try signer.sign(claims: claims(["scope": "openid orders:write"]), extraHeader: ["typ": "at+jwt"])),
        ("tampered", String(token.prefix { $0 != "." }) + "." + base64url(#"{"iss":"https://idp.example.com","sub":"admin"}"#) + "." + token.split(separator: ".")[2]),
    ]
    guard await kitAccepts(token), await jwtKitAccepts(token) else { fatalError("\(algorithm): a good token refused") }
    for (name, bad) in refused {
        let (byKit, byJWTKit) = (await kitAccepts(bad), await jwtKitAccepts(bad))
        guard !byKit, !byJWTKit else { fatalError("\(algorithm): '\(name)' accepted (kit: \(byKit), jwt-kit: \(byJWTKit))") }
    }

    let request = ResourceRequest(method: "GET", url: url, headers: HTTPHeaders([("Authorization", "Bearer " + token)]))
    let authorization = "Bearer " + token
    // The signature alone, each library's primitive over the same signing input.
    let parts = token.split(separator: ".")
    let input = Array(parts.prefix(2).joined(separator: ".").utf8)
    var signatureText = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    signatureText += String(repeating: "=", count: (4 - signatureText.count % 4) % 4)
    let signature = Array(Data(base64Encoded: signatureText)!)
    let openSSLKey = try JWKSet(json: jwks).key(for: algorithm, keyID: "bench-\(algorithm.rawValue)")
    let swiftCryptoKey = try await jwtKit.keys.getKey(for: JWKIdentifier(string: "bench-\(algorithm.rawValue)"))
    guard (try? JWS.verify(signature: signature, over: input, with: openSSLKey, algorithm: algorithm)) != nil,
        try swiftCryptoKey.verify(signature, signs: input)
    else { fatalError("\(algorithm): a signature refused") }

    var kitTimes: [Double] = [], jwtKitTimes: [Double] = [], ratios: [Double] = [], cpuRatios: [Double] = []
    var kitCPU: [Double] = [], jwtKitCPU: [Double] = [], openSSL: [Double] = [], swiftCrypto: [Double] = []
    for _ in 0..<100 {  // warm-up
        _ = try await kit.verify(request, requiring: required)
        _ = try await jwtKit.verify(authorization: authorization, requiring: required)
    }
    for _ in 0..<rounds {
        let k = try await microseconds(requests) { _ = try await kit.verify(request, requiring: required) }
        let j = try await microseconds(requests) { _ = try await jwtKit.verify(authorization: authorization, requiring: required) }
        let o = try await microseconds(requests / 2) { try JWS.verify(signature: signature, over: input, with: openSSLKey, algorithm: algorithm) }
        let c = try await microseconds(requests / 2) { _ = try swiftCryptoKey.verify(signature, signs: input) }
        kitTimes.append(k.wall); jwtKitTimes.append(j.wall); ratios.append(j.wall / k.wall); cpuRatios.append(j.cpu / k.cpu)
        kitCPU.append(k.cpu); jwtKitCPU.append(j.cpu); openSSL.append(o.cpu); swiftCrypto.append(c.cpu)
    }
    print(
        algorithm.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
            + String(
                format: " %6.2f (%6.2f)   %6.2f (%6.2f)   %5.3f (%5.3f)   %29.2f   %15.2f", median(kitTimes), median(kitCPU), median(jwtKitTimes), median(jwtKitCPU),
                median(ratios), median(cpuRatios), median(openSSL), median(swiftCrypto))
    )
}
#if DEBUG
print("note: a debug build; use swift run -c release access-token-bench")
#endif
