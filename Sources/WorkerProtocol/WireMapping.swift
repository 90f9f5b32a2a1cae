/// Each message's body as a JSON object and back: the field names and shapes that
/// `docs/WORKER-PROTOCOL.md` documents. Written straight to bytes, fields in sorted order;
/// read from the parsed tree. Optional fields are left out when absent, and read as absent when
/// missing or `null`; a missing required field or a value of the wrong kind makes the whole
/// message unreadable (`nil`).
protocol WireBody {
    /// Writes the body as one JSON object.
    func write(to writer: inout WireWriter)
    init?(wire: WireJSON)
}

extension Hello: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.field("executable", executable)
            w.field("protocolVersion", protocolVersion)
            w.field("renderingVersion", renderingVersion)
            if !tables.isEmpty { w.arrayField("tables") { w in tables.forEach { $0.write(to: &w) } } }
        }
    }

    init?(wire: WireJSON) {
        guard let p = wire["protocolVersion"]?.int, let r = wire["renderingVersion"]?.int, let e = wire["executable"]?.string else { return nil }
        guard let tables = Self.optionalArray(wire["tables"], CatalogueTable.init(wire:)) else { return nil }
        self.init(protocolVersion: p, renderingVersion: r, executable: e, tables: tables)
    }
}

extension CatalogueTable: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.field("format", format)
            w.field("path", path)
        }
    }

    init?(wire: WireJSON) {
        guard let path = wire["path"]?.string, let format = wire["format"]?.string else { return nil }
        self.init(path: path, format: format)
    }
}

extension Destination: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            switch self {
            case .slot(let slot, let generation):
                w.objectField("slot") { w in
                    w.field("generation", generation)
                    w.field("slot", slot)
                }
            case .scratch(let offset):
                w.objectField("scratch") { w in w.field("offset", offset) }
            }
        }
    }

    init?(wire: WireJSON) {
        if let s = wire["slot"] {
            guard let slot = s["slot"]?.int, let generation = s["generation"]?.uint64 else { return nil }
            self = .slot(slot: slot, generation: generation)
        } else if let offset = wire["scratch"]?["offset"]?.int {
            self = .scratch(offset: offset)
        } else {
            return nil
        }
    }
}

extension RenderMember: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.key("destination")
            destination.write(to: &w)
            w.field("table", table)
        }
    }

    init?(wire: WireJSON) {
        guard let table = wire["table"]?.int, let destination = wire["destination"].flatMap(Destination.init(wire:)) else { return nil }
        self.init(table: table, destination: destination)
    }
}

extension SourceLimits: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.field("failOn", failOn)
            w.field("maxPixels", maxPixels)
            w.field("maxSourceBytes", maxSourceBytes)
        }
    }

    init?(wire: WireJSON) {
        guard let p = wire["maxPixels"]?.int, let b = wire["maxSourceBytes"]?.int, let f = wire["failOn"]?.string else { return nil }
        self.init(maxPixels: p, maxSourceBytes: b, failOn: f)
    }
}

extension RenderJob: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.key("limits")
            limits.write(to: &w)
            w.arrayField("members") { w in members.forEach { $0.write(to: &w) } }
            w.arrayField("planned") { w in planned.forEach { w.int($0) } }
            w.field("source", source)
        }
    }

    init?(wire: WireJSON) {
        guard let source = wire["source"]?.string, let members = wire["members"]?.array.flatMap({ Self.all($0, RenderMember.init(wire:)) }),
              let limits = wire["limits"].flatMap(SourceLimits.init(wire:)) else { return nil }
        guard let planned = Self.optionalArray(wire["planned"], \.int) else { return nil }
        self.init(source: source, members: members, limits: limits, planned: planned)
    }
}

extension WireRect: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.field("height", height)
            w.field("width", width)
            w.field("x", x)
            w.field("y", y)
        }
    }

    init?(wire: WireJSON) {
        guard let x = wire["x"]?.int, let y = wire["y"]?.int, let w = wire["width"]?.int, let h = wire["height"]?.int else { return nil }
        self.init(x: x, y: y, width: w, height: h)
    }
}

extension SourceStat: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.field("changedNs", changedNs)
            w.field("device", device)
            w.field("inode", inode)
            w.field("modifiedNs", modifiedNs)
            w.field("readNs", readNs)
            w.field("size", size)
        }
    }

    init?(wire: WireJSON) {
        guard let device = wire["device"]?.uint64, let inode = wire["inode"]?.uint64, let size = wire["size"]?.int,
              let modified = wire["modifiedNs"]?.int64, let changed = wire["changedNs"]?.int64, let read = wire["readNs"]?.int64 else { return nil }
        self.init(device: device, inode: inode, size: size, modifiedNs: modified, changedNs: changed, readNs: read)
    }
}

extension Rendered: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.arrayField("contentRects") { w in contentRects.forEach { $0.write(to: &w) } }
            w.field("decodes", decodes)
            w.field("fingerprint", fingerprint)
            w.arrayField("pixelChecksums") { w in pixelChecksums.forEach { w.int($0) } }
            w.key("stat")
            stat.write(to: &w)
            w.arrayField("warnings") { w in warnings.forEach { w.string($0) } }
        }
    }

    init?(wire: WireJSON) {
        guard let rects = wire["contentRects"]?.array.flatMap({ Self.all($0, WireRect.init(wire:)) }), let decodes = wire["decodes"]?.int,
              let fingerprint = wire["fingerprint"]?.string, let stat = wire["stat"].flatMap(SourceStat.init(wire:)),
              let warnings = wire["warnings"]?.array.flatMap({ Self.all($0, \.string) }) else { return nil }
        guard let checksums = Self.optionalArray(wire["pixelChecksums"], { $0.uint64.flatMap(UInt32.init(exactly:)) }) else { return nil }
        self.init(contentRects: rects, decodes: decodes, fingerprint: fingerprint, stat: stat, warnings: warnings, pixelChecksums: checksums)
    }
}

extension ExtractJob: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            if let all { w.field("all", all) }
            w.field("contentOnly", contentOnly)
            if let key { w.field("key", key) }
            if let output { w.field("output", output) }
            w.field("table", table)
            w.field("verbose", verbose)
        }
    }

    init?(wire: WireJSON) {
        guard let table = wire["table"]?.string, let contentOnly = wire["contentOnly"]?.bool, let verbose = wire["verbose"]?.bool,
              let key = Self.optionalString(wire["key"]), let output = Self.optionalString(wire["output"]),
              let all = Self.optionalString(wire["all"]) else { return nil }
        self.init(table: table, key: key, output: output, all: all, contentOnly: contentOnly, verbose: verbose)
    }
}

extension PreviewJob: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            w.field("captions", captions)
            if let columns { w.field("columns", columns) }
            w.field("limit", limit)
            w.field("order", order)
            w.field("output", output)
            w.field("table", table)
            w.field("tileSize", tileSize)
        }
    }

    init?(wire: WireJSON) {
        guard let table = wire["table"]?.string, let output = wire["output"]?.string, let tileSize = wire["tileSize"]?.int,
              let limit = wire["limit"]?.int, let order = wire["order"]?.string, let captions = wire["captions"]?.bool else { return nil }
        var columns: Int?
        if let c = wire["columns"], c != .null {
            guard let n = c.int else { return nil }
            columns = n
        }
        self.init(table: table, output: output, columns: columns, tileSize: tileSize, limit: limit, order: order, captions: captions)
    }
}

extension Finished: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in w.field("status", status) }
    }

    init?(wire: WireJSON) {
        guard let status = wire["status"]?.int64.flatMap(Int32.init(exactly:)) else { return nil }
        self.init(status: status)
    }
}

extension WorkerFailure: WireBody {
    func write(to writer: inout WireWriter) {
        writer.object { w in
            if let cause { w.field("cause", cause) }
            w.field("code", code.rawValue)
            w.field("message", message)
        }
    }

    init?(wire: WireJSON) {
        guard let code = wire["code"]?.string.flatMap(Code.init(rawValue:)), let message = wire["message"]?.string,
              let cause = Self.optionalString(wire["cause"]) else { return nil }
        self.init(code, message, cause: cause)
    }
}

extension WireBody {
    /// Every element mapped, or `nil` when one does not map.
    static func all<T>(_ items: [WireJSON], _ transform: (WireJSON) -> T?) -> [T]? {
        var out: [T] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let v = transform(item) else { return nil }
            out.append(v)
        }
        return out
    }

    /// An optional array field, every element mapped: empty when absent or `null`, `nil` when it
    /// is of another kind or an element does not map.
    static func optionalArray<T>(_ value: WireJSON?, _ transform: (WireJSON) -> T?) -> [T]? {
        guard let value, value != .null else { return [] }
        return value.array.flatMap { all($0, transform) }
    }

    /// An optional string field: `.some(nil)` when absent or `null`, `nil` when of another kind.
    static func optionalString(_ value: WireJSON?) -> String?? {
        guard let value, value != .null else { return .some(nil) }
        return value.string.map { .some($0) } ?? nil
    }
}
