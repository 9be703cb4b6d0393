import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `RelyingParty.confirmingKeptRegistration`: a kept registration read at its client configuration
/// endpoint (RFC 7592 §2.1) before a login, made anew when the server forgot it; over loopback HTTP.
@Suite("A kept registration confirmed before a login (RFC 7592)", .timeLimit(.scaledMinutes(1)))
struct KeptRegistrationTests {
    @Test("a registration the server knows: one read, the same client; one it forgot: registered anew on the same port, the store updated, the login works")
    func knownAndForgotten() async throws {
        try await withTestProvider(ForResourceTests.plainOAuth()) { provider in
            let store = InMemoryRegistrationStore()
            let url = try #require(URL(string: provider.resourceURL))
            let first = try await RelyingParty.forResource(url, registrations: store)
            // Just registered: nothing to read.
            #expect(try await first.confirmingKeptRegistration(registrations: store).clientID == first.clientID)
            #expect(await provider.registrationReadCount() == 0)

            let kept = try await RelyingParty.forResource(url, registrations: store)
            let confirmed = try await kept.confirmingKeptRegistration(registrations: store)
            #expect(await provider.registrationReadCount() == 1)
            #expect(confirmed.clientID == first.clientID && confirmed.protectedResource?.clientSource == .storedRegistration)

            await provider.forgetRegistrations()
            let replaced = try await kept.confirmingKeptRegistration(registrations: store)
            #expect(replaced.clientID != first.clientID)
            #expect(replaced.protectedResource?.clientSource == .registered)
            #expect(replaced.protectedResource?.callbackPort == first.protectedResource?.callbackPort)
            #expect(try await store.registration(for: provider.issuer)?.clientID == replaced.clientID)
            #expect(await provider.registrationCount() == 2)
            let login = try await ForResourceTests.login(replaced)
            #expect(login.clientID == replaced.clientID)
        }
    }

    @Test("a read answered with a new registration access token: the new one kept (§2.1), the old one no longer works")
    func rotatedToken() async throws {
        try await withTestProvider(ForResourceTests.plainOAuth { $0.registration?.rotatesRegistrationAccessToken = true }) { provider in
            let store = InMemoryRegistrationStore()
            let url = try #require(URL(string: provider.resourceURL))
            let first = try await RelyingParty.forResource(url, registrations: store)
            let old = try #require(try await store.registration(for: provider.issuer)?.registrationAccessToken)
            let kept = try await RelyingParty.forResource(url, registrations: store)
            let confirmed = try await kept.confirmingKeptRegistration(registrations: store)
            #expect(confirmed.clientID == first.clientID)
            let new = try #require(try await store.registration(for: provider.issuer)?.registrationAccessToken)
            #expect(new != old)
            // The next read uses the new token: the server still knows the client.
            let again = try await RelyingParty.forResource(url, registrations: store).confirmingKeptRegistration(registrations: store)
            #expect(again.clientID == first.clientID && again.protectedResource?.clientSource == .storedRegistration)
            #expect(await provider.registrationReadCount() == 2)
            #expect(await provider.registrationCount() == 1)
        }
    }

    @Test("no registration access token, or a given client id: nothing is read, the relying party is returned as it is")
    func nothingToRead() async throws {
        try await withTestProvider(ForResourceTests.plainOAuth { $0.registration?.issuesRegistrationAccessToken = false }) { provider in
            let store = InMemoryRegistrationStore()
            let url = try #require(URL(string: provider.resourceURL))
            let first = try await RelyingParty.forResource(url, registrations: store)
            await provider.forgetRegistrations()
            let kept = try await RelyingParty.forResource(url, registrations: store).confirmingKeptRegistration(registrations: store)
            #expect(kept.clientID == first.clientID && kept.protectedResource?.clientSource == .storedRegistration)
            let given = try await RelyingParty.forResource(url, clientID: "test-client").confirmingKeptRegistration(registrations: store)
            #expect(given.clientID == "test-client")
            #expect(await provider.registrationReadCount() == 0)
        }
    }
}
