import ArgumentParser

/// The credential of the commands that use a stored login (`token`, `refresh`, `request`,
/// `logout`, `introspect`, `exchange`): a client secret file for its refreshes and revocation, when
/// not the profile's. A secret given on the command line is never taken here: it would show in `ps`.
struct StoredLoginCredentials: ParsableArguments {
    @Option(help: "A file holding the client secret, for confidential clients (default: the profile's).")
    var clientSecretFile: String?
}
