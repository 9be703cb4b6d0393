// The yardstick of `scripts/bench-startup.sh`: the least a Swift program can do for `oidc token` with a
// cached token. It imports Foundation, reads the stored login file, decodes its JSON, checks the
// expiry and prints the access token. Built by the script with `swiftc -O -static-stdlib`.
import Foundation

guard CommandLine.arguments.count == 2, let data = FileManager.default.contents(atPath: CommandLine.arguments[1]),
    let login = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
    let tokens = login["tokens"] as? [String: Any], let token = tokens["access_token"] as? String,
    let expiry = tokens["expires_at"] as? Double, expiry > Date().timeIntervalSince1970 + 60
else {
    FileHandle.standardError.write(Data("usage: startup-baseline STORED-LOGIN.json (with a valid token)\n".utf8))
    exit(1)
}
print(token)
