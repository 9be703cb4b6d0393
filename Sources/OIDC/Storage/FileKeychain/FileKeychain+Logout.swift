internal import Logging

extension FileKeychain {
    /// Deletes the logins `selector` matches (a back-channel logout's user or session), and
    /// returns how many it deleted.
    ///
    /// Every file is read; a matching login is read again and deleted under its lock, so that a
    /// refresh in progress (which holds the lock) finishes first and a save it makes is not lost
    /// after the delete. A file this store cannot read (corrupt: moved aside, as ``load(_:)``
    /// does; sealed with a key it lacks; a newer format) is skipped with a warning in the log.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` when the directory cannot be listed, a lock is
    ///   not free within ``lockTimeout``, or a file cannot be removed.
    public func deleteLogins(_ selector: LoginSelector) async throws -> Int {
        var deleted = 0
        for key in try keys() {
            let login: StoredLogin?
            do { login = try load(key) } catch {
                logger.warning("stored login unreadable; not checked for the logout", metadata: metadata(key).merging(.failure(error)) { $1 })
                continue
            }
            guard let login, selector.matches(login) else { continue }
            deleted += try await withLock(key) {
                guard try self.load(key).map(selector.matches) == true else { return 0 }
                try self.delete(key)
                return 1
            }
            logger.debug("login deleted by a logout", metadata: metadata(key))
        }
        return deleted
    }
}
