// oidc-test-browser: the user agent of the CLI tests, given to `oidc login` as $BROWSER.
//
//   oidc-test-browser [--deny] [--value NAME=VALUE]... [--forge-callback-first] [--log FILE] [--secrets FILE] URL
//
// Opens URL, follows redirects and submits sign-in forms as a person would (OIDCTesting's
// TestBrowser), then exits 0 when the last page is a 200, 1 otherwise. --forge-callback-first plays
// an attacker before the real callback: a request to the same callback with another state, whose
// status goes to the log. --log FILE appends what happened (never the query strings). --secrets FILE
// appends, one a line, the values of `code`, `state` and `nonce` in every URL the browser requested:
// what a test then looks for, and must not find, in oidc's own output.
import Foundation
import OIDC
import OIDCTesting

var arguments = Array(CommandLine.arguments.dropFirst())
var browser = TestBrowser()
var forge = false
var logPath: String?
var secretsPath: String?
var url: URL?
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--deny": browser.choice = .deny
    case "--forge-callback-first": forge = true
    case "--value":
        let pair = arguments.isEmpty ? "" : arguments.removeFirst()
        guard let equals = pair.firstIndex(of: "=") else { FileHandle.standardError.write(Data("bad --value\n".utf8)); exit(2) }
        browser.formValues[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    case "--log": logPath = arguments.isEmpty ? nil : arguments.removeFirst()
    case "--secrets": secretsPath = arguments.isEmpty ? nil : arguments.removeFirst()
    default: url = URL(string: argument)
    }
}
guard let url else {
    FileHandle.standardError.write(
        Data("usage: oidc-test-browser [--deny] [--value NAME=VALUE] [--forge-callback-first] [--log FILE] [--secrets FILE] URL\n".utf8)
    )
    exit(2)
}

let logFile = logPath
@Sendable func log(_ line: String) {
    guard let logFile else { return }
    if !FileManager.default.fileExists(atPath: logFile) { _ = FileManager.default.createFile(atPath: logFile, contents: nil) }
    guard let handle = FileHandle(forWritingAtPath: logFile) else { return }
    handle.seekToEndOfFile()
    handle.write(Data((line + "\n").utf8))
    try? handle.close()
}

if forge {
    browser.beforeRedirect = { target in
        guard target.path.hasSuffix("/callback"), var components = URLComponents(url: target, resolvingAgainstBaseURL: false) else { return }
        components.queryItems = (components.queryItems ?? []).map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged") : $0 }
        guard let forged = components.url else { return }
        let status = (try? await NIOHTTPTransport.shared.send(HTTPRequest(url: forged)).status) ?? -1
        log("forged callback: \(status)")
    }
}

do {
    let visit = try await browser.open(url)
    if let secretsPath {
        let values = visit.history.flatMap { url in
            (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).filter { ["code", "state", "nonce"].contains($0.name) }
                .compactMap(\.value)
        }
        if !FileManager.default.fileExists(atPath: secretsPath) { _ = FileManager.default.createFile(atPath: secretsPath, contents: nil) }
        if let handle = FileHandle(forWritingAtPath: secretsPath) {
            handle.seekToEndOfFile()
            handle.write(Data(values.map { $0 + "\n" }.joined().utf8))
            try? handle.close()
        }
    }
    log("final: \(visit.status) \(visit.url.path)")
    for line in visit.body.split(separator: "\n") where line.contains("<h1>") || line.contains("<p") { log("page: \(line)") }
    exit(visit.status == 200 ? 0 : 1)
} catch {
    log("error: \(error)")
    FileHandle.standardError.write(Data("oidc-test-browser: \(error)\n".utf8))
    exit(1)
}
