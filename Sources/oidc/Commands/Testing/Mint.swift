import ArgumentParser
import Foundation
import OIDC
import OIDCTesting

/// `oidc mint`: sign a token with a given key, for tests.
struct Mint: ParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign a JWT with a given key (for tests): RS*, ES* and HS* through libjwt, PS* and EdDSA through OpenSSL.",
        discussion: """
            --claims takes a JSON object, @FILE to read one, or - for standard input. The token is \
            printed on stdout. For HS256/384/512 the --key file's bytes are the secret.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @Option(help: "A PEM private key file (the secret's file for HS*).")
    var key: String

    @Option(
        help: "The algorithm: \(JWSAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")).",
        transform: { value in
            guard let algorithm = JWSAlgorithm(rawValue: value) else { throw ValidationError("unknown algorithm '\(value)'") }
            return algorithm
        }
    )
    var alg: JWSAlgorithm

    @Option(help: "The claims: a JSON object, @FILE, or - for standard input.")
    var claims: String

    @Option(help: "The key id for the header (kid).")
    var kid: String?

    func run() throws {
        guard let keyData = FileManager.default.contents(atPath: key) else {
            throw ValidationError("--key: cannot read the file '\(key)'")
        }
        let claimsJSON = try readClaims()
        guard (try? StrictJSONParser.parseObject(Array(claimsJSON.utf8))) != nil else {
            throw ValidationError("--claims must be a JSON object (no duplicate members)")
        }
        if !alg.isHMACAlgorithm { try Self.checkKeyType(keyData, signs: alg) }
        let token: String
        if let libjwt = TokenMinter.Algorithm(rawValue: alg.rawValue) {
            do {
                token = try TokenMinter(algorithm: libjwt, key: Array(keyData)).mint(claimsJSON: claimsJSON, headers: kid.map { ["kid": $0] } ?? [:])
            } catch {
                throw ValidationError("--key: \(error.description)")
            }
        } else {
            let signer: TestSigningKey
            do { signer = try TestSigningKey(pem: String(decoding: keyData, as: UTF8.self), algorithm: alg, keyID: kid) } catch {
                throw ValidationError("--key: not a PEM private key OpenSSL can read for \(alg.rawValue)")
            }
            var header = #"{"alg":"\#(alg.rawValue)","typ":"JWT""#
            if let kid { header += #","kid":\#(Self.jsonString(kid))"# }
            do { token = try signer.sign(headerJSON: header + "}", payloadJSON: claimsJSON) } catch {
                throw ValidationError("--key: the key cannot sign \(alg.rawValue) (\(error))")
            }
        }
        Console.output(token)
    }

    /// Refuses, naming the key's type and what it signs, a private key that cannot sign `alg`
    /// (an EC P-256 key for RS256): exit 2, before libjwt or OpenSSL try. A file that is no
    /// private key OpenSSL reads is left to the signer's own message.
    static func checkKeyType(_ keyData: Data, signs alg: JWSAlgorithm) throws {
        guard let key = try? JWSSigningKey(pem: String(decoding: keyData, as: UTF8.self)),
            let type = key.publicJWK["kty"]?.stringValue
        else { return }
        let curve = key.publicJWK["crv"]?.stringValue
        guard alg.jwkKeyType != type || (alg.jwkCurve != nil && alg.jwkCurve != curve) else { return }
        let fits = JWSAlgorithm.allCases.filter { $0.jwkKeyType == type && ($0.jwkCurve == nil || $0.jwkCurve == curve) }.map(\.rawValue)
        let name = switch type {
        case "RSA": "an RSA key"
        case "EC": "an EC \(curve ?? "") key"
        default: "an \(curve ?? type) key"
        }
        let use = fits.count == 1 ? "use --alg \(fits[0])" : "use --alg \(fits.dropLast().joined(separator: ", ")) or \(fits.last ?? "")"
        throw OIDCError(.invalidArgument, "--key: the key is \(name), which cannot sign \(alg.rawValue): \(use).")
    }

    private func readClaims() throws -> String {
        if claims == "-" {
            let data = FileHandle.standardInput.readData(ofLength: TokenInput.maximumLength + 1)
            guard data.count <= TokenInput.maximumLength else { throw ValidationError("--claims: standard input is over 1 MiB") }
            return String(decoding: data, as: UTF8.self)
        }
        if claims.hasPrefix("@") {
            guard let data = FileManager.default.contents(atPath: String(claims.dropFirst())) else {
                throw ValidationError("--claims: cannot read the file '\(claims.dropFirst())'")
            }
            return String(decoding: data, as: UTF8.self)
        }
        return claims
    }

    private static func jsonString(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return data.map { String(decoding: $0.dropFirst().dropLast(), as: UTF8.self) } ?? "\"\""
    }
}
