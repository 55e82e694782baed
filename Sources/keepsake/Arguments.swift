/// A command line split into positional arguments, flags and options, checked against what a
/// command accepts. No package: parsing is this small.
struct Arguments {
    var positionals: [String] = []
    var flags: Set<String> = []
    var options: [String: String] = [:]

    /// - Throws: ``UsageError`` for an unknown flag or option, or an option without a value.
    init(
        _ arguments: some Sequence<String>, flags allowedFlags: Set<String>,
        options allowedOptions: Set<String>
    ) throws {
        var iterator = arguments.makeIterator()
        var onlyPositionals = false
        while let argument = iterator.next() {
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
            } else if argument == "--" {
                onlyPositionals = true
            } else if allowedFlags.contains(argument) {
                flags.insert(argument)
            } else if allowedOptions.contains(argument) {
                guard let value = iterator.next() else { throw UsageError("\(argument) needs a value") }
                options[argument] = value
            } else if let equals = argument.firstIndex(of: "="),
                allowedOptions.contains(String(argument[..<equals]))
            {
                options[String(argument[..<equals])] = String(argument[argument.index(after: equals)...])
            } else {
                throw UsageError("unknown option \(argument)")
            }
        }
    }

    /// The positional arguments, exactly as many as `names`; a usage error names the missing
    /// ones.
    func expect(_ names: String...) throws -> [String] {
        guard positionals.count == names.count else {
            if positionals.count > names.count {
                throw UsageError("unexpected argument \(positionals[names.count])")
            }
            let missing = Array(names[positionals.count...])
            let list =
                missing.count == 1
                ? missing[0] : missing.dropLast().joined(separator: ", ") + " and " + missing.last!
            throw UsageError("missing \(list)")
        }
        return positionals
    }
}

/// A mistake on the command line: exit status 64, with the command's usage.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A failure the tool explains: its message and exit status.
struct ToolFailure: Error {
    let message: String
    let status: Int32
}

/// The exit statuses, as documented in `keepsake --help`.
enum ExitStatus {
    static let success: Int32 = 0
    static let verificationFailed: Int32 = 1
    static let notFound: Int32 = 2
    static let usage: Int32 = 64
    static let notAStore: Int32 = 65
    static let cannotOpen: Int32 = 66
    static let failure: Int32 = 70
    /// Standard output could not be written (`EX_IOERR`): a full disk under a redirection.
    static let outputFailed: Int32 = 74
    /// Another process held the store locked for longer than the busy timeout, or changed the
    /// history under this one (`EX_TEMPFAIL`): nothing was written, and running the command
    /// again may succeed.
    static let tryAgain: Int32 = 75
}
