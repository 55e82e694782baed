/// Collects the properties a ``Versionable`` type tracks.
///
/// You receive a reverter in ``Versionable/addReversions(into:)`` and register properties with
/// it; you never create one. The library passes a reverter that compares two versions, or one
/// that finds the location a stored ``PathDescriptor`` names.
///
/// The requirements take an explicit ``PathComponent`` (`nil` for a registration that adds no
/// component, such as `\.self`); the extension methods ``appendReversion(at:)`` and
/// ``appendReversion(at:named:)`` are what most types call.
public protocol Reverter<Root> {
    /// The type whose properties are registered.
    associatedtype Root

    /// Tracks a nested ``Versionable`` value: its own registrations are tracked below
    /// `component`.
    ///
    /// - Parameters:
    ///   - keyPath: Where the value lives.
    ///   - component: The path component naming it, or `nil` to add none.
    mutating func appendReversion<Value: Versionable>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?)

    /// Tracks a value as a whole: any change records the old and new value.
    ///
    /// When `Value` is `Equatable`, an unchanged value records nothing and reverting checks
    /// the current value; otherwise every diff records it.
    ///
    /// - Parameters:
    ///   - keyPath: Where the value lives.
    ///   - component: The path component naming it, or `nil` to add none.
    mutating func appendOverwriteReversion<Value>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?)

    /// Tracks a `Codable` value through its encoded form: while its shape is unchanged (the
    /// same enum case, arrays of the same length), each changed part is recorded at its own path
    /// below `component` — `kind.circle.radius` for a circle's radius — and anything else
    /// replaces the whole value, as ``appendOverwriteReversion(at:component:)`` does.
    ///
    /// This is what an `Equatable & Codable` enum adopting ``Versionable`` gets with no code.
    /// Parts are recorded only when they take fewer bytes than both whole values, and when
    /// every change decodes on its own; otherwise the value is replaced whole.
    ///
    /// - Parameters:
    ///   - keyPath: Where the value lives.
    ///   - component: The path component naming it, or `nil` to add none.
    mutating func appendCodableReversion<Value: Codable & Equatable>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?)

    /// Tracks a leaf value with its own ``VersionableLeaf/Patch``.
    ///
    /// - Parameters:
    ///   - keyPath: Where the value lives.
    ///   - component: The path component naming it, or `nil` to add none.
    mutating func appendLeafReversion<Value: VersionableLeaf>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?)

    /// Tracks a collection element by element: structural changes as one patch, changed
    /// elements below their key or id.
    ///
    /// - Parameters:
    ///   - keyPath: Where the collection lives.
    ///   - component: The path component naming it, or `nil` to add none.
    mutating func appendElementReversions<Value: VersionableCollection>(
        at keyPath: WritableKeyPath<Root, Value>, component: PathComponent?)

    /// Whether the value at `keyPath` differs between the two versions being compared.
    ///
    /// Use it to overwrite an enum whose case changed:
    ///
    /// ```swift
    /// guard !reverter.hasChanged(at: \.caseName) else {
    ///     reverter.appendOverwriteReversion(at: \.self)
    ///     return
    /// }
    /// ```
    ///
    /// While a stored path is being resolved, it answers whether the stored record is a
    /// whole-value record at this level.
    ///
    /// - Parameter keyPath: The value to compare.
    /// - Returns: `true` when the value changed.
    func hasChanged<Value: Equatable>(at keyPath: KeyPath<Root, Value>) -> Bool

    /// Whether registering the stored property at `keyPath` (under `name`, when one is given)
    /// would certainly record or find nothing, so that ``appendReversion(at:)`` and
    /// ``appendReversion(at:named:)`` pass it over before looking up its name or building
    /// anything for it.
    ///
    /// A customization point for the library's own reverters, as the standard library's
    /// underscored requirements are: comparing two versions, a stored property whose bytes are
    /// the same in both holds the same value; resolving a stored path, a property other than the
    /// one the path names next takes nothing. The default answers `false`. Don't call or
    /// implement it.
    ///
    /// - Parameters:
    ///   - keyPath: The property about to be registered.
    ///   - name: The name it is registered under, or `nil` for its own.
    /// - Returns: `true` only when the registration can be skipped without changing the result.
    mutating func _canPassOver<Value>(_ keyPath: WritableKeyPath<Root, Value>, named name: String?) -> Bool
}

extension Reverter {
    /// Never passes a registration over: what a reverter other than the library's own does.
    ///
    /// - Parameters:
    ///   - keyPath: The property about to be registered.
    ///   - name: The name it is registered under, or `nil` for its own.
    /// - Returns: `false`.
    public func _canPassOver<Value>(_ keyPath: WritableKeyPath<Root, Value>, named name: String?) -> Bool {
        false
    }

    /// Tracks the property at `keyPath` under its own name.
    ///
    /// The name comes from the type's stored property list; `\.self` adds no component.
    /// Comparing two versions, a stored property whose bytes are the same in both holds the
    /// same value and is skipped unread, as the properties of a type tracked with no code are.
    ///
    /// - Parameter keyPath: A stored property of `Root`, or `\.self`.
    /// - Precondition: `keyPath` is `\.self` or a stored property. For a computed property use
    ///   ``appendReversion(at:named:)``.
    public mutating func appendReversion<Value: Versionable>(at keyPath: WritableKeyPath<Root, Value>) {
        if _canPassOver(keyPath, named: nil) { return }
        appendReversion(at: keyPath, component: FieldTable<Root>.shared.component(for: keyPath))
    }

    /// Tracks the value at `keyPath` under `name`, which may be a computed property.
    ///
    /// A stored property whose bytes are the same in both versions compared is skipped
    /// unread; a computed one is always compared.
    ///
    /// - Parameters:
    ///   - keyPath: Where the value lives.
    ///   - name: The name stored in path descriptors; keep it stable across releases.
    public mutating func appendReversion<Value: Versionable>(
        at keyPath: WritableKeyPath<Root, Value>, named name: String
    ) {
        if _canPassOver(keyPath, named: name) { return }
        appendReversion(at: keyPath, component: .property(name))
    }

    /// Tracks the value at `keyPath` as a whole, under its own name (none for `\.self`).
    ///
    /// - Parameter keyPath: A stored property of `Root`, or `\.self`.
    public mutating func appendOverwriteReversion<Value>(at keyPath: WritableKeyPath<Root, Value>) {
        appendOverwriteReversion(at: keyPath, component: FieldTable<Root>.shared.component(for: keyPath))
    }

    /// Tracks the value at `keyPath` as a whole, under `name`.
    ///
    /// - Parameters:
    ///   - keyPath: Where the value lives.
    ///   - name: The name stored in path descriptors.
    public mutating func appendOverwriteReversion<Value>(
        at keyPath: WritableKeyPath<Root, Value>, named name: String
    ) {
        appendOverwriteReversion(at: keyPath, component: .property(name))
    }

    /// Tracks every stored `var` of `Root` that is ``Versionable`` or `Equatable`; a new value
    /// whose `let`s hold other values (another `id`, another `created`) is recorded whole, since
    /// no `var`'s change would record them.
    ///
    /// - Returns: `false` when `Root` has no stored properties at all (an enum, for example).
    @discardableResult
    public mutating func appendStoredPropertyReversions() -> Bool {
        let table = FieldTable<Root>.shared
        // A programmer's error, found at the type's first diff: tracked with no code, the type
        // would lose the changes to that property.
        if let untrackable = table.untrackable { preconditionFailure(untrackable) }
        // Comparing two versions: a field whose bytes did not change is skipped unread.
        let diffing = inPlace(as: DiffingReverter<Root>.self) { diffing in
            guard table.constants.isEmpty || table.constantsAreEqual(diffing.old, diffing.new) else {
                diffing.appendOverwriteReversion(at: \.self, component: nil)
                return
            }
            for index in diffing.changedFields(table) {
                table.tracked[index].register(into: &diffing)
            }
        }
        if diffing { return table.hasStoredProperties }
        // Resolving a stored path: only the property it names can take it (every tracked
        // property's component is its name), so the others are not asked.
        let resolving = inPlace(as: ResolvingReverter<Root>.self) { resolving in
            // The whole value, recorded so when its `let`s held other values. (A type without
            // stored properties, an enum, is resolved by its caller.)
            if resolving.remaining.isEmpty, table.hasStoredProperties {
                resolving.appendOverwriteReversion(at: \.self, component: nil)
                return
            }
            if case .property(let name)? = resolving.remaining.first, let index = table.trackedByName[name] {
                table.tracked[index].register(into: &resolving)
            }
        }
        if resolving { return table.hasStoredProperties }
        for field in table.tracked {
            field.register(into: &self)
        }
        return table.hasStoredProperties
    }

    /// Runs `body` on this reverter as a `Known`, in place, when it is one: a cast would copy
    /// it (and a diffing reverter holds both values compared).
    ///
    /// - Returns: Whether this reverter is a `Known`.
    mutating func inPlace<Known: Reverter<Root>>(as _: Known.Type, _ body: (inout Known) -> Void)
        -> Bool
    {
        guard Self.self == Known.self else { return false }
        withUnsafeMutablePointer(to: &self) { pointer in
            body(&UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: Known.self).pointee)
        }
        return true
    }
}
