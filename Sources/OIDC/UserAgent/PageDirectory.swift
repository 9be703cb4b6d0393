internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Where ``RedirectPage`` makes its directory: a parent in which nobody but this user and root can
/// rename, remove or add entries, so that no other local user can move the page's directory aside
/// and put a page of their own at its name (security review 4, M1).
///
/// In order, the first that passes:
/// 1. `$XDG_RUNTIME_DIR`, an absolute path to a directory of this user's that nobody else may
///    enter (what the XDG specification promises);
/// 2. `$TMPDIR`, an absolute path;
/// 3. `/tmp`.
///
/// A candidate is resolved (a symbolic link is followed once, and the resolved path is used from then
/// on), and it and every directory above it must belong to this user or to root and be either
/// writable by nobody else (group and others) or sticky (`/tmp`'s mode 1777: only an entry's owner
/// may rename it). When none passes, nothing is written: set `XDG_RUNTIME_DIR` or `TMPDIR` to a
/// private directory, or `OIDC_BROWSER_HANDOFF=url`.
enum PageDirectory {
    /// The parent to make the page's directory in.
    ///
    /// - Parameter temporary: the last resort, `/tmp` (tests name another).
    /// - Throws: ``OIDCError/Code/invalidArgument`` when no candidate passes, naming each and why.
    static func parent(environment: [String: String], temporary: String = "/tmp") throws(OIDCError) -> String {
        var refusals: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            switch check(runtime, privateToUser: true) {
            case .success(let resolved): return resolved
            case .failure(let why): refusals.append("$XDG_RUNTIME_DIR \(shown(runtime)) \(why)")
            }
        }
        if let tmpdir = environment["TMPDIR"], !tmpdir.isEmpty {
            switch check(tmpdir, privateToUser: false) {
            case .success(let resolved): return resolved
            case .failure(let why): refusals.append("$TMPDIR \(shown(tmpdir)) \(why)")
            }
        }
        switch check(temporary, privateToUser: false) {
        case .success(let resolved): return resolved
        case .failure(let why): refusals.append("\(shown(temporary)) \(why)")
        }
        throw OIDCError(
            .invalidArgument,
            "No directory is private enough for the browser's sign-in page (\(refusals.joined(separator: "; "))): another local user could replace the page. Set XDG_RUNTIME_DIR or TMPDIR to a directory of yours that only you can write (mode 700), or set OIDC_BROWSER_HANDOFF=url to give the browser the URL itself.",
            context: ["directory": shown(temporary)]
        )
    }

    /// Why a directory is refused.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// `path` resolved, when it and every directory above it pass (see the type's rule); with
    /// `privateToUser`, `path` itself must also be this user's and closed to group and others.
    static func check(_ path: String, privateToUser: Bool) -> Result<String, Refusal> {
        guard path.hasPrefix("/") else { return .failure(Refusal(description: "is not an absolute path")) }
        guard let resolved = realpath(path, nil) else {
            return .failure(Refusal(description: "cannot be used (\(String(cString: strerror(errno))))"))
        }
        let real = String(cString: resolved)
        free(resolved)
        let user = geteuid()
        var prefix = ""
        let components = real.split(separator: "/", omittingEmptySubsequences: true)
        for index in -1..<components.count {
            if index >= 0 { prefix += "/" + components[index] }
            let current = prefix.isEmpty ? "/" : prefix
            let isTarget = index == components.count - 1
            let what = isTarget ? "" : " (its parent \(shown(current)))"
            var info = stat()
            guard lstat(current, &info) == 0 else {
                return .failure(Refusal(description: "cannot be used\(what) (\(String(cString: strerror(errno))))"))
            }
            guard info.st_mode & S_IFMT == S_IFDIR else { return .failure(Refusal(description: "is not a directory\(what)")) }
            guard info.st_uid == user || info.st_uid == 0 else {
                return .failure(Refusal(description: "belongs to user id \(info.st_uid), neither you (\(user)) nor root\(what)"))
            }
            let writableByOthers = info.st_mode & 0o022 != 0
            let sticky = info.st_mode & S_ISVTX != 0
            if writableByOthers, !sticky {
                return .failure(
                    Refusal(description: "is writable by other users without the sticky bit (mode \(String(info.st_mode & 0o7777, radix: 8)))\(what)"))
            }
            if isTarget, privateToUser, info.st_uid != user || info.st_mode & 0o077 != 0 {
                return .failure(Refusal(description: "is not yours alone (mode \(String(info.st_mode & 0o7777, radix: 8)), user id \(info.st_uid))"))
            }
        }
        return .success(real)
    }

    private static func shown(_ path: String) -> String {
        UntrustedText.sanitized(path, limit: 120)
    }
}
