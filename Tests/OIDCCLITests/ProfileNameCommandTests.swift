import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing
@testable import oidc

/// Profile names (user trial 5, F16 and F17): a name that starts with a dash binds to `--profile`
/// in every command that takes one; a name with a control or format character is refused (exit 2)
/// from `--profile` and from `OIDC_PROFILE`, before anything is written or printed.
@Suite("Profile names: a leading dash, control characters", .timeLimit(.scaledMinutes(3)))
struct ProfileNameCommandTests {
    static let refusedNames = [
        ("esc\u{1B}[31mRED\nline2", "U+001B"), ("new\nline", "U+000A"), ("del\u{7F}", "U+007F"), ("csi\u{9B}31m", "U+009B"),
        ("bidi\u{202E}txt", "U+202E"),
    ]

    @Test("F17: --profile and OIDC_PROFILE with a control or format character: exit 2 naming it, nothing raw on the terminal, no file written; login, status, token (the fast path too) and logout")
    func controlCharactersRefused() async throws {
        try await withTestProvider(ResourceLoginCommandTests.configuration) { provider in
            let sandbox = LoginSandbox()
            for (name, code) in Self.refusedNames {
                for arguments in [["login", "--resource", provider.resourceURL, "--profile", name], ["status", "--profile", name],
                    ["token", "--profile", name], ["logout", "--profile", name]]
                {
                    let result = try await sandbox.run(arguments)
                    #expect(result.status == 2, "\(arguments[0]): \(result.stderr)")
                    #expect(result.stderr.contains("--profile holds a control or format character (\(code))"), "\(result.stderr)")
                    ResourceTrustCommandTests.expectNoControl(result.stdout + result.stderr, arguments[0])
                    #expect(!result.stderr.contains("\u{202E}"))
                }
                for command in ["status", "token", "logout"] {
                    let result = try await sandbox.run([command], extra: ["OIDC_PROFILE": name])
                    #expect(result.status == 2, "\(command): \(result.stderr)")
                    #expect(result.stderr.contains("OIDC_PROFILE holds a control or format character (\(code))"), "\(result.stderr)")
                    ResourceTrustCommandTests.expectNoControl(result.stdout + result.stderr, command)
                }
            }
            #expect(await provider.requestCount(.authorize) == 0)
            #expect(!FileManager.default.fileExists(atPath: sandbox.profileDirectory))
            // Spaces, slashes and letters of any script are names.
            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "my work/émoji😀"])
            #expect(login.status == 0, "\(login.stderr)")
        }
    }

    @Test("F17: a stored name with control or format characters is shown with ? for each (listings of names left by older versions); other names as they are")
    func shownNames() {
        #expect(ProfileName.shown("esc\u{1B}[31mRED\nline2") == "esc?[31mRED?line2")
        #expect(ProfileName.shown("c1\u{9B}x\u{7F}bidi\u{202E}") == "c1?x?bidi?")
        #expect(ProfileName.shown("my work/émoji😀 -x") == "my work/émoji😀 -x")
        for (name, _) in Self.refusedNames { #expect(ProfileName.refusal(name, from: "--profile") != nil) }
        #expect(ProfileName.refusal("-dash", from: "--profile") == nil)
        #expect(ProfileName.refusal("", from: "--profile") == "--profile must not be empty")
        #expect(ProfileName.refusal(String(repeating: "é", count: 51), from: "OIDC_PROFILE") == "OIDC_PROFILE must be at most 100 bytes")
    }

    @Test("F16: --profile -dash binds as a name in every command that takes --profile (login, token, status, refresh, request, proof, logout, introspect, exchange, inject)")
    func leadingDash() async throws {
        try await withTestProvider(ResourceLoginCommandTests.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "-dash"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(try sandbox.storedLogin("-dash") != nil)
            let token = try await sandbox.run(["token", "--profile", "-dash"])
            #expect(token.status == 0 && !token.stdout.isEmpty, "\(token.stderr)")
            let status = try await sandbox.run(["status", "--profile", "-dash"])
            #expect(status.status == 0 && status.stdout.contains("profile -dash"), "\(status.stdout)")
            for arguments in [
                ["refresh", "--profile", "-nobody"], ["request", "--profile", "-nobody", provider.resourceURL], ["proof", "--profile", "-nobody", "--method", "GET", "--url", provider.resourceURL],
                ["introspect", "--profile", "-nobody"], ["exchange", "--profile", "-nobody"], ["logout", "--profile", "-nobody"],
            ] {
                let result = try await sandbox.run(arguments)
                #expect(!result.stderr.contains("Missing value"), "\(arguments[0]): \(result.stderr)")
                #expect(result.stderr.contains("-nobody"), "\(arguments[0]) names the profile: \(result.stderr)")
            }
            let logout = try await sandbox.run(["logout", "--profile", "-dash"])
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(try sandbox.storedLogin("-dash") == nil)
        }
    }
}
