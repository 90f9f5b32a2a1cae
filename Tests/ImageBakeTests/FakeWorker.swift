import Foundation
import ImageTableCore
import TestSupport
import WorkerProtocol

/// A stand-in for `imagetable-worker` that speaks the worker protocol (on descriptors 3 and 4) and
/// misbehaves in one chosen way, for the failure paths a real worker cannot be made to take.
enum FakeWorker {
    enum Mode: String, CaseIterable {
        /// Answers every render with full-slot rectangles, after printing to standard output and
        /// standard error (which must not reach the channel).
        case chatty
        /// Kills itself with SIGSEGV in the middle of a job.
        case crash
        /// Never answers a job.
        case hang
        /// Answers a job with a line that is not JSON.
        case garbage
        /// Answers a job with the id of another request.
        case wrongID = "wrong-id"
        /// Greets with another rendering version.
        case renderingVersion = "rendering-version"
        /// Greets with another protocol version.
        case protocolVersion = "protocol-version"
        /// Kills itself with SIGSEGV on sources whose names start with `bad`; answers the others.
        case crashMarked = "crash-marked"
        /// Never answers a job on a source whose name starts with `bad`; answers the others.
        case hangMarked = "hang-marked"
        /// Like ``chatty`` without the prints, but takes a quarter of a second per job and writes
        /// its process id into a file beside the script, so a test can count the workers.
        case slow
        /// Kills itself with SIGSEGV on sources whose names contain `-crash`, never answers those
        /// whose names contain `-hang`, answers those whose names contain `-fail` with a
        /// `decode-failed` failure, and renders the others.
        case crashOrFail = "crash-or-fail"
        /// Spends the CPU on every job and never answers: a worker decoding past its timeout.
        case busy
        /// Ends by SIGTRAP on every job, as GLib ends a process whose allocation failed.
        case trap
        /// Spends half a second of CPU, then answers with a failure, on sources whose names
        /// contain `-burn`; never answers the others.
        case burnThenHang = "burn-then-hang"
        /// Answers every job with a failure whose cause is libjpeg's words for a failed allocation.
        case insufficientMemory = "insufficient-memory"
    }

    /// Writes the fake for `mode` into `directory` and returns its path.
    static func install(_ mode: Mode, in directory: String) throws -> String {
        let path = directory + "/fake-worker-\(mode.rawValue)"
        let script = """
            #!/usr/bin/env python3
            import json, os, signal, sys, time
            MODE = "\(mode.rawValue)"
            requests = os.fdopen(3, "rb")
            replies = os.fdopen(4, "wb", buffering=0)
            def send(i, kind, body):
                replies.write((json.dumps({"id": i, "kind": kind, "body": body}) + "\\n").encode())
            tables = []
            for line in requests:
                message = json.loads(line)
                i, kind, body = message["id"], message["kind"], message["body"]
                if kind == "hello":
                    tables = body.get("tables", [])
                    send(i, "hello", {"protocolVersion": \(WorkerProtocolVersion.current) + (1 if MODE == "protocol-version" else 0),
                                      "renderingVersion": \(TableFormat.pipelineRenderingVersion) + (7 if MODE == "rendering-version" else 0),
                                      "executable": sys.argv[0]})
                    continue
                marked = os.path.basename(body["source"]).startswith("bad")
                if MODE == "crash" or (MODE == "crash-marked" and marked):
                    os.kill(os.getpid(), signal.SIGSEGV)
                if MODE == "burn-then-hang":
                    if "-burn" in os.path.basename(body["source"]):
                        start = time.process_time()
                        while time.process_time() - start < 0.5:
                            pass
                        send(i, "failed", {"code": "decode-failed", "message": "not a picture"})
                        continue
                    time.sleep(3600)
                if MODE == "trap":
                    os.kill(os.getpid(), signal.SIGTRAP)
                if MODE == "insufficient-memory":
                    send(i, "failed", {"code": "decode-failed", "message": "could not decode", "cause": "VipsJpeg: Insufficient memory (case 4)"})
                    continue
                if MODE == "busy":
                    while True:
                        pass
                if MODE == "hang" or (MODE == "hang-marked" and marked):
                    time.sleep(3600)
                name = os.path.basename(body["source"])
                if MODE == "crash-or-fail" and "-crash" in name:
                    os.kill(os.getpid(), signal.SIGSEGV)
                if MODE == "crash-or-fail" and "-hang" in name:
                    time.sleep(3600)
                if MODE == "crash-or-fail" and "-fail" in name:
                    send(i, "failed", {"code": "decode-failed", "message": "not a picture"})
                    continue
                if MODE == "garbage":
                    replies.write(b"this is not a reply\\n")
                    continue
                rects = []
                for member in body["members"]:
                    fields = dict(l.split("=", 1) for l in tables[member["table"]]["format"].splitlines()[1:])
                    rects.append({"x": 0, "y": 0, "width": int(fields["width"]), "height": int(fields["height"])})
                if MODE == "slow":
                    with open(os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "pid-%d" % os.getpid()), "w"):
                        pass
                    time.sleep(0.25)
                if MODE == "chatty":
                    print("a stray line on standard output", flush=True)
                    print("and one on standard error", file=sys.stderr, flush=True)
                st = os.stat(body["source"])
                stat = {"device": st.st_dev, "inode": st.st_ino, "size": st.st_size, "modifiedNs": st.st_mtime_ns,
                        "changedNs": st.st_ctime_ns, "readNs": time.time_ns()}
                fingerprint = "00000000-0000-5000-8000-%012x" % (st.st_ino % (1 << 48))
                send(i + (1 if MODE == "wrong-id" else 0), "rendered",
                     {"contentRects": rects, "decodes": 1, "fingerprint": fingerprint, "stat": stat, "warnings": []})

            """
        try writeExecutable(script, to: path)
        return path
    }
}
