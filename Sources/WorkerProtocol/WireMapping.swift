/// Each message's body as a JSON object and back: the field names and shapes that
/// `docs/WORKER-PROTOCOL.md` documents. Optional fields are left out when absent, and read as
/// absent when missing or `null`; a missing required field or a value of the wrong kind makes
/// the whole message unreadable (`nil`).
protocol WireBody {
    var wire: WireJSON { get }
    init?(wire: WireJSON)
}

extension Hello: WireBody {
    var wire: WireJSON {
        .object(["protocolVersion": .int(protocolVersion), "renderingVersion": .int(renderingVersion), "executable": .string(executable)])
    }

    init?(wire: WireJSON) {
        guard let p = wire["protocolVersion"]?.int, let r = wire["renderingVersion"]?.int, let e = wire["executable"]?.string else { return nil }
        self.init(protocolVersion: p, renderingVersion: r, executable: e)
    }
}

extension Destination: WireBody {
    var wire: WireJSON {
        switch self {
        case .slot(let table, let slot, let generation):
            .object(["slot": .object(["table": .string(table), "slot": .int(slot), "generation": .int(generation)])])
        case .scratch(let offset):
            .object(["scratch": .object(["offset": .int(offset)])])
        }
    }

    init?(wire: WireJSON) {
        if let s = wire["slot"] {
            guard let table = s["table"]?.string, let slot = s["slot"]?.int, let generation = s["generation"]?.uint64 else { return nil }
            self = .slot(table: table, slot: slot, generation: generation)
        } else if let offset = wire["scratch"]?["offset"]?.int {
            self = .scratch(offset: offset)
        } else {
            return nil
        }
    }
}

extension RenderMember: WireBody {
    var wire: WireJSON { .object(["format": .string(format), "destination": destination.wire]) }

    init?(wire: WireJSON) {
        guard let format = wire["format"]?.string, let destination = wire["destination"].flatMap(Destination.init(wire:)) else { return nil }
        self.init(format: format, destination: destination)
    }
}

extension SourceLimits: WireBody {
    var wire: WireJSON { .object(["maxPixels": .int(maxPixels), "maxSourceBytes": .int(maxSourceBytes), "failOn": .string(failOn)]) }

    init?(wire: WireJSON) {
        guard let p = wire["maxPixels"]?.int, let b = wire["maxSourceBytes"]?.int, let f = wire["failOn"]?.string else { return nil }
        self.init(maxPixels: p, maxSourceBytes: b, failOn: f)
    }
}

extension RenderJob: WireBody {
    var wire: WireJSON {
        .object(["source": .string(source), "members": .array(members.map(\.wire)), "limits": limits.wire,
                 "planned": .array(planned.map(WireJSON.string))])
    }

    init?(wire: WireJSON) {
        guard let source = wire["source"]?.string, let members = wire["members"]?.array.flatMap({ Self.all($0, RenderMember.init(wire:)) }),
              let limits = wire["limits"].flatMap(SourceLimits.init(wire:)) else { return nil }
        var planned: [String] = []
        if let p = wire["planned"], p != .null {
            guard let strings = p.array.flatMap({ Self.all($0, \.string) }) else { return nil }
            planned = strings
        }
        self.init(source: source, members: members, limits: limits, planned: planned)
    }
}

extension WireRect: WireBody {
    var wire: WireJSON { .object(["x": .int(x), "y": .int(y), "width": .int(width), "height": .int(height)]) }

    init?(wire: WireJSON) {
        guard let x = wire["x"]?.int, let y = wire["y"]?.int, let w = wire["width"]?.int, let h = wire["height"]?.int else { return nil }
        self.init(x: x, y: y, width: w, height: h)
    }
}

extension SourceStat: WireBody {
    var wire: WireJSON {
        .object(["device": .int(device), "inode": .int(inode), "size": .int(size), "modifiedNs": .int(modifiedNs),
                 "changedNs": .int(changedNs), "readNs": .int(readNs)])
    }

    init?(wire: WireJSON) {
        guard let device = wire["device"]?.uint64, let inode = wire["inode"]?.uint64, let size = wire["size"]?.int,
              let modified = wire["modifiedNs"]?.int64, let changed = wire["changedNs"]?.int64, let read = wire["readNs"]?.int64 else { return nil }
        self.init(device: device, inode: inode, size: size, modifiedNs: modified, changedNs: changed, readNs: read)
    }
}

extension Rendered: WireBody {
    var wire: WireJSON {
        .object(["contentRects": .array(contentRects.map(\.wire)), "decodes": .int(decodes), "fingerprint": .string(fingerprint),
                 "stat": stat.wire, "warnings": .array(warnings.map(WireJSON.string)), "pixelChecksums": .array(pixelChecksums.map { .int($0) })])
    }

    init?(wire: WireJSON) {
        guard let rects = wire["contentRects"]?.array.flatMap({ Self.all($0, WireRect.init(wire:)) }), let decodes = wire["decodes"]?.int,
              let fingerprint = wire["fingerprint"]?.string, let stat = wire["stat"].flatMap(SourceStat.init(wire:)),
              let warnings = wire["warnings"]?.array.flatMap({ Self.all($0, \.string) }) else { return nil }
        var checksums: [UInt32] = []
        if let c = wire["pixelChecksums"], c != .null {
            guard let values = c.array.flatMap({ Self.all($0, { $0.uint64.flatMap(UInt32.init(exactly:)) }) }) else { return nil }
            checksums = values
        }
        self.init(contentRects: rects, decodes: decodes, fingerprint: fingerprint, stat: stat, warnings: warnings, pixelChecksums: checksums)
    }
}

extension ExtractJob: WireBody {
    var wire: WireJSON {
        var fields: WireFields = ["table": .string(table), "contentOnly": .bool(contentOnly), "verbose": .bool(verbose)]
        if let key { fields["key"] = .string(key) }
        if let output { fields["output"] = .string(output) }
        if let all { fields["all"] = .string(all) }
        return .object(fields)
    }

    init?(wire: WireJSON) {
        guard let table = wire["table"]?.string, let contentOnly = wire["contentOnly"]?.bool, let verbose = wire["verbose"]?.bool,
              let key = Self.optionalString(wire["key"]), let output = Self.optionalString(wire["output"]),
              let all = Self.optionalString(wire["all"]) else { return nil }
        self.init(table: table, key: key, output: output, all: all, contentOnly: contentOnly, verbose: verbose)
    }
}

extension PreviewJob: WireBody {
    var wire: WireJSON {
        var fields: WireFields = ["table": .string(table), "output": .string(output), "tileSize": .int(tileSize), "limit": .int(limit),
                                          "order": .string(order), "captions": .bool(captions)]
        if let columns { fields["columns"] = .int(columns) }
        return .object(fields)
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
    var wire: WireJSON { .object(["status": .int(status)]) }

    init?(wire: WireJSON) {
        guard let status = wire["status"]?.int64.flatMap(Int32.init(exactly:)) else { return nil }
        self.init(status: status)
    }
}

extension WorkerFailure: WireBody {
    var wire: WireJSON {
        var fields: WireFields = ["code": .string(code.rawValue), "message": .string(message)]
        if let cause { fields["cause"] = .string(cause) }
        return .object(fields)
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

    /// An optional string field: `.some(nil)` when absent or `null`, `nil` when of another kind.
    static func optionalString(_ value: WireJSON?) -> String?? {
        guard let value, value != .null else { return .some(nil) }
        return value.string.map { .some($0) } ?? nil
    }
}
