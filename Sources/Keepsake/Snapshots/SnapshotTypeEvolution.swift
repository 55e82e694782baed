/// A type whose snapshots earlier releases of the app saved under other names: the type was
/// renamed, or moved to another module (a Swift package of the app's model, say).
///
/// Snapshots are kept under the type's name (``Caretaker/stableName(of:)``), so after such a
/// change ``Caretaker/restore(_:as:)`` would find none. List the names the type had, and a
/// caretaker looks there when its own name holds no snapshot of the name asked for:
///
/// ```swift
/// // Moved from the app target into the package NotesModel:
/// extension Note: SnapshotTypeEvolution {
///     static let formerTypeNames = ["NotesApp.Note"]
/// }
/// let note = try caretaker.restore("beforeTrip", as: Note.self)  // saved as NotesApp.Note
/// ```
///
/// Restoring, reading a value at a path, deleting, and saving (which refuses a name a former
/// namespace holds unless it replaces it) all look there; a snapshot saved or replaced now goes
/// under today's name. `keepsake snapshots` lists each under the name it was saved under.
public protocol SnapshotTypeEvolution {
    /// The names earlier releases gave this type, as ``Caretaker/stableName(of:)`` wrote them
    /// then (`keepsake snapshots` lists them), looked in after today's name, in this order.
    static var formerTypeNames: [String] { get }
}
