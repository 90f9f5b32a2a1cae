import Foundation
import ImageTableCore
import TestSupport
import Testing

/// `imagetable extract`: PNGs whose decoded pixels are the entries', for every style; file names
/// that stay inside --all's directory; exit codes.
struct ExtractTests {
    @Test(arguments: PixelStyle.allCases)
    func roundTripsThePixelsOfEveryStyle(style: PixelStyle) throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: style, width: 13, height: 5, keys: ["one.jpg", "dir/two.png"])
        for entry in table.entries {
            let output = scratch.file("\(style.rawValue)-\(entry.key.replacingOccurrences(of: "/", with: "_")).png")
            let run = try imagetable("extract", table.path, entry.key, "-o", output)
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
            let kind = ["32BitBGRA": "RGBA", "32BitBGR": "RGB", "16BitBGR": "RGB", "8BitGrayscale": "grey"][style.rawValue]!
            #expect(run.stdout == "\(output): key '\(entry.key)', 13x5 \(kind) PNG\n")
            let png = try DecodedPNG(path: output)
            #expect(png.width == 13 && png.height == 5 && png.bitDepth == 8)
            #expect(png.colourType == [PixelStyle.bgra32: 6, .bgr32: 2, .bgr16: 2, .grayscale8: 0][style])
            #expect(png.pixels == expectedPNGPixels(entry.pixels, style: style, width: 13, height: 5))
            // Opaque styles lose nothing: the PNG packs back into the very bytes stored.
            #expect(style == .bgra32 || repacked(png, style: style) == entry.pixels)
        }
    }

    /// PNG pixels packed back into `style` as the pipeline packs them.
    private func repacked(_ png: DecodedPNG, style: PixelStyle) -> [UInt8] {
        var out: [UInt8] = []
        for p in 0..<(png.width * png.height) {
            let c = png.pixel(p % png.width, p / png.width)
            switch style {
            case .bgr32: out += [c[2], c[1], c[0], 0xFF]
            case .bgr16:
                func five(_ v: UInt8) -> UInt16 { (UInt16(v) * 31 + 127) / 255 }
                let v = five(c[0]) << 10 | five(c[1]) << 5 | five(c[2])
                out += [UInt8(v & 0xFF), UInt8(v >> 8)]
            case .grayscale8: out += [c[0]]
            case .bgra32: break
            }
        }
        return out
    }

    @Test func contentWritesOnlyTheContentRectangle() throws {
        let scratch = try TemporaryDirectory()
        let rect = PixelRect(x: 2, y: 1, width: 6, height: 3)
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgr32, width: 10, height: 6, keys: ["k"], contentRects: ["k": rect])
        let run = try imagetable("extract", table.path, "k", "--content", "-o", scratch.file("k.png"))
        #expect(run.status == 0 && run.stdout == "\(scratch.file("k.png")): key 'k', 6x3 RGB PNG\n")
        let png = try DecodedPNG(path: scratch.file("k.png"))
        #expect(png.width == 6 && png.height == 3)
        #expect(png.pixels == expectedPNGPixels(table.entries[0].pixels, style: .bgr32, width: 10, height: 6, region: rect))
    }

    @Test func dashWritesThePNGToStandardOutput() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, keys: ["k"])
        let run = try imagetable("extract", table.path, "k", "-o", "-")
        #expect(run.status == 0)
        let png = try DecodedPNG(data: run.output)
        #expect(png.pixels == table.entries[0].pixels)
    }

    @Test func allWritesEveryEntryUnderItsKeyAndNothingOutsideTheDirectory() throws {
        let scratch = try TemporaryDirectory()
        let keys = ["photos/cat.jpg", "../up.jpg", "/abs/x.jpg", "a/b.jpg", "a//b.jpg", "100%.jpg", "tab\there.jpg", "", "./dot.jpg", "..", "a/../../b"]
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 4, height: 3, capacity: 16, keys: keys)
        let out = scratch.file("out/nested")
        let run = try imagetable("extract", table.path, "--all", out)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "\(table.path): wrote 11 entries as PNG files to \(out)\n")
        #expect(filesBelow(out) == [
            "photos/cat.jpg.png", "%2E%2E/up.jpg.png", "abs/x.jpg.png", "a/b.jpg.png", "a/b.jpg~slot4.png", "100%25.jpg.png",
            "tab%09here.jpg.png", "%EMPTY.png", "dot.jpg.png", "%2E%2E.png", "a/%2E%2E/%2E%2E/b.png",
        ])
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: scratch.path)) == ["t.imagetable", "t.imagetable.lock", "out"])
        #expect(run.stderr.contains("\(out)/%2E%2E/up.jpg.png: note: written for the key '../up.jpg', renamed to stay inside \(out)"))
        // A key that never pointed outside is not said to: its characters were encoded.
        #expect(run.stderr.contains("\(out)/100%25.jpg.png: note: written for the key '100%.jpg', renamed with '%', '\\' and control "
                                    + "characters percent-encoded\n"), "\(run.stderr)")
        #expect(!run.stderr.contains("photos/cat.jpg.png"))
        for (key, path) in [("photos/cat.jpg", "photos/cat.jpg.png"), ("a//b.jpg", "a/b.jpg~slot4.png"), ("", "%EMPTY.png")] {
            let entry = try #require(table.entries.first { $0.key == key })
            #expect(try DecodedPNG(path: out + "/" + path).pixels == expectedPNGPixels(entry.pixels, style: .bgra32, width: 4, height: 3))
        }
    }

    /// Every entry gets a file of its own, whatever the keys: a key that is already another's
    /// disambiguated name (`a/b~slot3.png`), and names that differ only in case (one file on a
    /// file system that folds case). One entry used to overwrite another's PNG, reported written.
    /// A damaged record the listing skips is a warning, and an entry neither could give: exit 1
    /// (it was 0, where preview's exit status says 0 is a sheet with every entry shown).
    @Test func allWritesOneFilePerEntryWhateverTheNames() throws {
        let scratch = try TemporaryDirectory()
        let keys = ["a/b~slot3", "x", "a/b", "a//b", "Case.jpg", "case.jpg"]
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgra32, width: 4, height: 3, capacity: 8, keys: keys)
        let out = scratch.file("out")
        let run = try imagetable("extract", table.path, "--all", out)
        #expect(run.status == 0 && run.stdout == "\(table.path): wrote 6 entries as PNG files to \(out)\n", "\(run.stdout)")
        let files = filesBelow(out)
        #expect(files.count == 6 && Set(files.map { $0.lowercased() }).count == 6, "\(files)")
        // Each rename says why: a name another key has, or one that differs only in case (on
        // Linux too, where the two files could coexist; the note said another key needed it).
        #expect(run.stderr.contains(": note: written for the key 'a//b', renamed since another key needs its name\n"), "\(run.stderr)")
        #expect(run.stderr.contains("\(out)/case.jpg~slot5.png: note: written for the key 'case.jpg', renamed since another key needs a name "
                                    + "that differs from its own only in case, which a file system that ignores case (macOS's, Windows') "
                                    + "takes for the same\n"), "\(run.stderr)")
        for entry in table.entries {
            let file = try #require(files.first { path in
                (try? DecodedPNG(path: out + "/" + path).pixels) == expectedPNGPixels(entry.pixels, style: .bgra32, width: 4, height: 3)
            }, "no file holds \(entry.key)'s pixels")
            _ = file
        }
        let layout = try table.descriptor.layout()
        try flipByte(in: table.path, at: layout.recordOffset(1) + 100)
        let damaged = try imagetable("extract", table.path, "--all", scratch.file("out2"))
        #expect(damaged.status == 1 && damaged.stderr.contains("[damaged-record]")
                && damaged.stdout.hasSuffix("wrote 5 entries as PNG files to \(scratch.file("out2")); 1 damaged, skipped\n"), "\(damaged.stdout)")
        let preview = try imagetable("preview", table.path, "-o", scratch.file("sheet.png"))
        #expect(preview.status == 1 && preview.stderr.contains("[damaged-record]") && preview.stdout.contains("5 entries"),
                "\(preview.stdout)\(preview.stderr)")
    }

    /// A short option's value may be attached, as make and compilers take it: `-ofile`, `-o-`
    /// (and `bake -j4`); ArgumentParser alone refused them as unknown options (64).
    @Test func anAttachedValueIsTheOptionsValue() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["a"])
        let output = scratch.file("a.png")
        let attached = try imagetable("extract", table.path, "a", "-o" + output)
        #expect(attached.status == 0 && FileManager.default.fileExists(atPath: output), "\(attached.stderr)")
        let stdout = try imagetable("extract", table.path, "a", "-o-")
        #expect(stdout.status == 0 && stdout.output.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(stdout.stderr)")
        // Parsed (the manifest is then missing: 1, not bad usage).
        let jobs = try imagetable("bake", "-j4", scratch.file("missing.yaml"))
        #expect(jobs.status == 1 && jobs.stderr.contains("missing.yaml"), "\(jobs.stderr)")
        #expect(try imagetable("bake", "-jx", scratch.file("missing.yaml")).status == 64)
    }

    /// A key whose file name another key needs as a directory (`x.jpg` → `x.jpg.png`, and
    /// `x.jpg.png/y.jpg`), in either slot order: the file yields and takes `~slotN`, where the
    /// second to be written failed.
    @Test(arguments: [["x.jpg", "X.JPG.png/y.jpg"], ["x.jpg.png/y.jpg", "x.jpg"]])
    func aFileYieldsToADirectoryOfItsName(keys: [String]) throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: keys)
        let out = scratch.file("out")
        let run = try imagetable("extract", table.path, "--all", out)
        #expect(run.status == 0 && run.stdout == "\(table.path): wrote 2 entries as PNG files to \(out)\n", "\(run.stderr)")
        let fileSlot = keys.firstIndex(of: "x.jpg")!
        let directory = keys[1 - fileSlot].split(separator: "/")[0]
        #expect(filesBelow(out).sorted() == ["\(directory)/y.jpg.png", "x.jpg~slot\(fileSlot).png"], "\(filesBelow(out))")
        // `X.JPG.png/` beside `x.jpg.png`: only case tells them apart, which the note says.
        let why = directory == "x.jpg.png" ? "another key needs its name"
            : "another key needs a name that differs from its own only in case, which a file system that ignores case (macOS's, Windows') takes for the same"
        #expect(run.stderr == "\(out)/x.jpg~slot\(fileSlot).png: note: written for the key 'x.jpg', renamed since \(why)\n", "\(run.stderr)")
    }

    /// Renaming one key never displaces another: `x.jpg`, renamed for a directory, would have
    /// taken `x.jpg~slot0.png`, the plain name of the key `x.jpg~slot0`, which was then renamed
    /// in turn (from a review). Plain names are given first.
    @Test func aRenamedKeyDisplacesNoOther() throws {
        let scratch = try TemporaryDirectory()
        let keys = ["x.jpg", "x.jpg.png/y.jpg", "x.jpg~slot0"]
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: keys)
        let out = scratch.file("out")
        let run = try imagetable("extract", table.path, "--all", out)
        #expect(run.status == 0 && run.stderr == "\(out)/x.jpg~slot0-2.png: note: written for the key 'x.jpg', renamed since another key needs its name\n",
                "\(run.stderr)")
        #expect(filesBelow(out).sorted() == ["x.jpg.png/y.jpg.png", "x.jpg~slot0-2.png", "x.jpg~slot0.png"], "\(filesBelow(out))")
        let own = try DecodedPNG(path: out + "/x.jpg~slot0.png").pixels
        #expect(own == expectedPNGPixels(table.entries[2].pixels, style: .grayscale8, width: 4, height: 2), "the key's own pixels")
    }

    @Test func symbolicLinksInsideTheDirectoryAreNotFollowed() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, keys: ["abs/x.jpg", "y.jpg"])
        let out = scratch.file("out"), elsewhere = scratch.file("elsewhere")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: out + "/abs", withDestinationPath: elsewhere)
        let run = try imagetable("extract", table.path, "--all", out)
        #expect(run.status == 1)
        #expect(run.stderr.contains("\(out)/abs: error: a file or symbolic link is in the way of the directory [output-failed]"))
        #expect(run.stdout == "\(table.path): wrote 1 entry as PNG files to \(out); 1 failed\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        #expect(FileManager.default.fileExists(atPath: out + "/y.jpg.png"))
    }

    @Test func outputFilesGetTheTablesProtection() throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.file("private.imagetable")
        let descriptor = TableFormat(name: "p", width: 2, height: 2, style: .grayscale8, capacity: 2, protection: .complete)
        let table = try ImageTableWriter(path: path, format: descriptor, options: .init(durability: .processCrashOnly))
        try [UInt8](repeating: 9, count: 4).withUnsafeBytes { _ = try table.write(key: "k", sourceUUID: UUID(), pixels: $0, bytesPerRow: 2) }
        table.close()
        #expect(try imagetable("extract", path, "k", "-o", scratch.file("k.png")).status == 0)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: scratch.file("k.png"))[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0)
    }

    @Test func anEntryFailingItsChecksumIsWrittenWithAWarning() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["k"])
        try flipByte(in: table.path, at: try table.descriptor.layout().slotOffset(0) + 1)
        let run = try imagetable("extract", table.path, "k", "-o", scratch.file("k.png"))
        #expect(run.status == 0)
        #expect(run.stderr == "\(table.path): warning: slot 0 ('k'): the pixels do not match their checksum; extracted as they are "
                + "(run imagetable verify) [pixel-checksum-mismatch]\n")
        var flipped = table.entries[0].pixels
        flipped[1] ^= 1
        #expect(try DecodedPNG(path: scratch.file("k.png")).pixels == flipped)
    }

    /// An interrupted write holds no key yet, so a key that is missing may have been it: the
    /// error says so and to bake again, where it only said that `inspect` lists the keys.
    @Test func aMissingKeyNamesTheWritesAStoppedBakeLeft() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["a", "k"])
        // An odd generation: a write a killed writer left.
        try flipByte(in: table.path, at: try table.descriptor.layout().recordOffset(1))
        let run = try imagetable("extract", table.path, "k", "-o", scratch.file("k.png"))
        #expect(run.status == 1)
        #expect(run.stderr == "\(table.path): error: no entry has the key 'k'; the table has 1 write that a stopped bake left "
                + "unfinished (`imagetable verify` lists them), which may have been it: bake again [no-such-key]\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("k.png")))
    }

    /// A key whose record the table holds but does not serve (its slot cut off by a partial
    /// copy) was "no entry has the key", with a guess at another key: now the damage, by slot.
    @Test func aKeyWhoseEntryIsDamagedSaysSoNotMissing() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["a", "k"])
        #expect(truncate(table.path, off_t(try table.descriptor.layout().slotOffset(1))) == 0)
        let run = try imagetable("extract", table.path, "k", "-o", scratch.file("k.png"))
        #expect(run.status == 1 && run.stderr == "\(table.path): error: the entry for 'k' is not served (slot 1: slot lies beyond the end of "
                + "the file); `imagetable verify` lists the damage, and a bake renders the entry again [damaged-record]\n", "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("k.png")))
    }

    /// A mistyped key said only that `inspect` lists the keys: the key meant is suggested, for a
    /// typo, a difference of case, or a key given without its directory; a key like none of
    /// them gets no guess.
    @Test func aMissingKeySuggestsTheKeyMeant() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2,
                                  keys: ["photos/cat.jpg", "photos/dog.jpg", "Bird.png", "caf\u{E9}.jpg"])
        // `cat.jpg` is a typo away from `café.jpg`, and is `photos/cat.jpg` without its directory.
        for (asked, meant) in [("photos/cta.jpg", "photos/cat.jpg"), ("bird.png", "Bird.png"), ("dog.jpg", "photos/dog.jpg"),
                               ("cat.jpg", "photos/cat.jpg"), ("photos/bird.png", "Bird.png")] {
            let run = try imagetable("extract", table.path, asked, "-o", scratch.file("x.png"))
            #expect(run.status == 1 && run.stderr == "\(table.path): error: no entry has the key '\(asked)'; did you mean '\(meant)'? "
                    + "(`imagetable inspect` lists the keys) [no-such-key]\n", "\(run.stderr)")
        }
        // A key asked with its directory: a typo in the name, not another directory's file.
        let other = try TestTable(at: scratch.file("o.imagetable"), style: .grayscale8, width: 4, height: 2,
                                  keys: ["old/cat.jpg", "photos/cat.jpeg"])
        let typo = try imagetable("extract", other.path, "photos/cat.jpg", "-o", scratch.file("x.png"))
        #expect(typo.stderr.contains("did you mean 'photos/cat.jpeg'?"), "\(typo.stderr)")
        let unlike = try imagetable("extract", table.path, "fish.gif", "-o", scratch.file("x.png"))
        #expect(unlike.stderr == "\(table.path): error: no entry has the key 'fish.gif'; `imagetable inspect` lists the keys [no-such-key]\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("x.png")))
    }

    /// `-o DIR/` and `-o DIR` (an existing directory) were refused as "is a directory": the PNG
    /// goes into the directory, named as `--all` names the key's last component, as `cp FILE DIR`
    /// does; a path ending in `/` that does not exist is not created.
    @Test func outputToADirectoryWritesTheKeysNameInIt() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["photos/cat.jpg"])
        try FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: false)
        for output in [scratch.file("out") + "/", scratch.file("out")] {
            let run = try imagetable("extract", table.path, "photos/cat.jpg", "-o", output)
            #expect(run.status == 0 && run.stdout == "\(scratch.file("out"))/cat.jpg.png: key 'photos/cat.jpg', 4x2 grey PNG\n",
                    "\(output): \(run.stdout)\(run.stderr)")
            #expect(try DecodedPNG(path: scratch.file("out/cat.jpg.png")).pixels == table.entries[0].pixels)
            try FileManager.default.removeItem(atPath: scratch.file("out/cat.jpg.png"))
        }
        let missing = try imagetable("extract", table.path, "photos/cat.jpg", "-o", scratch.file("none") + "/")
        #expect(missing.status == 1 && missing.stderr.contains("cannot open its directory") && !FileManager.default.fileExists(atPath: scratch.file("none")))
    }

    /// `-o -` on a terminal printed the PNG's bytes there (the `--help` example did): refused, as
    /// `curl` refuses, for `extract` and `preview`; into a pipe it writes as before.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script (util-linux) gives a terminal"))
    func aPNGIsNotWrittenToATerminal() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: ["k"])
        for command in ["extract '\(table.path)' k -o -", "preview '\(table.path)' -o -"] {
            let run = try run("/usr/bin/script", ["-qec", "'\(Products.imagetable)' \(command)", "/dev/null"])
            #expect(run.status == 1 && run.stdout.hasPrefix("<stdout>: error: standard output is a terminal, which a PNG would garble; ")
                    && !run.stdout.contains("PNG\r\n"), "\(command): \(run.status) \(run.stdout)")
        }
    }

    @Test func failuresExitOne() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgr16, keys: ["k"])
        let missingKey = try imagetable("extract", table.path, "nope", "-o", scratch.file("x.png"))
        #expect(missingKey.status == 1)
        #expect(missingKey.stderr == "\(table.path): error: no entry has the key 'nope'; `imagetable inspect` lists the keys [no-such-key]\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("x.png")))

        let missingTable = try imagetable("extract", scratch.file("none.imagetable"), "k", "-o", scratch.file("x.png"))
        #expect(missingTable.status == 1 && missingTable.stderr == "\(scratch.file("none.imagetable")): error: no such file [not-found]\n")

        let noDirectory = try imagetable("extract", table.path, "k", "-o", scratch.file("no/such/dir/x.png"))
        #expect(noDirectory.status == 1 && noDirectory.stderr.contains("cannot open its directory") && noDirectory.stderr.contains("[output-failed]"))

        try Data().write(to: URL(fileURLWithPath: scratch.file("file")))
        let allIntoAFile = try imagetable("extract", table.path, "--all", scratch.file("file"))
        #expect(allIntoAFile.status == 1 && allIntoAFile.stderr.hasPrefix("\(scratch.file("file")): error: cannot create the output directory"))
    }

    /// The PNG is renamed into place, which replaces whatever has the name: `-o` naming the table
    /// replaced the table, and naming a device, a FIFO or a link replaced the node (`/dev/null`,
    /// run as root). Each is refused, and left as it was.
    @Test func refusesToReplaceTheTableOrWhatIsNotARegularFile() throws {
        let scratch = try TemporaryDirectory()
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .bgr16, keys: ["k"])
        let before = try Data(contentsOf: URL(fileURLWithPath: table.path))
        let itself = try imagetable("extract", table.path, "k", "-o", table.path)
        #expect(itself.status == 1 && itself.stderr == "\(table.path): error: is the table being read; refusing to replace it [output-failed]\n",
                "\(itself.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: table.path)) == before)
        // The same file by another path.
        let other = try imagetable("extract", table.path, "k", "-o", scratch.path + "/./t.imagetable")
        #expect(other.status == 1 && other.stderr.contains("is the table being read"))

        #expect(mkfifo(scratch.file("fifo"), 0o644) == 0)
        #expect(symlink(scratch.file("elsewhere.png"), scratch.file("link.png")) == 0)
        for (name, kind) in [("fifo", "a FIFO"), ("link.png", "a symbolic link")] {
            let run = try imagetable("extract", table.path, "k", "-o", scratch.file(name))
            #expect(run.status == 1 && run.stderr == "\(scratch.file(name)): error: is \(kind); refusing to replace it with a file "
                    + "(-o - writes to standard output) [output-failed]\n", "\(run.stderr)")
        }
        var st = stat()
        #expect(lstat(scratch.file("fifo"), &st) == 0 && st.st_mode & S_IFMT == S_IFIFO)
        #expect(lstat(scratch.file("link.png"), &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        // A device: /dev/null is one wherever the test runs, and the refusal comes before any write.
        let device = try imagetable("extract", table.path, "k", "-o", "/dev/null")
        #expect(device.status == 1 && device.stderr.hasPrefix("/dev/null: error: is a device;"), "\(device.stderr)")
        #expect(lstat("/dev/null", &st) == 0 && st.st_mode & S_IFMT == S_IFCHR)
    }

    @Test func badUsageExits64() throws {
        #expect(try imagetable("extract").status == 64)
        #expect(try imagetable("extract", "t.imagetable").status == 64)
        #expect(try imagetable("extract", "t.imagetable", "k").status == 64)
        #expect(try imagetable("extract", "t.imagetable", "-o", "x.png").status == 64)
        #expect(try imagetable("extract", "t.imagetable", "k", "-o", "x.png", "--all", "d").status == 64)
        #expect(try imagetable("extract", "t.imagetable", "k", "--all", "d").status == 64)
        // --verbose is --all's: with -o it was dropped without a word.
        let verbose = try imagetable("extract", "t.imagetable", "k", "-o", "x.png", "-v")
        #expect(verbose.status == 64 && verbose.stderr.hasPrefix("Error: --verbose lists the files --all writes"), "\(verbose.stderr)")
        #expect(try run(Products.worker, ["extract", "--table", "t"]).status == 64)
        #expect(try run(Products.worker, []).status == 64)
        #expect(try run(Products.worker, ["bake", "--bogus"]).status == 64)
        // An empty table path (an unset variable) was `: error: no such file`, naming nothing.
        for arguments in [["verify", ""], ["inspect", "t.imagetable", ""], ["extract", "", "k", "-o", "x.png"], ["preview", "", "-o", "x.png"]] {
            let empty = try run(Products.imagetable, arguments)
            #expect(empty.status == 64 && empty.stderr.hasPrefix("Error: a table's path is empty: name the table file."), "\(arguments): \(empty.stderr)")
        }
        for (arguments, what) in [(["bake", ""], "a manifest's path is empty"), (["validate", "m.yaml", ""], "a manifest's path is empty"),
                                  (["export", "", "--to", "out"], "a manifest's path is empty"),
                                  (["export", "m.yaml", "--output", "", "--to", "out"], "--output must name the directory"),
                                  (["merge", "out", "in", ""], "a directory to merge is named by an empty path")] {
            let empty = try run(Products.imagetable, arguments)
            #expect(empty.status == 64 && empty.stderr.hasPrefix("Error: \(what)"), "\(arguments): \(empty.stderr)")
        }
    }
}

/// Keys whose names begin with a combining mark (U+0301): a slash that the mark follows is one
/// Character with it, so the key `../\u{301}x.jpg` was one component, never rewritten, and
/// written above DIR; and `p/\u{301}b.jpg` was written neither by `--all` nor by `-o`.
@Suite struct ExtractCombiningMarkTests {
    @Test func keysWithALeadingMarkStayInsideAndAreWritten() throws {
        let scratch = try TemporaryDirectory()
        let keys = ["../\u{301}x.jpg", "p/\u{301}b.jpg"]
        let table = try TestTable(at: scratch.file("t.imagetable"), style: .grayscale8, width: 4, height: 2, keys: keys)
        let out = scratch.file("jail/dir")
        let run = try imagetable("extract", table.path, "--all", out)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Set(filesBelow(out).map { Array($0.utf8) }) == Set(["%2E%2E/\u{301}x.jpg.png", "p/\u{301}b.jpg.png"].map { Array($0.utf8) }),
                "\(filesBelow(out))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("jail")) == ["dir"], "nothing beside DIR")
        #expect(run.stderr.contains("renamed to stay inside \(out)"), "\(run.stderr)")
        let into = scratch.file("y")
        try FileManager.default.createDirectory(atPath: into, withIntermediateDirectories: true)
        let one = try imagetable("extract", table.path, "p/\u{301}b.jpg", "-o", into)
        #expect(one.status == 0, "\(one.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: into).map { Array($0.utf8) } == [Array("\u{301}b.jpg.png".utf8)])
    }
}
