/// Short options as each command takes them: values attached as make and compilers take them
/// (`-j4`, `-ocat.png`, `-o-`), and words that begin with one `-` but are no option.
///
/// ArgumentParser reads a short option's value only as the next argument (`-j 4`) or after `=`
/// (`-j=4`), and refused `-j4` as an unknown option, the form people type from `make -j4`. The
/// short options that take a value, `-j` (bake) and `-o` (extract, preview), are split into
/// option and value before parsing, in their own commands only (`verify -old.imagetable` was
/// split into `-o ld.imagetable`, and refused as "Unknown option '-o'", an option the user never
/// typed), and up to a `--`, after which every argument is positional.
enum AttachedValues {
    /// The short options that take a value, by command.
    static let values: [String: Set<Character>] = ["bake": ["j"], "extract": ["o"], "preview": ["o"]]

    /// The short flags, by command; `-h` is every command's.
    static let flags: [String: Set<Character>] = ["extract": ["v"]]

    /// `arguments` with each attached value split from its option.
    ///
    /// - Parameter arguments: the command line, without the program's name.
    static func split(_ arguments: [String]) -> [String] {
        let takesValue = values[command(of: arguments) ?? ""] ?? []
        var out: [String] = []
        var positional = false
        for argument in arguments {
            positional = positional || argument == "--"
            let letter = argument.dropFirst().first
            guard !positional, isShortWord(argument), let letter, takesValue.contains(letter),
                  argument.dropFirst(2).first != "=" else {
                out.append(argument)
                continue
            }
            out += [String(argument.prefix(2)), String(argument.dropFirst(2))]
        }
        return out
    }

    /// The first word before a `--` that begins with one `-` and is neither a cluster of the
    /// command's short flags (`-vh`) nor a value attached to one of its options (`-o=-h.png`,
    /// `-ocat.png`): a path or key that belongs after `--`.
    ///
    /// ArgumentParser read such a word as a cluster of flags: `-hdamaged.imagetable` printed the
    /// help with exit 0 and checked nothing, and `-old.imagetable` was "Missing expected
    /// argument", naming neither the word nor the `--` that takes it.
    ///
    /// - Parameter arguments: the command line, without the program's name, before `split`.
    /// - Parameter longTakesValue: whether a long option of the command takes a value.
    /// - Returns: the word, and the option it follows when that option takes a value (`-o`,
    ///   `--output`): such a value is attached (`-o=-a.png`), not put after `--`.
    static func misplacedPath(in arguments: [String], longTakesValue: (String) -> Bool = { _ in true })
        -> (word: String, valueOf: String?)? {
        let command = command(of: arguments) ?? ""
        let takesValue = values[command] ?? []
        let known = (flags[command] ?? []).union(["h"])
        let words = Array(arguments.prefix(while: { $0 != "--" }))
        guard let index = words.firstIndex(where: { word in
            guard isShortWord(word), let letter = word.dropFirst().first else { return false }
            if takesValue.contains(letter) { return false }
            if word.dropFirst(2).first == "=" { return false }
            // A negative number is a value, refused by its option's own check (`-j -2`,
            // `--shard -1/3`); a word that only begins with a digit is not one
            // (`-2024-photos.imagetable` was read as flags, `-5h.yaml` as `-h`).
            if letter.isNumber, isNegativeNumber(word) { return false }
            return !word.dropFirst().allSatisfy(known.contains)
        }) else { return nil }
        let before = index > 0 ? words[index - 1] : ""
        let short = before.count == 2 && before.first == "-" && before.last.map(takesValue.contains) == true
        // After a flag (`--repair -old.imagetable`) the word is a path, not the flag's value.
        let long = before.count > 2 && before.hasPrefix("--") && !before.contains("=") && longTakesValue(before)
        return (words[index], short || long ? before : nil)
    }

    /// The command a command line names: its first word, or the word after `help`.
    static func command(of arguments: [String]) -> String? {
        arguments.first == "help" ? arguments.dropFirst().first : arguments.first
    }

    /// Whether `word` is a negative number (`-2`, `-1.5`) or a negative shard (`-1/3`).
    static func isNegativeNumber(_ word: String) -> Bool {
        word.wholeMatch(of: /-[0-9]+(\.[0-9]+)?(\/[0-9]+)?/) != nil
    }

    /// Whether `word` is a short option's form with more than one letter after its `-`.
    private static func isShortWord(_ word: String) -> Bool {
        word.count > 2 && word.hasPrefix("-") && !word.hasPrefix("--")
    }
}
