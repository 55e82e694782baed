public import Revertible

/// A ``VersioningController`` whose versions live in a ``KeepsakeStore`` and whose errors are
/// ``KeepsakeError``s: the durable history of one value, opened with
/// ``KeepsakeStore/history(_:of:initialValue:maximumVersions:)``.
///
/// ```swift
/// let store = try KeepsakeStore(path: "Notes.keepsake")
/// let history = try store.history("note-42", initialValue: Note(title: "", body: "", tags: []))
/// var note = history.value            // the value as the last process left it
/// note.title = "Groceries"
/// try history.append(note)            // a few small rows, never the whole value
/// note = try history.undo()           // also works on the versions of earlier processes
/// ```
///
/// It is the same controller as in memory — tags, scopes, transactions, debouncing,
/// observation — so everything the controller's documentation says holds here too.
public typealias KeepsakeHistory<Value: Versionable & Codable & SendableMetatype> = VersioningController<
    Value, Value, KeepsakeError
>

extension KeepsakeStore {
    /// Opens the durable history called `name`, creating it with `initialValue` if the store
    /// has none by that name.
    ///
    /// Opening reads the newest checkpoint and the changes after it, never the whole past. A
    /// change `Value` can no longer read (the app changed its model after a run that did not
    /// close the history) is replayed on the checkpoint's stored JSON, and the result decoded
    /// as `Value`; see <doc:ChangingYourModel>.
    ///
    /// A change held back by debouncing when the last process stopped (it quit without
    /// `close()`, or was killed) is recorded as a version by the open. On a disk with no room
    /// for it, or with the store kept locked by another writer past the busy timeout, the
    /// history still opens, and the change stays pending, as an edit whose write failed does:
    /// ``VersioningController/value`` shows it, ``VersioningController/error`` says why, and
    /// the next operation that can write records it.
    ///
    /// - Parameters:
    ///   - name: The history's name, such as a document id; any string. Names compare as
    ///     Swift strings do: `"Café"` with a composed `é` opens the history created as `"Café"`
    ///     with `e` and a combining accent (as file names on some disks spell it). A new
    ///     history's name is stored composed (NFC).
    ///   - type: The value type (inferred from `initialValue`).
    ///   - initialValue: The first version of a new history; not evaluated for an existing one.
    ///   - maximumVersions: The most versions kept (default 1,000); `nil` keeps all, 0 or less
    ///     none (no undo). Stored with the history; passing a different value changes it.
    /// - Returns: The history, at the version the last writer left it.
    /// - Throws: ``KeepsakeError``; `.reversion` or `.undecodableValue` when stored data no longer
    ///   decodes as `Value`.
    public func history<Value: Versionable & Codable & SendableMetatype>(
        _ name: String, of type: Value.Type = Value.self, initialValue: @autoclosure () -> Value,
        maximumVersions: Int? = 1_000
    ) throws(KeepsakeError) -> KeepsakeHistory<Value> {
        do {
            let storage = try KeepsakeHistoryStorage(
                store: self, name: name, initialValue: initialValue, maximumVersions: maximumVersions)
            return KeepsakeHistory(storage: storage, keyPath: \.self, object: nil, errorMode: .throwing)
        } catch {
            throw error.naming(history: name)
        }
    }
}

extension HistoryStorage where Value: Codable & SendableMetatype {
    /// The history called `name` in `store`, created at the controller's first value when the
    /// store has none by that name.
    ///
    /// ```swift
    /// let store = try KeepsakeStore(path: "Drawings.keepsake")
    /// let undo = try VersioningController(
    ///     observing: model, at: \.drawing, storage: .keepsake(store, history: "drawing-1"))
    /// ```
    ///
    /// - Parameters:
    ///   - store: The store.
    ///   - name: The history's name, such as a document id.
    /// - Returns: A storage whose opening errors reach the controller's error mode as
    ///   ``ReversionError/storage(_:)`` carrying a ``KeepsakeError``.
    public static func keepsake(_ store: KeepsakeStore, history name: String) -> Self {
        Self { initialValue, maximumVersions throws(ReversionError) in
            do throws(KeepsakeError) {
                return try KeepsakeHistoryStorage(
                    store: store, name: name, initialValue: initialValue, maximumVersions: maximumVersions)
            } catch {
                throw .storage(StorageFailure(error.naming(history: name)))
            }
        }
    }

    /// The history called `name` in the store at `path`, which is opened (or created) with the
    /// controller: a failure to open the file goes to the controller's error mode too, which is
    /// what a property wrapper needs.
    ///
    /// ```swift
    /// @Versioned(storage: .keepsake(path: "Editor.keepsake", history: "title"))
    /// var title = "Untitled"
    /// ```
    ///
    /// Each controller made with it opens a store of its own: three SQLite connections and
    /// about four file descriptors, each with its page cache. For several histories in one
    /// file, open one ``KeepsakeStore`` and pass ``keepsake(_:history:)`` to each controller
    /// (with ten properties of one file, the process held 50 file descriptors instead of 14,
    /// and appends were about a fifth slower than with one store shared).
    ///
    /// - Parameters:
    ///   - path: The store file.
    ///   - name: The history's name.
    ///   - options: How the store is opened.
    /// - Returns: A storage whose opening errors reach the controller's error mode.
    public static func keepsake(
        path: String, history name: String, options: KeepsakeStore.Options = KeepsakeStore.Options()
    ) -> Self {
        Self { initialValue, maximumVersions throws(ReversionError) in
            do throws(KeepsakeError) {
                let store = try KeepsakeStore(path: path, options: options)
                return try KeepsakeHistoryStorage(
                    store: store, name: name, initialValue: initialValue, maximumVersions: maximumVersions)
            } catch {
                throw .storage(StorageFailure(error.naming(history: name)))
            }
        }
    }
}

extension VersioningErrorMode where Failure == KeepsakeError {
    /// Operations throw ``KeepsakeError``: a storage failure as itself, any other error as
    /// ``KeepsakeError/reversion(history:version:error:)``. ``KeepsakeHistory`` uses it.
    public static var throwing: Self { .throwing(KeepsakeError.init) }
}

extension KeepsakeError {
    /// The Keepsake error behind a controller's error: the storage's own, or the reversion
    /// error itself, wrapped.
    ///
    /// - Parameter error: An error of a ``VersioningController``.
    public init(_ error: ReversionError) {
        if case .storage(let failure) = error, let stored = failure.error as? KeepsakeError {
            self = stored
        } else {
            self = .reversion(history: "", version: nil, error: error)
        }
    }
}

extension ReversionError {
    /// The ``KeepsakeError`` of a durable storage's failure, or `nil` for any other error.
    public var keepsakeError: KeepsakeError? {
        guard case .storage(let failure) = self else { return nil }
        return failure.error as? KeepsakeError
    }
}

extension VersioningController where Value: Codable & SendableMetatype {
    /// The durable storage, when the versions live in a ``KeepsakeStore``.
    public var durableStorage: KeepsakeHistoryStorage<Value>? {
        storage as? KeepsakeHistoryStorage<Value>
    }

    /// Stores the current value whole, so that reopening the history replays no change; does
    /// nothing when the versions are kept in memory.
    ///
    /// Keepsake writes checkpoints by itself (every 1,024 versions, or when the changes since
    /// the last one outweigh it); call this when closing a document that will be reopened
    /// often, or before changing the value type.
    ///
    /// Where the stored values hold what the model does not read (a later release of the app
    /// wrote properties this one lacks), the checkpoint is the stored JSON the changes reach,
    /// which keeps them, or none when that JSON and the model disagree on the value, or when a
    /// later release changed a range within a longer value its defaults filled, which that JSON
    /// does not hold (see <doc:ChangingYourModel>).
    ///
    /// - Throws: ``ReversionError/storage(_:)`` in the throwing mode.
    public func writeCheckpoint() throws(Failure) {
        try perform { () throws(ReversionError) in
            try recordPending()
            guard let durableStorage else { return }
            try writingThroughConflicts { () throws(ReversionError) in
                try durableStorage.durably { () throws(KeepsakeError) in
                    try durableStorage.writeCheckpoint()
                }
            }
        }
    }
}
