// oidc-test-browser: the user agent of the CLI tests, given to `oidc login` as $BROWSER.
//
//   oidc-test-browser [--deny] [--value NAME=VALUE]... [--forge-callback-first] [--delay-ms N] [--log FILE] [--secrets FILE] URL
//   oidc-test-browser --race-argv PORT [--seconds S] [--stop-file FILE] [--log FILE]
//
// Opens URL, follows redirects and submits sign-in forms as a person would (OIDCTesting's
// TestBrowser), then exits 0 when the last page is a 200, 1 otherwise. A file:// URL is opened as a
// browser opens a local page: read, and its <meta http-equiv="refresh"> followed (the log gets the
// page's mode and its directory's). --delay-ms waits first, as a browser that takes time to start.
// --forge-callback-first plays an attacker before the real callback: a request to the same callback
// with another state, whose status goes to the log. --log FILE appends what happened (never the query
// strings). --secrets FILE appends, one a line, the values of `code`, `state` and `nonce` in every URL
// the browser requested: what a test then looks for, and must not find, in oidc's own output.
//
// --race-argv PORT plays another local user instead: it reads every process's command line
// (/proc/*/cmdline) every 10 ms, for at most S seconds (default 20) or until FILE exists, looking for
// a URL of the loopback listener on PORT. When it finds one it opens it first and signs in (the login
// swap of security review 3, M1). The log says what it found and how its sign-in ended.
import Foundation
import OIDC
import OIDCTesting

var arguments = Array(CommandLine.arguments.dropFirst())
var browser = TestBrowser()
var forge = false
var delay = 0
var racePort: Int?
var raceSeconds = 20.0
var stopFile: String?
var logPath: String?
var secretsPath: String?
var url: URL?
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    let next = { arguments.isEmpty ? "" : arguments.removeFirst() }
    switch argument {
    case "--deny": browser.choice = .deny
    case "--forge-callback-first": forge = true
    case "--delay-ms": delay = Int(next()) ?? 0
    case "--race-argv": racePort = Int(next())
    case "--seconds": raceSeconds = Double(next()) ?? raceSeconds
    case "--stop-file": stopFile = next()
    case "--value":
        let pair = next()
        guard let equals = pair.firstIndex(of: "=") else { FileHandle.standardError.write(Data("bad --value\n".utf8)); exit(2) }
        browser.formValues[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    case "--log": logPath = next()
    case "--secrets": secretsPath = next()
    default: url = URL(string: argument)
    }
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

func mode(_ path: String) -> String {
    let value = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    return value.map { String($0, radix: 8) } ?? "?"
}

/// A local page as a browser opens it: its refresh target (`0; url=…`, HTML-unescaped).
func refreshTarget(ofPage page: URL) throws -> URL {
    let html = try String(contentsOf: page, encoding: .utf8)
    log("page file: mode \(mode(page.path)) in a directory of mode \(mode(page.deletingLastPathComponent().path))")
    guard let match = html.firstMatch(of: /<meta http-equiv="refresh" content="\d+;\s*url=([^"]*)">/),
        let target = URL(string: String(match.1).replacingOccurrences(of: "&amp;", with: "&"))
    else {
        throw OIDCError(.invalidArgument, "The local page has no refresh to follow.")
    }
    return target
}

/// The other local user: finds the listener's URL on some process's command line and signs in first.
func race(port: Int, seconds: Double, stopFile: String?, browser: TestBrowser) async -> Int32 {
    let needle = "http://127.0.0.1:\(port)/"
    let own = String(ProcessInfo.processInfo.processIdentifier)
    let deadline = Date().addingTimeInterval(seconds)
    var scans = 0
    var pagesSeen = Set<String>()
    log("race: watching every command line for \(needle)")
    while Date() < deadline, !(stopFile.map { FileManager.default.fileExists(atPath: $0) } ?? false) {
        scans += 1
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).filter { Int($0) != nil && $0 != own }
        for pid in pids {
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
            let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            for word in words where word.hasPrefix("file://") && word.contains("/oidc-login-") && pagesSeen.insert(word).inserted {
                log("race: saw a private page on a command line: \(word)")
            }
            guard let found = words.first(where: { $0.hasPrefix(needle) }), let start = URL(string: found) else { continue }
            log("race: found the listener's URL in the command line of process \(pid) after \(scans) scans")
            do {
                let visit = try await browser.open(start)
                log("race: the attacker's sign-in ended: \(visit.status) \(visit.url.path)")
            } catch {
                log("race: the attacker's sign-in failed: \(error)")
            }
            return 0
        }
        try? await Task.sleep(for: .milliseconds(10))
    }
    log("race: no URL of the listener in any command line after \(scans) scans; private pages seen: \(pagesSeen.count)")
    return 0
}

if let racePort { exit(await race(port: racePort, seconds: raceSeconds, stopFile: stopFile, browser: browser)) }

guard var url else {
    FileHandle.standardError.write(
        Data("usage: oidc-test-browser [--deny] [--value NAME=VALUE] [--forge-callback-first] [--delay-ms N] [--log FILE] [--secrets FILE] URL\n".utf8)
    )
    exit(2)
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
    if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
    if url.isFileURL { url = try refreshTarget(ofPage: url) }
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
