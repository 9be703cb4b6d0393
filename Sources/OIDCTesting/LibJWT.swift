internal import CJWT
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// libjwt 1.10, loaded with `dlopen` the first time a token is minted.
///
/// Not linked: a program that links OIDCTesting but never mints (the `oidc` command, whose
/// `oidc token` must start in a few milliseconds) then never loads libjwt, nor the libcrypto,
/// jansson and libb64 that libjwt itself needs. The declarations still come from `<jwt.h>`.
struct LibJWT: @unchecked Sendable {
    let new: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Int32
    let free: @convention(c) (OpaquePointer?) -> Void
    let setAlgorithm: @convention(c) (OpaquePointer?, jwt_alg_t, UnsafePointer<UInt8>?, Int32) -> Int32
    let addHeader: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let addGrantsJSON: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    let encode: @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?

    /// Where to look: on Linux the soname of libjwt 1.x, found by the loader's usual search; on
    /// macOS absolute paths only (a bare name would let dyld take a copy from the current
    /// directory), Homebrew's and /usr/local's.
    #if canImport(Darwin)
    static let names = ["/opt/homebrew/lib/libjwt.dylib", "/usr/local/lib/libjwt.dylib"]
    #else
    static let names = ["libjwt.so.0"]
    #endif

    /// libjwt's functions, or why they could not be loaded (once per process).
    static let shared: Result<LibJWT, TokenMinter.MintError> = load()

    private static func load() -> Result<LibJWT, TokenMinter.MintError> {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            return .failure(TokenMinter.MintError(
                description: "libjwt could not be loaded (\(names.joined(separator: ", "))): install it (Debian: apt-get install libjwt-dev)"
            ))
        }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(handle, name).map { unsafeBitCast($0, to: type) }
        }
        guard let new = symbol("jwt_new", as: (@convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Int32).self),
            let free = symbol("jwt_free", as: (@convention(c) (OpaquePointer?) -> Void).self),
            let setAlgorithm = symbol("jwt_set_alg", as: (@convention(c) (OpaquePointer?, jwt_alg_t, UnsafePointer<UInt8>?, Int32) -> Int32).self),
            let addHeader = symbol("jwt_add_header", as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32).self),
            let addGrantsJSON = symbol("jwt_add_grants_json", as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32).self),
            let encode = symbol("jwt_encode_str", as: (@convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?).self)
        else {
            return .failure(TokenMinter.MintError(description: "the libjwt found lacks a function of libjwt 1.10"))
        }
        return .success(LibJWT(
            new: new, free: free, setAlgorithm: setAlgorithm, addHeader: addHeader, addGrantsJSON: addGrantsJSON, encode: encode
        ))
    }
}
