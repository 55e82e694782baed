/// Where a ``VersioningController`` keeps its versions: the undo and redo steps of every
/// scope, their tags, and the current value.
///
/// The controller owns the semantics (tracking, debouncing, error modes, observation, which
/// step an `undo(to:)` lands on); a storage only keeps the stacks and moves along them. Two
/// storages exist: ``InMemoryVersionStorage`` (the default) and Keepsake's durable history in
/// a SQLite store. You choose one with ``HistoryStorage`` when creating a controller.
///
/// Every method either completes or throws and changes nothing, in memory and wherever the
/// storage keeps its versions.
public protocol VersionStorage<Value>: AnyObject {
    /// The value type versioned.
    associatedtype Value: Versionable

    /// The current version.
    var current: Value { get }
    /// The 0-based level of the current scope.
    var scopeLevel: Int { get }
    /// The number of versions ``undo(_:)`` can go back in the current scope.
    var undoCount: Int { get }
    /// The number of versions ``redo(_:)`` can go forward in the current scope.
    var redoCount: Int { get }
    /// The number of undo and redo steps kept in every scope.
    var versionCount: Int { get }
    /// The most versions kept, or `nil` for no limit; 0 keeps none besides the current one.
    var maximumVersions: Int? { get }

    /// Changes the limit, dropping the oldest versions over it. The controller passes no
    /// limit below 0 (it keeps one below as 0), here as to the storage's opening.
    func setMaximumVersions(_ maximumVersions: Int?) throws(ReversionError)

    /// Records a new version of the current scope and clears its redo steps.
    ///
    /// - Parameters:
    ///   - reversion: Reverts `value` to ``current``.
    ///   - value: The new current version.
    ///   - tag: The new version's tag.
    func append(_ reversion: Reversion<Value>, resulting value: Value, tag: VersionTag?)
        throws(ReversionError)

    /// Goes back `count` versions (at most ``undoCount``) of the current scope.
    func undo(_ count: Int) throws(ReversionError)

    /// Goes forward `count` versions (at most ``redoCount``) of the current scope.
    func redo(_ count: Int) throws(ReversionError)

    /// Sets the current version's tag.
    func tag(_ tag: VersionTag?) throws(ReversionError)

    /// The tags of a scope's versions: from its first version up to and including the current
    /// one, and then the undone ones, next to redo first.
    func tags(inScopeLevel level: Int) throws(ReversionError) -> (undo: [VersionTag?], redo: [VersionTag?])

    /// Starts a scope whose first version is the current one.
    func pushScope() throws(ReversionError)

    /// Ends the current scope (not the root), squashing its net change into one version of the
    /// parent scope, tagged as the scope's current version was.
    func popScope() throws(ReversionError)

    /// Ends the current scope (not the root) and returns to the value it started from.
    func undoAndPopScope() throws(ReversionError)

    /// Replaces the current version without recording a step; refuses a value from which a
    /// step of any scope (undo or redo) would not apply, changing nothing.
    func replaceCurrent(with value: Value) throws(ReversionError)

    /// Records what a debounced change holds back, so that it survives a crash; `nil` when
    /// nothing is held any more. Storages in memory need not do anything.
    func holdPending(_ value: Value?) throws(ReversionError)

    /// Checks the storage's invariants: every undo step reverts, every redo step redoes, and
    /// wherever the versions are kept agrees with memory.
    func checkInvariants() throws(ReversionError)

    /// Called by ``VersioningController/close()`` once everything pending is recorded: a
    /// durable storage stores the current value whole, so that the next open reads it and
    /// replays nothing.
    func close() throws(ReversionError)

    /// Reads the versions again when `error`, thrown by one of this storage's writes, says that
    /// another writer changed them since this storage last read or wrote them (another process,
    /// or another storage on the same versions): ``current``, the stacks and the limit become
    /// the ones kept. The controller then makes its write again, from there.
    ///
    /// Storages whose versions have no other writer (in memory) need not do anything.
    ///
    /// - Parameter error: What the write threw.
    /// - Returns: Whether the versions were read again: `false` for any other error, and when
    ///   there are none to read any more (deleted); nothing changes then.
    /// - Throws: When reading them, or writing what reading them requires, failed: what is kept
    ///   is as it was, and ``current`` and the stacks may already be the ones kept.
    func reload(after error: ReversionError) throws(ReversionError) -> Bool

    /// Reads the versions again when another writer changed them since this storage last read
    /// or wrote them, as ``reload(after:)`` does after a conflict; nothing is read when no
    /// other writer did. ``VersioningController/refresh()`` calls it, having recorded every
    /// pending change first.
    ///
    /// Storages whose versions have no other writer (in memory) need not do anything.
    ///
    /// - Returns: Whether the versions were read again.
    /// - Throws: When they cannot be read any more (a durable history deleted since), or
    ///   reading them, or writing what reading them requires, failed: what is kept is as it
    ///   was, and ``current`` and the stacks may already be the ones kept.
    func reloadIfChanged() throws(ReversionError) -> Bool

    /// The change held back by debouncing when the versions' last writer stopped, which
    /// opening them could not record as a version (a durable store on a full disk, or kept
    /// locked by another writer: it stays stored as held), and why; `nil` when there is none.
    /// The controller asks once, as it starts, and keeps the change pending as it keeps a
    /// value whose recording failed: ``VersioningController/value`` is it,
    /// ``VersioningController/error`` says why, and the next operation records it (or, once
    /// it is recorded or taken back, the stored one is cleared with it).
    ///
    /// Storages that record every held change as they open (in memory) need not do anything.
    func takeUnrecordedHeldChange() -> (value: Value, error: ReversionError)?
}

extension VersionStorage {
    public func holdPending(_ value: Value?) throws(ReversionError) {}
    public func close() throws(ReversionError) {}
    public func reload(after error: ReversionError) throws(ReversionError) -> Bool { false }
    public func reloadIfChanged() throws(ReversionError) -> Bool { false }
    public func takeUnrecordedHeldChange() -> (value: Value, error: ReversionError)? { nil }
}

/// Which storage a ``VersioningController`` keeps its versions in, and how to open it.
///
/// ```swift
/// let inMemory = VersioningController(document)                                  // .inMemory
/// let durable = try VersioningController(document, storage: .keepsake(store, history: "doc-1"))
/// ```
///
/// Keepsake adds the durable storages (`.keepsake(_:history:)`, `.keepsake(path:history:)`).
public struct HistoryStorage<Value: Versionable> {
    let open:
        (_ initialValue: () -> Value, _ maximumVersions: Int?) throws(ReversionError) -> any VersionStorage<
            Value
        >

    /// A storage opened by `open`, which receives the first value (for a new history) and the
    /// requested limit.
    ///
    /// - Parameter open: Opens or creates the storage; what it throws reaches the controller's
    ///   error mode.
    public init(
        open:
            @escaping (_ initialValue: () -> Value, _ maximumVersions: Int?) throws(ReversionError) ->
            any VersionStorage<Value>
    ) {
        self.open = open
    }

    /// Versions kept in memory, gone with the controller: the default.
    public static var inMemory: Self {
        Self { initialValue, maximumVersions in
            InMemoryVersionStorage(initialValue(), maximumVersions: maximumVersions)
        }
    }
}

/// The default storage: a ``VersionHistory`` in memory.
///
/// Every operation is O(1) in the number of versions kept, plus the cost of the reversions it
/// applies.
public final class InMemoryVersionStorage<Value: Versionable>: VersionStorage {
    /// The stacks, the current value, and the limit.
    public private(set) var history: VersionHistory<Value>

    /// A storage whose only version is `value`.
    ///
    /// - Parameters:
    ///   - value: The first version.
    ///   - maximumVersions: The most versions kept; `nil` for no limit.
    public init(_ value: Value, maximumVersions: Int?) {
        history = VersionHistory(value, maximumVersions: maximumVersions)
    }

    public var current: Value { history.current }
    public var scopeLevel: Int { history.scopeLevel }
    public var undoCount: Int { history.undoCount }
    public var redoCount: Int { history.redoCount }
    public var versionCount: Int { history.versionCount }
    public var maximumVersions: Int? { history.maximumVersions }

    public func setMaximumVersions(_ maximumVersions: Int?) throws(ReversionError) {
        history.maximumVersions = maximumVersions
    }

    public func append(_ reversion: Reversion<Value>, resulting value: Value, tag: VersionTag?)
        throws(ReversionError)
    {
        history.push(reversion, resulting: value, tag: tag)
    }

    public func undo(_ count: Int) throws(ReversionError) { try history.undo(count: count) }
    public func redo(_ count: Int) throws(ReversionError) { try history.redo(count: count) }
    public func tag(_ tag: VersionTag?) throws(ReversionError) { history.tag(tag) }

    public func tags(inScopeLevel level: Int) throws(ReversionError) -> (
        undo: [VersionTag?], redo: [VersionTag?]
    ) {
        history.tags(inScopeLevel: level)
    }

    public func pushScope() throws(ReversionError) { history.pushScope() }
    public func popScope() throws(ReversionError) { history.popScope() }
    public func undoAndPopScope() throws(ReversionError) { history.undoAndPopScope() }
    public func replaceCurrent(with value: Value) throws(ReversionError) {
        try history.replaceCurrent(with: value)
    }
    public func checkInvariants() throws(ReversionError) { try history.checkInvariants() }
}
