extension AuthorizationRequest {
    /// Parameters the library sets itself; additional parameters may not use these names.
    @available(*, deprecated, message: "reservedParameterNames is internal plumbing: AuthorizationRequest's initializer refuses an additional parameter with one of these names (invalidArgument, naming it)")
    public static var reservedParameterNames: Set<String> { librarySetParameterNames }
}
