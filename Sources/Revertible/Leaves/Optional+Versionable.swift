/// An optional is tracked through its wrapped value while both versions hold one; a change
/// between `nil` and a value overwrites the whole optional.
extension Optional: Versionable, Revertible where Wrapped: Versionable {
    /// Tracks the wrapped value, or the whole optional when it became or stopped being `nil`.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        guard !reverter.hasChanged(at: \.isNone) else {
            reverter.appendOverwriteReversion(at: \.self, component: nil)
            return
        }
        guard self != nil else { return }
        reverter.appendReversion(at: \.versionedWrapped, component: nil)
    }

    private var isNone: Bool { self == nil }

    /// The wrapped value; only registered while both versions hold one.
    private var versionedWrapped: Wrapped {
        get { self! }
        set { self = newValue }
    }
}
