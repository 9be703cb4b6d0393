internal import Foundation

#if canImport(Glibc)
internal import Glibc
#endif

/// A second, real local account for this package's tests about other users: their file, their
/// directory. `nobody`, or the account `$OIDC_TEST_OTHER_USER` names.
///
/// The suite runs as an ordinary user (CONTRIBUTING.md), who cannot become anyone else: `.ci/run`
/// lets its account run commands as `nobody` and nothing more (`sudo -n -u nobody`). As root, a
/// command becomes theirs through `setpriv`. Only the other user's own actions go through it;
/// the checks run as the test's user.
package enum OtherLocalUser {
    /// The account's name.
    package static var name: String {
        ProcessInfo.processInfo.environment["OIDC_TEST_OTHER_USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "nobody"
    }

    /// Whether `$OIDC_TEST_OTHER_USER` names the account (a run that promises one: `.ci/run`).
    package static var named: Bool { !(ProcessInfo.processInfo.environment["OIDC_TEST_OTHER_USER"] ?? "").isEmpty }

    /// The account's user and group ids, when it exists.
    package static let ids: (uid: UInt32, gid: UInt32)? = {
        guard let entry = getpwnam(name) else { return nil }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }()

    /// The words that run a command as the other user, or `nil` when this process cannot.
    package static let prefix: [String]? = {
        guard let ids, ids.uid != getuid() else { return nil }
        if getuid() == 0 {
            let setpriv = "/usr/bin/setpriv"
            guard FileManager.default.isExecutableFile(atPath: setpriv) else { return nil }
            return [setpriv, "--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--clear-groups", "--"]
        }
        guard let sudo = ["/usr/bin/sudo", "/bin/sudo"].first(where: FileManager.default.isExecutableFile(atPath:)) else { return nil }
        let words = [sudo, "-n", "-u", name, "--"]
        let probe = try? ChildProcess(words[0], Array(words.dropFirst()) + ["/usr/bin/id", "-u"], environment: ["PATH": "/usr/bin:/bin"])
        guard let probe, probe.waitForExit() == 0 else { return nil }
        return words
    }()

    /// Whether this process can act as the other user.
    package static var available: Bool { prefix != nil }

    /// Why a test that needs the other user did not run.
    package static let unavailable =
        "needs a second local account: run as root, or let this user run commands as `nobody` (`sudo -n -u nobody`), as .ci/run does"

    /// Runs `arguments` (an absolute program path first) as the other user, off Swift's pool: its
    /// exit status, standard output and standard error.
    package static func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        guard let prefix else { throw ChildProcessError(unavailable) }
        let process = try ChildProcess(prefix[0], Array(prefix.dropFirst()) + arguments, environment: ["PATH": "/usr/bin:/bin"])
        var output = ""
        for _ in 0..<10_000 {
            let chunk = await process.output()
            if chunk.isEmpty { break }
            output += chunk
        }
        let status = await process.exitStatus()
        return (status, output, await process.errors())
    }

    /// A directory of the other user's under /tmp (mode `mode`: 0755 lets anyone look in, only them
    /// change it), holding `files` (their name to their contents, mode 0644) and `directories` (mode
    /// 0700, with their parents). Remove it with ``remove(_:)``.
    package static func makeDirectory(mode: Int = 0o755, files: [String: String] = [:], directories: [String] = []) async throws -> String {
        var script = #"set -e; umask 022; d=$(mktemp -d /tmp/oidc-other-user.XXXXXXXX); cd "$d""#
        for (name, contents) in files.sorted(by: { $0.key < $1.key }) {
            script += "; mkdir -p \"$(dirname '\(name)')\"; printf '%s' '\(contents)' > '\(name)'"
        }
        for name in directories { script += "; mkdir -p '\(name)'; chmod 700 '\(name)'" }
        script += "; chmod \(String(mode, radix: 8)) \"$d\"" + #"; printf '%s' "$d""#
        let made = try await run(["/bin/sh", "-c", script])
        guard made.status == 0, made.output.hasPrefix("/tmp/oidc-other-user.") else {
            throw ChildProcessError("the other user could not make their directory: \(made.errors)")
        }
        return made.output
    }

    /// Removes, as its owner, a directory ``makeDirectory(mode:files:directories:)`` made.
    package static func remove(_ directory: String) async throws {
        guard directory.hasPrefix("/tmp/oidc-other-user.") else { return }
        _ = try await run(["/bin/rm", "-rf", "--", directory])
    }
}
