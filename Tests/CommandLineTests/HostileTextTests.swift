import Foundation
import Keepsake
import Testing

/// Text from a store reaches the terminal as escapes: a store is not trusted, and a name that
/// holds escape sequences or a line break would otherwise act on the terminal of whoever
/// inspects it, or forge a line of the output.
@Suite struct HostileTextTests {
    let cli = CommandLineTests()

    struct Doc: Versionable, Equatable, Codable {
        var count = 0
    }

    /// Retitles the terminal, turns the text red, breaks the line, reverses what follows, then
    /// a DEL, a C1 control sequence introducer clearing the screen (a terminal that reads C1
    /// acts on it as on ESC [) and an isolate; the no-break space after them is shown as it is.
    static let name =
        "doc\u{1B}]0;pwned\u{07}\u{1B}[31m\nforged line\u{202E}txt\u{7F}\u{9B}2J\u{2066}\u{A0}end"
    /// The same as the commands show it.
    static let shownName =
        #"doc\u{1B}]0;pwned\u{7}\u{1B}[31m\nforged line\u{202E}txt\u{7F}\u{9B}2J\u{2066}"# + "\u{A0}end"

    /// Every character the terminal would act on rather than show, but the line ends.
    static func actedOn(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter {
            $0 != "\n"
                && ($0.properties.generalCategory == .control || (0x202A...0x202E).contains($0.value)
                    || (0x2066...0x2069).contains($0.value))
        }
    }

    @Test func namesTagsAndSnapshotsFromTheStoreArePrintedAsEscapes() throws {
        let path = cli.path("hostile.keepsake")
        let store = try KeepsakeStore(path: path)
        let history = try store.history(Self.name, initialValue: Doc())
        try history.append(Doc(count: 1))
        try history.tag("tag\u{1B}[2J")
        try Caretaker(store: store).save(Doc(count: 1), as: "snap\u{1B}[2J\tshot")
        let summary = try store.summary()
        store.close()

        let inspect = try cli.run("inspect", path)
        #expect(inspect.status == 0)
        #expect(Self.actedOn(inspect.output) == [])
        #expect(
            inspect.output.split(separator: "\n").map(String.init)[3]
                == "  \(Self.shownName)  \(summary.histories[0].valueType)  versions 1 · undo 1 · redo 0 · "
                + #"scope 0 · tags: tag\u{1B}[2J"#)
        #expect(inspect.output.contains(#"  snap\u{1B}[2J\tshot  "#))

        let log = try cli.run("log", path, Self.name)
        #expect(log.status == 0)
        #expect(Self.actedOn(log.output) == [])
        #expect(log.output.split(separator: "\n").count == 3)
        // The tag's column keeps its width: the paths start where the header says.
        let lines = log.output.split(separator: "\n").map(String.init)
        #expect(lines[2].hasSuffix(#"applied  tag\u{1B}[2J count"#))
        #expect(
            lines[2].firstRange(of: "count")?.lowerBound.utf16Offset(in: lines[2])
                == lines[0].firstRange(of: "changed paths")?.lowerBound.utf16Offset(in: lines[0]))

        let snapshots = try cli.run("snapshots", path)
        #expect(Self.actedOn(snapshots.output) == [])
        #expect(snapshots.output.hasPrefix("\(summary.snapshots[0].namespace)  " + #"snap\u{1B}[2J\tshot  "#))

        let show = try cli.run("show", path, Self.name, "1")
        #expect(Self.actedOn(show.output) == [])
        #expect(show.output.hasPrefix("Version 1 of \(Self.shownName): 1 change\n"))

        // Errors too, on standard error: one line.
        let unknown = try cli.run("log", path, "missing")
        #expect(unknown.status == 2)
        #expect(
            unknown.error
                == "keepsake: no history named \"missing\" in \(path); it has \"\(Self.shownName)\".\n")
    }
}
