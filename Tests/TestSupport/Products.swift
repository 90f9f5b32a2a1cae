import CTableSupport
import Foundation

/// The package's executables, built next to the running test binary.
public enum Products {
    /// The build directory: the nearest ancestor of the test binary that holds `imagetable`.
    public static let directory: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" && !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("imagetable").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }()

    /// The CLI.
    public static var imagetable: String { directory + "/imagetable" }
    /// The pixel worker the CLI starts.
    public static var worker: String { directory + "/imagetable-worker" }
    /// The core tests' child process (kill, two-process and full-disk tests).
    public static var fixture: String { directory + "/ImageTableFixture" }
}

/// The shared test images: the repository's parent directory + `shared/corpus` (PngSuite and
/// photos with every EXIF orientation; see its README). Read in place, never copied in.
public enum Corpus {
    /// The corpus directory.
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // Corpus file, TestSupport, Tests, repository
        return url.appendingPathComponent("shared/corpus").path
    }()

    /// A photo by name, such as `Landscape_6` (orientation 6); `.jpg` is added when missing.
    ///
    /// - Parameter name: the photo's name.
    public static func photo(_ name: String) -> String {
        "\(root)/photos/\(name)" + (name.hasSuffix(".jpg") ? "" : ".jpg")
    }

    /// The PngSuite directory.
    public static var pngSuiteDirectory: String { "\(root)/pngsuite/png" }

    /// A PngSuite image by name, such as `basn6a08`; `.png` is added when missing.
    ///
    /// - Parameter name: the image's name.
    public static func png(_ name: String) -> String {
        "\(pngSuiteDirectory)/\(name)" + (name.hasSuffix(".png") ? "" : ".png")
    }

    /// Every PngSuite image, sorted.
    public static var pngSuiteFiles: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: pngSuiteDirectory)) ?? []
        return names.filter { $0.hasSuffix(".png") }.sorted().map { "\(pngSuiteDirectory)/\($0)" }
    }
}

/// The repository the tests were built from: its documents, manifests and scripts.
public enum Checkout {
    /// The repository's root directory.
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // Products.swift, TestSupport, Tests
        return url.path
    }()

    /// A file of the repository, by its path from the root (`docs/CLI.md`).
    ///
    /// - Parameter relativePath: the path from the repository's root.
    public static func file(_ relativePath: String) -> String { root + "/" + relativePath }
}

/// What the running test binary was built with.
public enum Sanitizers {
    /// Whether it runs under AddressSanitizer or ThreadSanitizer (`make sanitize`), as the
    /// worker tells it (`itc_sanitized`): the worker then takes no memory limit, and the
    /// sanitizer's shadow memory, terabytes of address space, is counted in any measure of it.
    public static let any = itc_sanitized() != 0
}
