/// Short options written with their value attached, as make and compilers take them: `-j4`,
/// `-ocat.png`, `-o-`.
///
/// ArgumentParser reads a short option's value only as the next argument (`-j 4`) or after `=`
/// (`-j=4`), and refused `-j4` as an unknown option, the form people type from `make -j4`. The
/// two short options that take a value, `-j` (bake) and `-o` (extract, preview), are split into
/// option and value before parsing, up to a `--`, after which every argument is positional.
enum AttachedValues {
    /// The short options that take a value.
    static let options: Set<Character> = ["j", "o"]

    /// `arguments` with each attached value split from its option.
    ///
    /// - Parameter arguments: the command line, without the program's name.
    static func split(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var positional = false
        for argument in arguments {
            positional = positional || argument == "--"
            let letter = argument.dropFirst().first
            guard !positional, argument.count > 2, argument.hasPrefix("-"), !argument.hasPrefix("--"),
                  let letter, options.contains(letter), argument.dropFirst(2).first != "=" else {
                out.append(argument)
                continue
            }
            out += [String(argument.prefix(2)), String(argument.dropFirst(2))]
        }
        return out
    }
}
