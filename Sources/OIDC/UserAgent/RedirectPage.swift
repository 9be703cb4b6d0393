internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A private local page that sends the browser on to a URL, so that the URL itself is on no
/// command line: `login.html`, mode 0600, in a fresh directory of mode 0700
/// (`oidc-login-XXXXXXXX`) under the user's runtime directory (`$XDG_RUNTIME_DIR`, when it is the
/// user's own and private) or else the temporary one (`$TMPDIR`, else `/tmp`).
///
/// The browser gets the page's `file://` URL. Other local users can see that path on the browser's
/// command line (`/proc/PID/cmdline`), but can neither list the directory nor read the page. The page
/// redirects with `<meta http-equiv="refresh">` and shows a plain link as well; it runs no script.
/// Jupyter opens its token URL the same way.
struct RedirectPage: Sendable {
    /// The page's directory, made for it alone.
    let directory: String
    /// The page's path: `directory/login.html`.
    let path: String

    /// `file:///…/oidc-login-XXXXXXXX/login.html`.
    var url: URL { URL(fileURLWithPath: path) }

    /// Writes a new page that redirects to `target`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the directory or the page cannot be created,
    ///   naming the parent directory and the system's reason (never the URL).
    static func write(redirectingTo target: URL, environment: [String: String]) throws(OIDCError) -> RedirectPage {
        let parent = parentDirectory(environment: environment)
        var template = Array("\(parent)/oidc-login-XXXXXXXX".utf8CString)
        // mkdtemp makes the directory with mode 0700, under a name nobody could have taken first.
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw failure(parent, reason: String(cString: strerror(errno)))
        }
        let directory = String(cString: made)
        let path = directory + "/login.html"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            rmdir(directory)
            throw failure(parent, reason: String(cString: strerror(code)))
        }
        let page = RedirectPage(directory: directory, path: path)
        do throws(OIDCError) {
            guard fchmod(descriptor, 0o600) == 0 else { throw KeychainIO.failure(errno, "writing", path) }
            try KeychainIO.writeAll(descriptor, Array(html(redirectingTo: target).utf8), path)
            close(descriptor)
        } catch {
            close(descriptor)
            page.remove()
            throw failure(parent, reason: error.context["reason"] ?? error.message)
        }
        return page
    }

    /// Removes the page and its directory.
    func remove() {
        unlink(path)
        rmdir(directory)
    }

    /// `$XDG_RUNTIME_DIR` when it is an absolute path to a directory of this user's that nobody else
    /// may enter (what the XDG specification promises), else `$TMPDIR` when it is an absolute path to a
    /// directory, else `/tmp`. The page's own directory is private wherever it is made.
    static func parentDirectory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var info = stat()
            if lstat(runtime, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 {
                return trimmed(runtime)
            }
        }
        if let temporary = environment["TMPDIR"], temporary.hasPrefix("/") {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: temporary, isDirectory: &isDirectory), isDirectory.boolValue {
                return trimmed(temporary)
            }
        }
        return "/tmp"
    }

    /// The page: a refresh to `target` at once, and a link to it for a browser that does not follow
    /// refreshes. `target` is percent-encoded where it could end the attribute or the refresh's URL,
    /// then HTML-escaped.
    static func html(redirectingTo target: URL) -> String {
        var encoded = ""
        for scalar in target.absoluteString.unicodeScalars {
            switch scalar {
            case "\"", "'", "<", ">", "\\", "`", " ":
                encoded += String(format: "%%%02X", scalar.value)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                encoded += String(format: "%%%02X", scalar.value)
            default:
                encoded.unicodeScalars.append(scalar)
            }
        }
        let url = encoded.replacingOccurrences(of: "&", with: "&amp;")
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0; url=\(url)">
            <title>Continue to sign in</title></head>
            <body><p>Continuing to the sign-in page. If nothing happens, <a href="\(url)" rel="noreferrer">continue to sign in</a>.</p></body></html>

            """
    }

    private static func trimmed(_ directory: String) -> String {
        var directory = directory
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        return directory
    }

    private static func failure(_ parent: String, reason: String) -> OIDCError {
        OIDCError(
            .invalidArgument,
            "The browser's private sign-in page could not be written in \(UntrustedText.sanitized(parent, limit: 120)) (\(reason)); open the URL yourself, or set OIDC_BROWSER_HANDOFF=url to give the browser the URL itself."
        )
    }
}

/// The private pages a ``SystemBrowser`` wrote and has not removed yet, by the URL each leads to:
/// removed by ``SystemBrowser/loginEnded(_:)``, or when the last copy of the browser value is gone.
actor RedirectPages {
    private var pages: [URL: RedirectPage] = [:]

    /// Keeps `page` for `url`, removing an earlier page for the same URL.
    func keep(_ page: RedirectPage, for url: URL) {
        pages.updateValue(page, forKey: url)?.remove()
    }

    /// Removes the page for `url`, if there is one.
    func remove(for url: URL) {
        pages.removeValue(forKey: url)?.remove()
    }

    deinit {
        for page in pages.values { page.remove() }
    }
}
