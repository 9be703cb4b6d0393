internal import Foundation
internal import NIOCore

/// The loopback listener's open connections, in the order they were accepted, and which of them
/// have sent their request head.
///
/// The limit is kept by eviction, not refusal: when all slots are taken, a new connection closes the
/// oldest one still waiting for its head. A local program that opens connections and trickles bytes
/// (or sends nothing) therefore cannot keep the browser out; with ``closeIfHeadMissing(_:)`` at the
/// request-head deadline, a slot is held for a bounded time even when nobody else comes. Every
/// access holds the lock, never across a suspension, hence `@unchecked Sendable`.
final class LoopbackConnections: @unchecked Sendable {
    private struct Entry {
        let channel: any Channel
        var hasHead: Bool
    }

    private let maximum: Int
    private let lock = NSLock()
    /// Oldest first.
    private var entries: [Entry] = []
    private var isAdmitting = true

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Records `channel`, evicting the oldest connection without a request head when the listener is
    /// full. `false` when the listener is closing, or full of connections that are all being
    /// answered: the caller closes a refused one.
    func admit(_ channel: any Channel) -> Bool {
        let (admitted, evicted) = lock.withLock { () -> (Bool, (any Channel)?) in
            guard isAdmitting else { return (false, nil) }
            var evicted: (any Channel)?
            if entries.count >= maximum {
                guard let oldest = entries.firstIndex(where: { !$0.hasHead }) else { return (false, nil) }
                evicted = entries.remove(at: oldest).channel
            }
            entries.append(Entry(channel: channel, hasHead: false))
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        if admitted {
            channel.closeFuture.whenComplete { _ in self.remove(channel) }
        }
        return admitted
    }

    /// `channel` sent its request head: it is being answered, and is no longer evicted.
    func headReceived(on channel: any Channel) {
        lock.withLock {
            if let index = entries.firstIndex(where: { $0.channel === channel }) { entries[index].hasHead = true }
        }
    }

    /// Closes `channel` if it is still open without a request head (its deadline has passed).
    func closeIfHeadMissing(_ channel: any Channel) {
        let late = lock.withLock { entries.contains { $0.channel === channel && !$0.hasHead } }
        if late { channel.close(promise: nil) }
    }

    /// Refuses connections from now on and returns the open ones.
    func stopAdmitting() -> [any Channel] {
        lock.withLock {
            isAdmitting = false
            return entries.map(\.channel)
        }
    }

    /// How many connections are open.
    var count: Int { lock.withLock { entries.count } }

    private func remove(_ channel: any Channel) {
        lock.withLock { entries.removeAll { $0.channel === channel } }
    }
}
