/// Facts about this build of the library.
public enum OIDCLibrary {
    /// The version of the OpenSSL libcrypto the library runs on.
    public static var openSSLVersion: String { LibCrypto.version }
}
