public import Observation

/// Tracks the versions of a value and moves between them: undo, redo, scopes, tags,
/// transactions, debouncing.
///
/// Only what changed is kept: each version is a ``Reversion`` made by diffing it with the one
/// before. Four ways to track a value:
///
/// - **Direct**: `VersioningController(value)`; `append(_:)` each new version; `undo()` returns
///   the previous one.
/// - **Key path**: `VersioningController(on: root, at: \.activity)`; `append(root:)` and
///   `undo(root:)` read and write the property of a root you own.
/// - **Reference key path**: the same initializer with a class root, held weakly;
///   `appendCurrentVersion()`, `undo()` and `redo()` read and write the object directly.
/// - **Observation**: ``init(observing:at:errorMode:maximumVersions:isolation:)`` with an
///   `@Observable` root appends every change by itself.
///
/// ```swift
/// let controller = VersioningController(activity)
/// activity.title = "New title"
/// try controller.append(activity)
/// activity = try controller.undo()   // title is "Title" again
/// ```
///
/// ## Storage
///
/// The versions live in a ``VersionStorage`` below the controller: in memory by default, or —
/// with Keepsake — in a named history of a SQLite store, so that undo and redo survive a
/// restart. Every feature works the same on both; the initializers that take a `storage:`
/// argument open it, and report a failure to open through the error mode:
///
/// ```swift
/// let controller = try VersioningController(
///     observing: model, at: \.drawing, storage: .keepsake(store, history: "drawing-1"))
/// ```
///
/// A durable history may have other writers (a widget beside the app, a document open in two
/// windows). When one wrote since the controller read the versions, the controller reads them
/// again (``VersionStorage/reload(after:)``) and makes its write from there: an edit is carried
/// over onto the other writer's version — made there where that writer left every leaf it
/// changed as it was; where the edit's own check refuses that version (both changed one leaf
/// differently), kept whole, that writer's version one undo below it — and ``value``, a
/// reference root and observers follow. Undo and redo move along the one shared stack.
///
/// ## Isolation
///
/// The controller is not `Sendable`: it belongs to the isolation domain that created it (the
/// main actor in an app, your own actor in a server) and is used from there. Debouncing and
/// observation schedule their work back onto that same actor, which is why their APIs take an
/// `isolation` argument that defaults to the caller's (`#isolation`). The controller is itself
/// `Observable`: SwiftUI views reading ``hasUndo``, ``hasRedo``, ``scopeLevel`` or ``error``
/// update when they change.
public final class VersioningController<Root, Value: Versionable, Failure: Error>: Observable {
    /// Where the versions are kept.
    public private(set) var storage: any VersionStorage<Value>
    let keyPath: WritableKeyPath<Root, Value>
    /// The root of the reference key path mode, held weakly.
    weak var object: AnyObject?
    let errorMode: VersioningErrorMode<Root, Failure>
    let registrar = ObservationRegistrar()
    var debouncer: (any PendingVersionHolder<Value>)?
    /// Raised by a change to an observed root not recorded yet; `nil` when not observing.
    var observedChange: ChangeFlag?
    /// Tracks the observed root again after an operation recorded its change before the
    /// change was delivered; `nil` when not observing.
    var observeAgain: (() -> Void)?
    /// The app's newest value whose recording failed with no caller to keep it (an assigning
    /// error mode's append, a setter, an observed change): pending as a held change is, until
    /// the next recording (of a newer value, which holds its edits) or operation records it.
    var unrecorded: Value? {
        didSet { hasUnrecorded = unrecorded != nil }
    }
    /// Whether ``unrecorded`` holds a value: a check that code not specialized for `Value`
    /// makes without looking up `Value?` at run time.
    package private(set) var hasUnrecorded = false
    var storedError: ReversionError?
    /// How many times the storage read another writer's versions again after a conflict: how
    /// ``refresh()`` tells that recording what was pending read them already.
    var readsAfterConflicts = 0
    /// An edit as the app made it, as a write that then failed carried it over onto another
    /// writer's version, and that version: see ``carriedOver(onFailureOf:)``.
    var carriedBeforeFailure: (made: Value, carried: Value, onto: Value)? {
        didSet { hasCarriedBeforeFailure = carriedBeforeFailure != nil }
    }
    /// Whether ``carriedBeforeFailure`` holds an edit: what an append of the throwing mode
    /// checks without looking up a `Value?` at run time.
    private(set) var hasCarriedBeforeFailure = false
    /// The change held back by debouncing, as a write that then failed carried it over onto
    /// another writer's version: what debouncing holds from then on (see
    /// ``holdingAfterFailure(_:)``).
    var heldCarriedBeforeFailure: Value?
    /// Why the storage this controller was given could not be opened, so that it keeps its
    /// versions in memory instead, from a value that is not the stored one; `nil` when they
    /// are kept where it was asked to keep them.
    ///
    /// A controller whose error mode assigns errors (what ``Versioned`` and
    /// ``ThrowingVersioned`` use) starts in memory when its storage cannot be opened (a store
    /// in a missing folder, a model that no longer reads it), with the reason in ``error`` too.
    /// ``error`` is cleared by the next operation that succeeds, the first edit included; this
    /// stays for the controller's life, so an app can say, for as long as it holds, that the
    /// document's edits will not be there at the next launch:
    ///
    /// ```swift
    /// if let reason = editor.$note.openingError {
    ///     Text("Changes are not being saved: \(reason.localizedDescription)")
    /// }
    /// ```
    public let openingError: ReversionError?
    /// The stack state observers last learned of (``didChange(writingRoot:)``).
    var announced: AnnouncedStacks?
    /// The key paths observers are told about, made once per controller type: a key path
    /// literal in a generic class is built anew on every use (some 110,000 instructions for
    /// these six, more than a first append's diff of a large document).
    private(set) lazy var observed = KeyPathCache.object(.observedByController, of: Self.self) {
        KeyPathCache.Box(
            (
                value: \VersioningController.value, hasUndo: \VersioningController.hasUndo,
                hasRedo: \VersioningController.hasRedo, scopeLevel: \VersioningController.scopeLevel,
                versionCount: \VersioningController.versionCount, error: \VersioningController.error
            ))
    }.value

    package init(
        storage: any VersionStorage<Value>, keyPath: WritableKeyPath<Root, Value>, object: AnyObject?,
        errorMode: VersioningErrorMode<Root, Failure>, openingError: ReversionError? = nil
    ) {
        self.storage = storage
        self.keyPath = keyPath
        self.object = object
        self.errorMode = errorMode
        self.openingError = openingError
        storedError = openingError
        // A change the last writer held back, which opening could not record (no room, a
        // lock): pending, as a value whose recording failed is (until 2026-12 the open failed).
        if let held = storage.takeUnrecordedHeldChange() {
            // (Property observers do not run in an initializer: the flag is set here.)
            (unrecorded, hasUnrecorded) = (held.value, true)
            storedError = held.error
            if errorMode.assignsToController { try? errorMode.handle(held.error, object as? Root) }
        }
        announced = AnnouncedStacks(storage, pending: hasUnrecorded)
    }

    /// A controller let go of in the turn of an edit to its observed root, before that turn
    /// ends and the edit is recorded (a document closed, or a command-line tool returning,
    /// without ``close()``), gives the edit to its storage to hold, as debouncing holds a
    /// change: a durable store records it as a version when the history is next opened. So
    /// does one whose recording failed (a busy store) and that no operation recorded since.
    /// Nothing can report a failure here; ``close()`` records it now, and throws.
    deinit {
        let root = observedChange?.lower() as? Root
        guard let value = root.map({ $0[keyPath: keyPath] }) ?? unrecorded else { return }
        try? writingThroughConflicts(value, editedFrom: debouncer?.pending, announcing: false) {
            value throws(ReversionError) in
            try storage.holdPending(value)
        }
    }

    /// Opens `storage`; when it fails, the error goes to the error mode: thrown, or stored in
    /// ``error`` while the controller keeps its versions in memory.
    convenience init(
        opening storage: HistoryStorage<Value>, initialValue: Value, keyPath: WritableKeyPath<Root, Value>,
        object: AnyObject?, errorMode: VersioningErrorMode<Root, Failure>, maximumVersions: Int?
    ) throws(Failure) {
        let opened = Self.open(storage, initialValue: initialValue, maximumVersions: maximumVersions)
        if let error = opened.error { try errorMode.handle(error, object as? Root) }
        self.init(opened: opened, keyPath: keyPath, object: object, errorMode: errorMode)
    }

    /// A controller on an opened storage, or — when opening failed — in memory, with the
    /// error in ``error``.
    convenience init(
        opened: (storage: any VersionStorage<Value>, error: ReversionError?),
        keyPath: WritableKeyPath<Root, Value>,
        object: AnyObject?, errorMode: VersioningErrorMode<Root, Failure>
    ) {
        self.init(
            storage: opened.storage, keyPath: keyPath, object: object, errorMode: errorMode,
            openingError: opened.error)
    }

    /// Opens `storage`; when that fails, an in-memory storage at `initialValue` and the error.
    static func open(_ storage: HistoryStorage<Value>, initialValue: Value, maximumVersions: Int?) -> (
        storage: any VersionStorage<Value>, error: ReversionError?
    ) {
        let maximumVersions = VersionHistory<Value>.keptLimit(maximumVersions)
        do {
            return (try storage.open({ initialValue }, maximumVersions), nil)
        } catch {
            return (InMemoryVersionStorage(initialValue, maximumVersions: maximumVersions), error)
        }
    }

    /// The default ``maximumVersions``: 1,000.
    public static var defaultMaximumVersions: Int { 1_000 }

    // MARK: - Creating a controller

    /// Tracks `value` directly, in memory; errors are thrown.
    ///
    /// - Parameters:
    ///   - value: The first version.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    public convenience init(_ value: Value, maximumVersions: Int? = defaultMaximumVersions)
    where Root == Value, Failure == ReversionError {
        self.init(
            storage: InMemoryVersionStorage(value, maximumVersions: maximumVersions), keyPath: \.self,
            object: nil, errorMode: .throwing)
    }

    /// Tracks `value` directly, in memory, reporting errors as `errorMode` says.
    ///
    /// - Parameters:
    ///   - value: The first version.
    ///   - errorMode: `.throwing` or ``VersioningErrorMode/assignToController``.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    public convenience init(
        _ value: Value, errorMode: VersioningErrorMode<Root, Failure>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Root == Value {
        self.init(
            storage: InMemoryVersionStorage(value, maximumVersions: maximumVersions), keyPath: \.self,
            object: nil, errorMode: errorMode)
    }

    /// Tracks a value directly, keeping its versions in `storage`.
    ///
    /// With a durable storage, an existing history is opened where it was left (``value`` is
    /// then the stored current version, not `initialValue`); a new one starts at
    /// `initialValue`.
    ///
    /// ```swift
    /// let controller = try VersioningController(Note(), storage: .keepsake(store, history: "note-1"))
    /// var note = controller.value
    /// ```
    ///
    /// - Parameters:
    ///   - initialValue: The first version of a new history.
    ///   - storage: Where the versions are kept.
    ///   - errorMode: How errors are reported, opening errors included; in an assigning mode a
    ///     storage that fails to open leaves the controller in memory, with the error in ``error``
    ///     and ``openingError``.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    /// - Throws: What the error mode throws when the storage cannot be opened.
    public convenience init(
        _ initialValue: Value, storage: HistoryStorage<Value>, errorMode: VersioningErrorMode<Root, Failure>,
        maximumVersions: Int? = defaultMaximumVersions
    ) throws(Failure) where Root == Value {
        try self.init(
            opening: storage, initialValue: initialValue, keyPath: \.self, object: nil, errorMode: errorMode,
            maximumVersions: maximumVersions)
    }

    /// Tracks a value directly, keeping its versions in `storage`; errors are thrown.
    ///
    /// - Parameters:
    ///   - initialValue: The first version of a new history.
    ///   - storage: Where the versions are kept.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    /// - Throws: ``ReversionError/storage(_:)`` when the storage cannot be opened.
    public convenience init(
        _ initialValue: Value, storage: HistoryStorage<Value>, maximumVersions: Int? = defaultMaximumVersions
    ) throws(ReversionError) where Root == Value, Failure == ReversionError {
        try self.init(initialValue, storage: storage, errorMode: .throwing, maximumVersions: maximumVersions)
    }

    /// Tracks the property at `keyPath` of a value root, in memory; errors are thrown.
    ///
    /// - Parameters:
    ///   - root: The root holding the first version.
    ///   - keyPath: The tracked property.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Failure == ReversionError {
        self.init(
            storage: InMemoryVersionStorage(root[keyPath: keyPath], maximumVersions: maximumVersions),
            keyPath: keyPath, object: nil, errorMode: .throwing)
    }

    /// Tracks the property at `keyPath` of an object, held weakly; the object is read by
    /// ``appendCurrentVersion(tag:)`` and written by ``undo()`` and ``redo()``.
    ///
    /// - Parameters:
    ///   - root: The object holding the first version.
    ///   - keyPath: The tracked property.
    ///   - errorMode: How errors are reported.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>,
        errorMode: VersioningErrorMode<Root, Failure>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Root: AnyObject {
        self.init(
            storage: InMemoryVersionStorage(root[keyPath: keyPath], maximumVersions: maximumVersions),
            keyPath: keyPath, object: root, errorMode: errorMode)
    }

    /// Tracks the property at `keyPath` of an object, held weakly; errors are thrown.
    ///
    /// - Parameters:
    ///   - root: The object holding the first version.
    ///   - keyPath: The tracked property.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>,
        maximumVersions: Int? = defaultMaximumVersions
    ) where Root: AnyObject, Failure == ReversionError {
        self.init(on: root, at: keyPath, errorMode: .throwing, maximumVersions: maximumVersions)
    }

    /// Tracks the property at `keyPath` of an object, held weakly, keeping its versions in
    /// `storage`. The object's property is set to the stored current version when an existing
    /// history is opened.
    ///
    /// - Parameters:
    ///   - root: The object; its property is the first version of a new history.
    ///   - keyPath: The tracked property.
    ///   - storage: Where the versions are kept.
    ///   - errorMode: How errors are reported, opening errors included.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    /// - Throws: What the error mode throws when the storage cannot be opened.
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>, storage: HistoryStorage<Value>,
        errorMode: VersioningErrorMode<Root, Failure>, maximumVersions: Int? = defaultMaximumVersions
    ) throws(Failure) where Root: AnyObject {
        try self.init(
            opening: storage, initialValue: root[keyPath: keyPath], keyPath: keyPath, object: root,
            errorMode: errorMode, maximumVersions: maximumVersions)
        writeRootIfChanged()
    }

    /// Tracks the property at `keyPath` of an object, held weakly, keeping its versions in
    /// `storage`; errors are thrown.
    ///
    /// - Parameters:
    ///   - root: The object; its property is the first version of a new history.
    ///   - keyPath: The tracked property.
    ///   - storage: Where the versions are kept.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo).
    /// - Throws: ``ReversionError/storage(_:)`` when the storage cannot be opened.
    public convenience init(
        on root: Root, at keyPath: WritableKeyPath<Root, Value>, storage: HistoryStorage<Value>,
        maximumVersions: Int? = defaultMaximumVersions
    ) throws(ReversionError) where Root: AnyObject, Failure == ReversionError {
        try self.init(
            on: root, at: keyPath, storage: storage, errorMode: .throwing, maximumVersions: maximumVersions)
    }

    // MARK: - State

    /// The current version, including a change held back by debouncing, or one the storage
    /// refused where no caller received the error (see ``append(_:tag:)``).
    public var value: Value {
        registrar.access(self, keyPath: observed.value)
        if hasUnrecorded, let unrecorded { return unrecorded }
        return heldOrCurrent
    }

    /// The change held back by debouncing, or else the current version: what the next edit is
    /// made on, but for one whose recording failed (``unrecorded``).
    var heldOrCurrent: Value { debouncer?.pending ?? storage.current }

    /// Whether ``undo()`` has a version to go back to in the current scope, counting a pending
    /// debounced change, and one the storage refused where no caller received the error.
    public var hasUndo: Bool {
        registrar.access(self, keyPath: observed.hasUndo)
        return storage.undoCount > 0 || debouncer?.isHolding == true || hasUnrecorded
    }

    /// Whether ``redo()`` has a version to go forward to in the current scope.
    public var hasRedo: Bool {
        registrar.access(self, keyPath: observed.hasRedo)
        return storage.redoCount > 0 && debouncer?.isHolding != true && !hasUnrecorded
    }

    /// The 0-based level of the current scope.
    public var scopeLevel: Int {
        registrar.access(self, keyPath: observed.scopeLevel)
        return storage.scopeLevel
    }

    /// The number of versions kept, undo and redo, in every scope.
    public var versionCount: Int {
        registrar.access(self, keyPath: observed.versionCount)
        return storage.versionCount
    }

    /// The latest error that was not thrown: every error in the assigning error modes, and in
    /// the throwing mode those of work with no caller to throw to (a debounced or observed
    /// change recorded later). `nil` after a successful operation.
    public var error: ReversionError? {
        registrar.access(self, keyPath: observed.error)
        return storedError
    }

    /// The most versions kept across all scopes; the oldest are dropped first. `nil` keeps all.
    ///
    /// What is dropped is the root scope's oldest versions, then the current scope's furthest
    /// redo versions; the versions inside an inner scope stay until it is popped (squashed into
    /// one), in memory as on disk. Appends drop them in batches: the history may hold an eighth
    /// more than the limit (1,125 versions under 1,000; none more under a limit below 8)
    /// before an append drops back to it, so that an append past the limit does not move the
    /// whole stack. ``setMaximumVersions(_:)`` drops down to the new limit at once.
    ///
    /// A limit of 0 keeps no version besides the current one: nothing to undo or redo, an app's
    /// "no undo" setting. A limit below 0 is kept as 0. (Unlike `UndoManager`'s
    /// `levelsOfUndo`, 0 does not mean "no limit": `nil` does.)
    public var maximumVersions: Int? { storage.maximumVersions }

    /// Changes ``maximumVersions``, dropping the oldest versions over the new limit.
    ///
    /// - Parameter maximumVersions: The new limit, or `nil` for none; 0 or less keeps no
    ///   version besides the current one.
    /// - Throws: ``ReversionError/storage(_:)`` in the throwing mode; the limit is unchanged.
    public func setMaximumVersions(_ maximumVersions: Int?) throws(Failure) {
        try perform { () throws(ReversionError) in
            try recordPending()
            try writingThroughConflicts { () throws(ReversionError) in
                try storage.setMaximumVersions(VersionHistory<Value>.keptLimit(maximumVersions))
                didChange(writingRoot: false)
            }
        }
    }

    /// Checks that every undo step of every scope reverts and every redo step redoes, and that
    /// the storage agrees with itself; for tests.
    ///
    /// A durable history another writer changed since this controller last read it fails the
    /// check, saying so (its memory is not the stored history): call ``refresh()`` first.
    ///
    /// - Throws: ``ReversionError`` describing the first problem.
    public func checkInvariants() throws(ReversionError) {
        try storage.checkInvariants()
    }

    // MARK: - Plumbing shared by every operation

    /// Tells observers that the state changed, and writes the current version into the
    /// reference root when `writingRoot`.
    ///
    /// ``value`` is always announced; ``hasUndo``, ``hasRedo``, ``scopeLevel`` and
    /// ``versionCount`` only when they differ from what the last call found, so that a view
    /// showing an undo button is not invalidated by every edit.
    func didChange(writingRoot: Bool = true) {
        let paths = observed
        let now = AnnouncedStacks(storage, pending: debouncer?.isHolding == true || hasUnrecorded)
        let before = announced
        announced = now
        registrar.willSet(self, keyPath: paths.value)
        if before?.hasUndo != now.hasUndo { registrar.willSet(self, keyPath: paths.hasUndo) }
        if before?.hasRedo != now.hasRedo { registrar.willSet(self, keyPath: paths.hasRedo) }
        if before?.scopeLevel != now.scopeLevel { registrar.willSet(self, keyPath: paths.scopeLevel) }
        if before?.versionCount != now.versionCount { registrar.willSet(self, keyPath: paths.versionCount) }
        if before?.versionCount != now.versionCount { registrar.didSet(self, keyPath: paths.versionCount) }
        if before?.scopeLevel != now.scopeLevel { registrar.didSet(self, keyPath: paths.scopeLevel) }
        if before?.hasRedo != now.hasRedo { registrar.didSet(self, keyPath: paths.hasRedo) }
        if before?.hasUndo != now.hasUndo { registrar.didSet(self, keyPath: paths.hasUndo) }
        registrar.didSet(self, keyPath: paths.value)
        if writingRoot { writeRoot() }
    }

    /// Runs `operation`, reporting a ``ReversionError`` as the error mode says.
    ///
    /// Most operations return nothing and come here: ``performForResult(_:)`` makes a `T?`,
    /// whose type code not specialized for `Value` looks up at run time, every call.
    package func perform(_ operation: () throws(ReversionError) -> Void) throws(Failure) {
        do {
            try operation()
            if storedError != nil { setError(nil) }
        } catch {
            try report(error)
        }
    }

    /// Reports `error` as the error mode says. A function of its own: its `Root?` is a type
    /// that code not specialized for `Root` looks up where the function starts, which every
    /// operation would pay for if this were inlined.
    @inline(never)
    func report(_ error: ReversionError) throws(Failure) {
        if errorMode.assignsToController { setError(error) }
        try errorMode.handle(error, object as? Root)
    }

    /// Runs `operation`, reporting a ``ReversionError`` as the error mode says; returns `nil`
    /// when it failed in an assigning mode.
    @discardableResult
    package func performForResult<T>(_ operation: () throws(ReversionError) -> T) throws(Failure) -> T? {
        var result: T?
        try perform { () throws(ReversionError) in result = try operation() }
        return result
    }

    func setError(_ error: ReversionError?) {
        registrar.withMutation(of: self, keyPath: observed.error) { storedError = error }
    }

    /// Writes the current version into the reference root, if there is one.
    func writeRoot() {
        writeRoot(storage.current)
    }

    /// Writes `value` into the reference root, if there is one.
    func writeRoot(_ value: Value) {
        guard let object, var root = object as? Root else { return }
        root[keyPath: keyPath] = value
    }

    /// Writes the current version (or a change pending since the storage opened) into the
    /// reference root when it differs from the root's.
    func writeRootIfChanged() {
        let shown = unrecorded ?? storage.current
        guard let value = readRoot(), shown.reversion(to: value) != nil else { return }
        writeRoot(shown)
    }

    /// Reads the current version from the reference root, if it is still alive.
    func readRoot() -> Value? {
        guard let root = object as? Root else { return nil }
        return root[keyPath: keyPath]
    }
}

/// The stack state a controller last announced to its observers (a type of its own: nested in
/// the generic class, each use would look its metadata up at run time).
struct AnnouncedStacks: Equatable {
    var hasUndo: Bool
    var hasRedo: Bool
    var scopeLevel: Int
    var versionCount: Int

    /// The state of `storage`'s stacks, with a change held back by debouncing or not.
    init<Value>(_ storage: any VersionStorage<Value>, pending: Bool) {
        hasUndo = storage.undoCount > 0 || pending
        hasRedo = storage.redoCount > 0 && !pending
        scopeLevel = storage.scopeLevel
        versionCount = storage.versionCount
    }
}
