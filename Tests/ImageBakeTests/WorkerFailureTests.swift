import Foundation
import ImageBake
import ImageTableCore
import TestSupport
import Testing
import WorkerProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The bake's side of the worker protocol when the worker misbehaves: each way ends as a typed
/// failure of that source (or of the bake, for a worker from another build), never a hang, a
/// crash of the bake or pixels from an unchecked reply.
@Suite struct WorkerFailureTests {
    private func bake(_ mode: FakeWorker.Mode, sources: Int = 1, timeout: Double = 30) throws -> (BakeSummary, BakeProject) {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for i in 0..<sources { try project.add("s\(i).jpg", from: Corpus.photo("Landscape_1")) }
        let fake = try FakeWorker.install(mode, in: project.root)
        let summary = try project.bake(jobs: 1) {
            $0.workerExecutable = fake
            $0.timeout = timeout
        }
        return (summary, project)
    }

    @Test func aCrashMidJobFailsTheSourceAsWorkerCrashed() throws {
        let (summary, _) = try bake(.crash)
        #expect(summary.failed.map(\.error.code) == [.workerCrashed])
        #expect(summary.failed.first?.error.message.contains("signal 11") == true, "\(summary.failed)")
        #expect(summary.tables.allSatisfy { $0.entries == 0 && $0.written == 0 })
    }

    @Test func workersThatKeepCrashingStopTheBake() throws {
        let error = #expect(throws: ImageTableError.self) { try bake(.crash, sources: 4) }
        #expect(error?.code == .workerUnavailable && error?.message.contains("keep failing") == true)
    }

    @Test func aWorkerPastTheTimeoutIsStoppedAndTheSourceTimesOut() throws {
        let started = Date()
        let (summary, _) = try bake(.hang, timeout: 0.25)
        #expect(summary.failed.map(\.error.code) == [.timedOut])
        // A timeout under a second is written as it was given (it read "0 s").
        #expect(summary.failed.first?.error.message == "decoding took longer than 0.25 s; the worker was stopped")
        #expect(Date().timeIntervalSince(started) < 20, "the hung worker must be killed, not waited for")
    }

    /// Timeouts that stop a bake are not called an unavailable worker: it answered its handshake,
    /// and the likelier causes are the timeout itself or sources that cannot be read.
    @Test func sourcesThatKeepTimingOutStopTheBakeSayingSo() throws {
        let error = #expect(throws: ImageTableError.self) { try bake(.hang, sources: 4, timeout: 0.1) }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(error?.message == "stopped the bake: 3 sources in a row took longer than the timeout (--timeout 0.1 s) and "
                + "nothing has been baked yet; is the timeout too short, or is the file system not answering?")
        #expect(error?.path?.hasSuffix("/s2.jpg") == true, "\(String(describing: error?.path))")
    }

    /// A worker that spent most of the timeout on the CPU was decoding: the source costs more
    /// than the timeout (an animated WebP of 100,000 frames took two minutes, before such files
    /// were refused before libvips), and it fails alone.
    /// Three such files listed first stopped the bake as if the file system did not answer.
    @Test func sourcesThatDecodePastTheTimeoutFailAlone() throws {
        let (summary, _) = try bake(.busy, sources: 4, timeout: 1)
        #expect(summary.failed.map(\.error.code) == Array(repeating: .timedOut, count: 4), "\(summary.failed)")
        #expect(summary.stoppedBy == nil)
    }

    /// The CPU a worker spent on failures it answered does not make its next timeout a decode:
    /// counted from its last answer while nothing is baked, the first timeout after a costly
    /// failure counts towards the three in a row that stop the bake.
    @Test func aWorkersAnsweredFailuresDoNotMakeItsTimeoutADecode() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for name in ["0-burn", "1-hang", "2-hang", "3-hang", "4-hang"] { try project.add(name + ".jpg", from: Corpus.photo("Landscape_1")) }
        let fake = try FakeWorker.install(.burnThenHang, in: project.root)
        let error = #expect(throws: ImageTableError.self) {
            try project.bake(jobs: 1) {
                $0.workerExecutable = fake
                $0.timeout = 0.3
            }
        }
        #expect(error?.code == .timedOut && error?.path?.hasSuffix("/3-hang.jpg") == true, "\(String(describing: error))")
    }

    /// Two crashes and a timeout are not "3 sources in a row took longer than the timeout":
    /// only timeouts all the way stop the bake as `timed-out`.
    @Test func crashesThenATimeoutStopTheBakeAsWorkersFailing() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for name in ["1-crash", "2-crash", "3-hang", "4-good"] { try project.add(name + ".jpg", from: Corpus.photo("Landscape_1")) }
        let fake = try FakeWorker.install(.crashOrFail, in: project.root)
        let error = #expect(throws: ImageTableError.self) {
            try project.bake(jobs: 1) {
                $0.workerExecutable = fake
                $0.timeout = 0.2
            }
        }
        #expect(error?.code == .workerUnavailable && error?.message.contains("keep failing") == true, "\(String(describing: error))")
    }

    /// A worker that answers a source with a failure is working: crashes on either side of it
    /// are not "in a row", and the bake goes on to the sources that render.
    @Test func aFailureAnsweredBetweenCrashesKeepsTheBakeGoing() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        for name in ["1-crash", "2-crash", "3-fail", "4-crash", "5-good"] {
            try project.add(name + ".jpg", from: Corpus.photo("Landscape_1"))
        }
        let fake = try FakeWorker.install(.crashOrFail, in: project.root)
        let summary = try project.bake(jobs: 1) { $0.workerExecutable = fake }
        #expect(summary.failed.map(\.error.code) == [.workerCrashed, .workerCrashed, .decodeFailed, .workerCrashed],
                "\(summary.failed)")
        #expect(summary.decoded == 1)
    }

    @Test(arguments: [FakeWorker.Mode.garbage, .wrongID])
    func aReplyThatIsNotTheAnswerIsAProtocolError(_ mode: FakeWorker.Mode) throws {
        let (summary, project) = try bake(mode)
        #expect(summary.failed.map(\.error.code) == [.protocolError], "\(summary.failed)")
        let table = try ImageTableReader(path: project.tables + "/bgra.imagetable")
        #expect(table.count == 0, "nothing is published from an unchecked reply")
    }

    @Test(arguments: [FakeWorker.Mode.renderingVersion, .protocolVersion])
    func aWorkerFromAnotherBuildIsRefusedNamingBothVersionsAndPaths(_ mode: FakeWorker.Mode) throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try project.add("s.jpg", from: Corpus.photo("Landscape_1"))
        let fake = try FakeWorker.install(mode, in: project.root)
        let error = #expect(throws: ImageTableError.self) { try project.bake(jobs: 1) { $0.workerExecutable = fake } }
        #expect(error?.code == .workerMismatch)
        let message = error?.message ?? ""
        let theirs = mode == .renderingVersion ? "renders version \(TableFormat.pipelineRenderingVersion + 7)"
            : "speaks protocol \(WorkerProtocolVersion.current + 1)"
        #expect(message.contains(fake) && message.contains(theirs), "\(message)")
        #expect(message.contains("renders version \(TableFormat.pipelineRenderingVersion)"), "\(message)")
        // Our side is this process, the test runner: named by its path as the kernel knows it.
        let runner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(message.contains("but \(runner) speaks protocol \(WorkerProtocolVersion.current)"), "\(message)")
        #expect(try ImageTableReader(path: project.tables + "/bgra.imagetable").count == 0)

        // From the command line, our side is `imagetable` itself, wherever it is installed: here
        // a copy in a directory of its own, beside the fake as its `imagetable-worker`.
        let command = try project.installCommand(withWorker: fake)
        let result = try run(command, ["bake", project.manifestPath])
        #expect(result.status == 1 && result.stderr.contains("[worker-mismatch]"), "\(result.stderr)")
        #expect(result.stderr.contains("the worker \(project.root)/bin/imagetable-worker ") && result.stderr.contains(theirs)
                && result.stderr.contains("but \(command) speaks protocol \(WorkerProtocolVersion.current) and renders version "
                                          + "\(TableFormat.pipelineRenderingVersion);"), "\(result.stderr)")
    }

    /// A worker has the next source queued while it works on one (`outstandingPerWorker`): when
    /// it crashes or hangs, only the source it was working on fails; those queued behind it were
    /// never started, and the next worker bakes them.
    @Test(arguments: [FakeWorker.Mode.crashMarked, .hangMarked])
    func aLostWorkersQueuedSourcesGoToTheNextWorker(_ mode: FakeWorker.Mode) throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        let names = ["a0.jpg", "bad1.jpg", "c2.jpg", "d3.jpg", "bad4.jpg", "e5.jpg"]
        for name in names { try project.add(name, from: Corpus.photo("Landscape_1")) }
        let fake = try FakeWorker.install(mode, in: project.root)
        let summary = try project.bake(jobs: 1) {
            $0.workerExecutable = fake
            $0.timeout = 1
            $0.outstandingPerWorker = 2
        }
        let code: ImageTableError.Code = mode == .crashMarked ? .workerCrashed : .timedOut
        #expect(summary.failed.map(\.error.code) == [code, code], "\(summary.failed)")
        #expect(Set(summary.failed.compactMap { $0.error.path.map { ($0 as NSString).lastPathComponent } }) == ["bad1.jpg", "bad4.jpg"])
        #expect(summary.decoded == 4)
        #expect(try project.entries().values.allSatisfy { Set($0.keys) == ["a0.jpg", "c2.jpg", "d3.jpg", "e5.jpg"] })
    }

    /// Requests queued for a worker never fill its pipe: a write that waited on a worker stuck on
    /// a source would never reach the wait that times it out. Here each request is larger than
    /// half the pipe (a family of 150 formats), so a second is sent only once the first is
    /// answered, and the stuck source times out as it should.
    @Test func largeRequestsDoNotHangABakeWhoseWorkerIsStuck() throws {
        let formats = (0..<150).map { "      format\($0):\n        size: 8x8\n        style: 8BitGrayscale\n        maximumCount: 40\n" }
        let project = try BakeProject(formats: formats.joined())
        // Sources in name order: the stuck one mid-way, with enough after it that the bake would
        // queue several behind it (towards the end it sends one at a time).
        let names = (0..<10).map { "a\($0).jpg" } + ["bad.jpg"] + (0..<15).map { "c\($0).jpg" }
        for name in names { try project.add(name, from: Corpus.photo("Landscape_1")) }
        let command = try project.installCommand(withWorker: try FakeWorker.install(.hangMarked, in: project.root))
        let result = try run("/usr/bin/timeout", ["60", command, "bake", project.manifestPath, "--jobs", "1", "--timeout", "1",
                                                  "--format", "json"])
        #expect(result.status == 3, "status \(result.status) (124: the bake hung): \(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any], "\(result.stdout)")
        #expect((json["sources"] as? [String: Any])?["decoded"] as? Int == 25, "\(result.stdout)")
        #expect(result.stdout.contains("timed-out"), "\(result.stdout)")
    }

    /// `--jobs N` means N workers, even above the number of cores (a thread per job, not a pool
    /// capped at the core count).
    @Test func jobsAboveTheCoreCountStartThatManyWorkers() throws {
        let jobs = ProcessInfo.processInfo.activeProcessorCount + 2
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 64))
        for i in 0..<(jobs * 3) { try project.add("s\(i).jpg", from: Corpus.photo("Landscape_1")) }
        let fake = try FakeWorker.install(.slow, in: project.root)
        let summary = try project.bake(jobs: jobs) { $0.workerExecutable = fake }
        #expect(summary.decoded == jobs * 3 && summary.failed.isEmpty)
        let pids = try FileManager.default.contentsOfDirectory(atPath: project.root).filter { $0.hasPrefix("pid-") }
        #expect(pids.count == jobs)
    }

    /// A worker's prints cannot corrupt the channel (it has descriptors of its own), nor the
    /// command's JSON on standard output (the worker's standard output goes to standard error).
    @Test func strayPrintsReachNeitherTheChannelNorTheJSON() throws {
        let project = try BakeProject(formats: BakeProject.fourStyles(size: 8, maximumCount: 10))
        try project.add("s.jpg", from: Corpus.photo("Landscape_1"))
        let command = try project.installCommand(withWorker: try FakeWorker.install(.chatty, in: project.root))
        let result = try run(command, ["bake", project.manifestPath, "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any], "\(result.stdout)")
        #expect((json["sources"] as? [String: Int])?["decoded"] == 1)
        #expect(result.stderr.contains("a stray line on standard output"))
    }
}
