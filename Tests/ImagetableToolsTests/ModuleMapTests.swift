import Foundation
import Testing

/// The README's module map says what each module may import; the sources must import exactly
/// that, so the map stays true as the code moves (and a module that starts importing libvips,
/// the manifest or the bake where it may not fails here first).
@Suite struct ModuleMapTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path
    /// The system's and the toolchain's modules, which the map does not list.
    static let platform: Set<String> = ["Foundation", "Glibc", "Darwin", "Synchronization", "Dispatch", "libc"]

    /// `module → may import`, from the README table under "## Layout".
    static func map() throws -> [String: Set<String>] {
        let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
        let layout = try #require(readme.range(of: "## Layout")).upperBound
        var rows: [String: Set<String>] = [:]
        for line in readme[layout...].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, !cells[1].contains("/") else { continue }
            let module = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let imports = cells[3].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
            rows[module] = Set(imports.filter { !$0.isEmpty && !platform.contains($0) && $0 != "libc" })
        }
        return rows
    }

    /// The modules each Swift module of `Sources/` imports.
    static func imports(of module: String) throws -> Set<String> {
        let directory = root + "/Sources/" + module
        guard let files = FileManager.default.enumerator(atPath: directory) else { return [] }
        var found: Set<String> = []
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                if let i = words.firstIndex(of: "import"), i + 1 < words.count, words[..<i].allSatisfy({ $0.hasPrefix("@") }) {
                    found.insert(String(words[i + 1]))
                }
            }
        }
        return found.subtracting(platform)
    }

    @Test func everyModuleImportsWhatTheREADMESays() throws {
        let map = try Self.map()
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/Sources").filter { !$0.hasPrefix(".") }
        #expect(Set(modules) == Set(map.keys), "modules in Sources/ and rows of the README's map differ")
        for module in modules.sorted() {
            let imported = try Self.imports(of: module).map { $0 == "ArgumentParser" ? "ArgumentParser" : $0 }
            let allowed = map[module] ?? []
            // C modules (module maps) import nothing in Swift; their row names the C library.
            let swiftFiles = FileManager.default.enumerator(atPath: Self.root + "/Sources/" + module)?.allObjects
                .compactMap { $0 as? String }.contains { $0.hasSuffix(".swift") } ?? false
            guard swiftFiles else { continue }
            #expect(Set(imported) == allowed, "\(module) imports \(Set(imported).sorted()), the README says \(allowed.sorted())")
        }
    }
}
