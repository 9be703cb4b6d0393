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
/// (`oidc-login-XXXXXXXX`) under a parent directory in which only this user and root can rename
/// entries (``PageDirectory``): the user's runtime directory (`$XDG_RUNTIME_DIR`), else the
/// temporary one (`$TMPDIR`, else `/tmp`), when it passes.
///
/// The browser gets the page's `file://` URL. Other local users can see that path on the browser's
/// command line (`/proc/PID/cmdline`), but can neither list the directory nor read the page, nor
/// (the parent being strict) move the directory aside and put a page of their own at its name. The
/// page is written and removed through the directory's descriptor, and the directory is removed
/// only while its name is still that directory. The page redirects with
/// `<meta http-equiv="refresh">` and shows a plain link as well; it runs no script. Jupyter opens
/// its token URL the same way.
final class RedirectPage: Sendable {
    /// The page's directory, made for it alone.
    let directory: String
    /// The page's path: `directory/login.html`.
    let path: String
    /// The directory, opened when it was made: what the page is written and removed through.
    private let descriptor: Int32
    /// The directory's device and inode, to recognise it at its name.
    private let identity: (device: UInt64, inode: UInt64)

    static let pageName = "login.html"

    /// `file:///…/oidc-login-XXXXXXXX/login.html`.
    var url: URL { URL(fileURLWithPath: path) }

    private init(directory: String, descriptor: Int32, identity: (device: UInt64, inode: UInt64)) {
        self.directory = directory
        self.path = directory + "/" + Self.pageName
        self.descriptor = descriptor
        self.identity = identity
    }

    deinit { close(descriptor) }

    /// Writes a new page that redirects to `target`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when no parent directory is private enough
    ///   (``PageDirectory/parent(environment:)``), or when the directory or the page cannot be
    ///   created, naming the parent directory and the system's reason (never the URL).
    static func write(redirectingTo target: URL, environment: [String: String]) throws(OIDCError) -> RedirectPage {
        let parent = try PageDirectory.parent(environment: environment)
        var template = Array("\(parent)/oidc-login-XXXXXXXX".utf8CString)
        // mkdtemp makes the directory with mode 0700, under a name nobody could have taken first.
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw failure(parent, reason: String(cString: strerror(errno)))
        }
        let directory = String(cString: made)
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            let code = errno
            if descriptor >= 0 { close(descriptor) }
            throw failure(parent, reason: code == 0 ? "the new directory is not this user's private one" : String(cString: strerror(code)))
        }
        let page = RedirectPage(directory: directory, descriptor: descriptor, identity: (UInt64(info.st_dev), UInt64(info.st_ino)))
        let file = openat(descriptor, pageName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else {
            let code = errno
            page.remove()
            throw failure(parent, reason: String(cString: strerror(code)))
        }
        do throws(OIDCError) {
            guard fchmod(file, 0o600) == 0 else { throw KeychainIO.failure(errno, "writing", page.path) }
            try KeychainIO.writeAll(file, Array(html(redirectingTo: target).utf8), page.path)
            close(file)
        } catch {
            close(file)
            page.remove()
            throw failure(parent, reason: error.context["reason"] ?? error.message)
        }
        return page
    }

    /// Removes the page through the directory's descriptor, then the directory, if its name still
    /// leads to it: whatever another program put at either name is left alone.
    func remove() {
        unlinkat(descriptor, Self.pageName, 0)
        var info = stat()
        guard fstatat(AT_FDCWD, directory, &info, AT_SYMLINK_NOFOLLOW) == 0, UInt64(info.st_dev) == identity.device,
            UInt64(info.st_ino) == identity.inode
        else { return }
        rmdir(directory)
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
