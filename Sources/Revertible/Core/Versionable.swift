/// A value that can make a ``Reversion`` back to an earlier version of itself.
///
/// Every ``Versionable`` type is `Revertible`; you rarely adopt this protocol directly.
public protocol Revertible {
    /// Makes a reversion that turns this value back into `previous`.
    ///
    /// ```swift
    /// var user = User(name: "", imageData: Data())
    /// let original = user
    /// user.name = "Johnny"
    /// let reversion = user.reversion(to: original)  // Reversion<User>
    /// try reversion?.revert(&user)                   // user.name == ""
    /// ```
    ///
    /// A tracked part changed where `==` says so, with two exceptions: NaNs are the same as
    /// each other, and text is compared by its bytes, so that the same text in another Unicode
    /// normalization ("é" as one scalar, or as "e" and a combining accent) is a change, which
    /// undo takes back to the exact bytes. That holds for text anywhere in a value `==` finds
    /// equal (a struct's property, an array's element, an enum's payload), but not for a
    /// class's properties, a `Set`'s members or a dictionary's keys.
    ///
    /// - Parameter previous: The earlier version of this value.
    /// - Returns: The changes from `previous` to `self`, or `nil` when nothing tracked changed.
    /// - Complexity: O(*n*) in the size of the tracked parts that differ; parts that are equal
    ///   are skipped after one comparison (which is O(1) for collections sharing storage).
    func reversion(to previous: Self) -> Reversion<Self>?
}

/// A value whose changes are tracked property by property.
///
/// Adopt ``Versionable`` and list the properties to track in ``addReversions(into:)``, the way
/// `Codable` lists coding keys:
///
/// ```swift
/// struct User: Versionable {
///     var name: String
///     var imageData: Data
///
///     func addReversions(into reverter: inout some Reverter<User>) {
///         reverter.appendReversion(at: \.name)
///         reverter.appendReversion(at: \.imageData)
///     }
/// }
/// ```
///
/// Or leave the method out: a struct then tracks every stored `var` whose type is
/// ``Versionable`` (or `Equatable`) under its own name. Mark a property with
/// ``VersionableIgnored`` to leave it out. A `let` is compared, not tracked: a new value whose
/// `let`s hold other values (another `id`, another `created`) is recorded whole. A property that
/// holds class instances stops the first diff, since a change made inside one in place would be
/// in both versions: make the class a struct, or a ``VersionableLeaf`` when its instances are
/// only ever replaced.
///
/// A property whose struct type is only `Codable` and `Equatable` is tracked the same way, field
/// by field, and so is such an array element or dictionary value, when each of its stored
/// properties is a `var` that can be tracked or a `let` of an `Equatable` type, and it encodes
/// as a JSON object keyed by them. A new value whose `let` differs is recorded whole; so is one
/// holding a class or with an array form such as `CGPoint`'s, at any change inside it.
///
/// ```swift
/// struct Note: Versionable {
///     var title: String
///     var body: String
///     @VersionableIgnored var lastOpened = Date()
/// }
/// ```
///
/// The same method serves both diffing two versions and resolving a stored
/// ``PathDescriptor`` back to a writable location, so it must register the same properties
/// under the same names every time.
public protocol Versionable: Revertible {
    /// Registers the properties whose changes are tracked.
    ///
    /// - Parameter reverter: The reverter to register properties with.
    func addReversions(into reverter: inout some Reverter<Self>)

    /// How this type's properties changed since data was stored: renames, and new types with
    /// a conversion from the old. None by default. See ``PropertyEvolution``.
    static var propertyEvolution: [PropertyEvolution] { get }
}

extension Versionable {
    /// No renamed or converted properties.
    public static var propertyEvolution: [PropertyEvolution] { [] }
}

extension Versionable {
    /// Tracks every stored `var` of a struct whose type is ``Versionable`` or `Equatable`.
    ///
    /// - Precondition: The type is a struct with stored properties, and each stored `var` is
    ///   ``Versionable``, `Equatable` or marked ``VersionableIgnored``, and is not a class nor
    ///   an optional, array, set or dictionary of one, unless that class is a
    ///   ``VersionableLeaf``: versions share a class's instances, so a change made inside one in
    ///   place could not be seen.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        precondition(
            reverter.appendStoredPropertyReversions(),
            """
            \(Self.self) has no stored properties to track. Implement addReversions(into:), or \
            make it Equatable to track it as a whole.
            """)
    }

    public func reversion(to previous: Self) -> Reversion<Self>? {
        var changes: [Reversion<Self>.Change] = []
        var reverter = DiffingReverter<Self>(old: previous, new: self, path: []) { path, node in
            changes.append(.init(path: path, node: node))
        }
        addReversions(into: &reverter)
        return changes.isEmpty ? nil : Reversion(changes: changes)
    }
}

extension Versionable where Self: Equatable {
    /// Tracks every stored `var` of a struct; a value without stored properties (such as an
    /// enum) is tracked as a whole: any change overwrites it.
    public func addReversions(into reverter: inout some Reverter<Self>) {
        if !reverter.appendStoredPropertyReversions() {
            reverter.appendOverwriteReversion(at: KeyPathCache.identity(), component: nil)
        }
    }
}

extension Versionable where Self: Equatable & Codable {
    /// Tracks every stored `var` of a struct; a value without stored properties (an enum, for
    /// example) is tracked through its encoded form: while the case is unchanged, only the
    /// changed parts of its payload are recorded (`kind.circle.radius`), and a case change
    /// overwrites it. See ``Reverter/appendCodableReversion(at:component:)``.
    ///
    /// ```swift
    /// enum Shape: Codable, Equatable, Versionable {
    ///     case circle(radius: Double)
    ///     case rect(w: Double, h: Double)
    /// }
    /// ```
    public func addReversions(into reverter: inout some Reverter<Self>) {
        if !reverter.appendStoredPropertyReversions() {
            reverter.appendCodableReversion(at: KeyPathCache.identity(), component: nil)
        }
    }
}
