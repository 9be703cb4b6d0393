import Foundation
import OIDC
import Testing

@Suite("PKCE (RFC 7636)")
struct PKCETests {
    @Test("RFC 7636 Appendix B reproduces exactly")
    func appendixB() throws {
        let examples = try Vectors.pkceExamples()
        #expect(!examples.isEmpty)
        for example in examples {
            #expect(Base64URL.encode(example.verifierOctets) == example.verifier)
            #expect(try LibCrypto.sha256(Array(example.verifier.utf8)) == example.sha256)
            let pkce = try PKCE(verifier: example.verifier)
            #expect(pkce.challenge == example.challenge)
            #expect(pkce.method == "S256")
            #expect(pkce.verifier.revealedValue == example.verifier)
        }
    }

    @Test("verifiers of 43 and 128 characters are accepted", arguments: [43, 44, 64, 127, 128])
    func acceptedLengths(length: Int) throws {
        let verifier = String(repeating: "a", count: length)
        #expect(try PKCE(verifier: verifier).verifier.revealedValue == verifier)
    }

    @Test("verifiers outside 43...128 characters are rejected", arguments: [0, 1, 42, 129, 500])
    func rejectedLengths(length: Int) {
        let error = #expect(throws: OIDCError.self) { try PKCE(verifier: String(repeating: "a", count: length)) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.category == .configuration)
    }

    @Test("every unreserved character is allowed in a verifier")
    func unreservedAlphabet() throws {
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        _ = try PKCE(verifier: alphabet)
        _ = try PKCE(verifier: String(alphabet.reversed()))
    }

    @Test("characters outside the unreserved set are rejected", arguments: ["+", "/", "=", " ", "%", "é", "\n", "!", "*"])
    func foreignCharacters(character: String) {
        let verifier = String(repeating: "a", count: 50) + character
        let error = #expect(throws: OIDCError.self) { try PKCE(verifier: verifier) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("generated verifiers have the asked length, the unreserved alphabet and a matching challenge", arguments: [43, 64, 100, 128])
    func generated(length: Int) throws {
        let pkce = try PKCE.generate(length: length)
        let verifier = pkce.verifier.revealedValue
        #expect(verifier.count == length)
        #expect(try PKCE(verifier: verifier).challenge == pkce.challenge)
        #expect(pkce.challenge == Base64URL.encode(try LibCrypto.sha256(Array(verifier.utf8))))
        #expect(pkce.challenge.count == 43)
    }

    @Test("generation outside 43...128 is refused", arguments: [42, 129])
    func generatedOutOfRange(length: Int) {
        #expect(throws: OIDCError.self) { try PKCE.generate(length: length) }
    }

    @Test("generated verifiers differ")
    func generatedDiffer() throws {
        let values = try (0..<200).map { _ in try PKCE.generate().verifier.revealedValue }
        #expect(Set(values).count == values.count)
    }

    @Test("a verifier never shows in descriptions, dumps or mirrors")
    func redacted() throws {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let pkce = try PKCE(verifier: verifier)
        var dumped = ""
        dump(pkce, to: &dumped)
        for text in ["\(pkce)", String(reflecting: pkce), "\(pkce.verifier)", String(reflecting: pkce.verifier), dumped] {
            #expect(!text.contains(verifier), "leaked in: \(text)")
        }
        #expect("\(pkce.verifier)" == "<redacted>")
    }
}

@Suite("Random state and nonce")
struct RandomTokenTests {
    @Test("the default is 256 bits as 43 URL-safe characters")
    func defaults() throws {
        let token = try RandomToken.generate()
        #expect(token.count == 43)
        #expect(Base64URL.decode(token)?.count == 32)
    }

    @Test("the length is configurable down to 128 bits and no further")
    func bounds() throws {
        #expect(try RandomToken.generate(byteCount: 16).count == 22)
        #expect(try RandomToken.generate(byteCount: 64).count == 86)
        let error = #expect(throws: OIDCError.self) { try RandomToken.generate(byteCount: 15) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("values do not repeat")
    func unique() throws {
        let values = try (0..<1000).map { _ in try RandomToken.generate(byteCount: 16) }
        #expect(Set(values).count == 1000)
    }
}
