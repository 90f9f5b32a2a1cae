import Foundation

/// What a command asks of its worker. One request, one reply, each carrying everything it needs:
/// nothing a job does depends on an earlier job.
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

/// One message on the wire: a JSON object on one line, `{"id": N, "kind": "render", "body": {…}}`.
/// The reply to request N has id N.
struct Envelope<Body: Codable>: Codable {
    var id: Int
    var kind: String
    var body: Body
}

/// Reads the `id` and `kind` of a line before its body, so that the body is decoded as the type
/// its kind names.
private struct Header: Decodable {
    var id: Int
    var kind: String
}

/// The JSON-lines codec of the protocol.
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
        guard let header = try? JSONDecoder().decode(Header.self, from: line) else { return nil }
        let request: WorkerRequest? = switch header.kind {
        case "hello": body(Hello.self, line).map(WorkerRequest.hello)
        case "render": body(RenderJob.self, line).map(WorkerRequest.render)
        case "extract": body(ExtractJob.self, line).map(WorkerRequest.extract)
        case "preview": body(PreviewJob.self, line).map(WorkerRequest.preview)
        default: nil
        }
        return request.map { (header.id, $0) }
    }

    /// Reads a reply line.
    ///
    /// - Parameter line: the line, without its terminator.
    /// - Returns: the id and the reply, or `nil` when the line is not a reply.
    public static func reply(_ line: Data) -> (id: Int, reply: WorkerReply)? {
        guard let header = try? JSONDecoder().decode(Header.self, from: line) else { return nil }
        let reply: WorkerReply? = switch header.kind {
        case "hello": body(Hello.self, line).map(WorkerReply.hello)
        case "rendered": body(Rendered.self, line).map(WorkerReply.rendered)
        case "finished": body(Finished.self, line).map(WorkerReply.finished)
        case "failed": body(WorkerFailure.self, line).map(WorkerReply.failed)
        default: nil
        }
        return reply.map { (header.id, $0) }
    }

    private static func encode<Body: Codable>(_ id: Int, _ kind: String, _ body: Body) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Plain structs of strings and numbers always encode.
        var data = (try? encoder.encode(Envelope(id: id, kind: kind, body: body))) ?? Data()
        data.append(0x0A)
        return data
    }

    private static func body<Body: Codable>(_ type: Body.Type, _ line: Data) -> Body? {
        (try? JSONDecoder().decode(Envelope<Body>.self, from: line))?.body
    }
}
