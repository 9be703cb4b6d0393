#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Hummingbird
import Logging
import ServiceLifecycle

/// Runs `router` on `host`:`port` until SIGTERM or SIGINT (the command without `--demo`).
public func serve(_ router: Router<APIRequestContext>, host: String, port: Int) async throws {
    let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)), logger: Logger(label: "protected-api"))
    try await app.runService()
}

/// Runs `router` on 127.0.0.1:`port` while `body` runs, then stops it (the demo and the tests).
public func serve(_ router: Router<APIRequestContext>, port: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    let (running, continuation) = AsyncStream.makeStream(of: Void.self)
    var logger = Logger(label: "protected-api")
    logger.logLevel = .warning
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
        onServerRunning: { _ in continuation.finish() }, logger: logger
    )
    let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            defer { continuation.finish() }  // a failed bind must not leave the wait below hanging
            try await services.run()
        }
        for await _ in running {}
        do {
            try await body()
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
    }
}

/// A port that was free on 127.0.0.1 a moment ago: the API's resource identifier names its port,
/// so the port is known before the server starts. The system hands out ephemeral ports in turn,
/// so another server taking it in between is unlikely; a taken port fails loudly at bind.
public func reserveLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw PortError() }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw PortError() }
    return Int(UInt16(bigEndian: address.sin_port))
}

struct PortError: Error, CustomStringConvertible {
    var description: String { "No free port on 127.0.0.1." }
}
