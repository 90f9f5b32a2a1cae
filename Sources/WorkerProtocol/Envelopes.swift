import Foundation

/// What a command asks of its worker. One request, one reply, each carrying everything it needs
/// beyond the handshake's tables (``Hello/tables``): nothing a job does depends on an earlier job.
public enum WorkerRequest: Sendable, Equatable {
    /// The handshake; always first.
    case hello(Hello)
    /// Decode a source and render it into its destinations.
    case render(RenderJob)
    /// Write table entries as PNG files.
    case extract(ExtractJob)
    /// Draw a contact sheet of a table.
    case preview(PreviewJob)
}

/// A worker's answer to one request.
public enum WorkerReply: Sendable, Equatable {
    /// The handshake's answer.
    case hello(Hello)
    /// A render job succeeded.
    case rendered(Rendered)
    /// An extract or preview job ended.
    case finished(Finished)
    /// The request failed.
    case failed(WorkerFailure)
}

/// The JSON-lines codec of the protocol: each message is one line,
/// `{"body": {…}, "id": N, "kind": "render"}` (keys sorted); the reply to request N has id N.
public enum WireCodec {
    /// A request as one line, terminator included.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - id: its id.
    public static func line(_ request: WorkerRequest, id: Int) -> Data {
        switch request {
        case .hello(let body): encode(id, "hello", body)
        case .render(let body): encode(id, "render", body)
        case .extract(let body): encode(id, "extract", body)
        case .preview(let body): encode(id, "preview", body)
        }
    }

    /// A reply as one line, terminator included.
    ///
    /// - Parameters:
    ///   - reply: the reply.
    ///   - id: the id of the request it answers.
    public static func line(_ reply: WorkerReply, id: Int) -> Data {
        switch reply {
        case .hello(let body): encode(id, "hello", body)
        case .rendered(let body): encode(id, "rendered", body)
        case .finished(let body): encode(id, "finished", body)
        case .failed(let body): encode(id, "failed", body)
        }
    }

    /// Reads a request line.
    ///
    /// - Parameter line: the line, without its terminator.
    /// - Returns: the id and the request, or `nil` when the line is not a request.
    public static func request(_ line: Data) -> (id: Int, request: WorkerRequest)? {
        guard let (id, kind, body) = envelope(line) else { return nil }
        let request: WorkerRequest? = switch kind {
        case "hello": Hello(wire: body).map(WorkerRequest.hello)
        case "render": RenderJob(wire: body).map(WorkerRequest.render)
        case "extract": ExtractJob(wire: body).map(WorkerRequest.extract)
        case "preview": PreviewJob(wire: body).map(WorkerRequest.preview)
        default: nil
        }
        return request.map { (id, $0) }
    }

    /// Reads a reply line.
    ///
    /// - Parameter line: the line, without its terminator.
    /// - Returns: the id and the reply, or `nil` when the line is not a reply.
    public static func reply(_ line: Data) -> (id: Int, reply: WorkerReply)? {
        guard let (id, kind, body) = envelope(line) else { return nil }
        let reply: WorkerReply? = switch kind {
        case "hello": Hello(wire: body).map(WorkerReply.hello)
        case "rendered": Rendered(wire: body).map(WorkerReply.rendered)
        case "finished": Finished(wire: body).map(WorkerReply.finished)
        case "failed": WorkerFailure(wire: body).map(WorkerReply.failed)
        default: nil
        }
        return reply.map { (id, $0) }
    }

    private static func encode(_ id: Int, _ kind: String, _ body: some WireBody) -> Data {
        var writer = WireWriter(capacity: 2048)
        writer.object { w in
            w.key("body")
            body.write(to: &w)
            w.field("id", id)
            w.field("kind", kind)
        }
        return writer.bytes.withUnsafeBufferPointer { bytes in
            var line = Data(capacity: bytes.count + 1)
            line.append(bytes)
            line.append(0x0A)
            return line
        }
    }

    private static func envelope(_ line: Data) -> (Int, String, WireJSON)? {
        guard let message = line.withUnsafeBytes({ WireJSON.parse($0) }), let id = message["id"]?.int,
              let kind = message["kind"]?.string, let body = message["body"] else { return nil }
        return (id, kind, body)
    }
}
