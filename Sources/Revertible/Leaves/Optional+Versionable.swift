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
        reverter.appendReversion(
            at: KeyPathCache.path(.optionalWrapped, of: Self.self) { () -> WritableKeyPath<Self, Wrapped> in
                \.versionedWrapped
            }, component: nil)
    }

    private var isNone: Bool { self == nil }

    /// The wrapped value; only registered while both versions hold one.
    private var versionedWrapped: Wrapped {
        get { self! }
        set { self = newValue }
    }
}
