/// Exclusive locks by key, for an actor's tasks: the bookkeeping of ``InMemoryTokenStore`` and
/// ``InMemoryRegistrationStore``. The actor keeps it as a stored property and calls it from its
/// own methods, so every change happens on the actor.
struct KeyedLocks<Key: Hashable & Sendable>: Sendable {
    private var locked: Set<Key> = []
    private var waiters: [Key: [CheckedContinuation<Void, Never>]] = [:]

    /// Takes the lock of `key` when it is free; `false`: the caller must wait with ``enqueue(_:_:)``.
    mutating func take(_ key: Key) -> Bool {
        locked.insert(key).inserted
    }

    /// Queues a waiter for `key`; ``release(_:)`` resumes it with the lock handed over.
    mutating func enqueue(_ key: Key, _ waiter: CheckedContinuation<Void, Never>) {
        waiters[key, default: []].append(waiter)
    }

    /// Releases the lock of `key`: the first waiter gets it directly, so no third caller can slip in between.
    mutating func release(_ key: Key) {
        if var queue = waiters[key], !queue.isEmpty {
            let next = queue.removeFirst()
            waiters[key] = queue.isEmpty ? nil : queue
            next.resume()
        } else {
            locked.remove(key)
        }
    }
}
