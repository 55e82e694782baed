/// An optional is tracked through its wrapped value while both versions hold one; a change
/// between `nil` and a value overwrites the whole optional.
extension Optional: Versionable, Revertible where Wrapped: Versionable {
    /// Tracks the wrapped value, or the whole optional when it became or stopped being `nil`.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        guard
            !reverter.hasChanged(
                at: KeyPathCache.path(.optionalIsNone, of: Self.self) { () -> KeyPath<Self, Bool> in \.isNone
                })
        else {
            reverter.appendOverwriteReversion(at: KeyPathCache.identity(), component: nil)
            return
        }
        guard self != nil else { return }
        // A force unwrap, not a computed property, which a key path changes by getting a copy
        // and setting it back (a change to one element of a wrapped array copied the array).
        // Registered, so that a change below it refuses `nil` instead of stopping the process.
        reverter.appendReversion(
            at: KeyPathCache.path(.optionalWrapped, of: Self.self) { () -> WritableKeyPath<Self, Wrapped> in
                InPlaceKeyPaths.register(\Self.!, read: { $0 }, modify: { $1(&$0!) })
            }, component: nil)
    }

    private var isNone: Bool { self == nil }
}
