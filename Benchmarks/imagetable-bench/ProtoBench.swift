import Foundation
import WorkerProtocol

/// `imagetable-bench proto`: what the worker protocol costs a bake per source. A render request
/// for four members (the floor benchmark's four 150×150 formats, named by their position in the
/// handshake's tables) and its `rendered` reply are each written and read back by the
/// protocol's codec, and, as the baseline in this process, by Foundation's `JSONSerialization`
/// (read into its dictionaries and written back out). The handshake, once per worker, is not
/// counted.
enum ProtoBench {
    static func run() {
        let members = (0..<4).map { RenderMember(table: $0, destination: .slot(slot: 1234, generation: 77)) }
        let job = RenderJob(source: "/srv/assets/photos/s00000.jpg", members: members,
                            limits: SourceLimits(maxPixels: 268_402_689, maxSourceBytes: 268_435_456, failOn: "error"))
        let stat = SourceStat(device: 65024, inode: 16_310_629, size: 16204, modifiedNs: 1_795_655_266_763_130_990,
                              changedNs: 1_795_655_266_763_130_990, readNs: 1_795_655_266_925_711_165)
        let rendered = Rendered(contentRects: Array(repeating: WireRect(x: 0, y: 0, width: 150, height: 150), count: 4), decodes: 1,
                                fingerprint: "145F46C6-4355-5308-8E64-0B5145F0AB54", stat: stat,
                                pixelChecksums: [974_594_890, 974_594_890, 2_940_638_903, 3_797_982_448])
        let request = WireCodec.line(.render(job), id: 7), reply = WireCodec.line(.rendered(rendered), id: 7)
        guard WireCodec.request(request.dropLast())?.request == .render(job), WireCodec.reply(reply.dropLast())?.reply == .rendered(rendered)
        else { return print("proto: the codec does not read back what it wrote") }

        let n = 5000
        let ours = Harness.best(of: 3) {
            for i in 0..<n {
                _ = WireCodec.request(WireCodec.line(.render(job), id: i).dropLast())
                _ = WireCodec.reply(WireCodec.line(.rendered(rendered), id: i).dropLast())
            }
        }
        let foundation = Harness.best(of: 3) {
            for _ in 0..<n {
                for line in [request, reply] {
                    let object = try? JSONSerialization.jsonObject(with: line)
                    _ = try? JSONSerialization.data(withJSONObject: object ?? [:], options: .sortedKeys)
                }
            }
        }
        print("Worker protocol: a render request of \(request.count) bytes and its reply of \(reply.count), written and read")
        let us = { (s: Double) in String(format: "%.1f us", s / Double(n) * 1e6) }
        Harness.report("per source, this codec", us(ours), String(format: "%.2fx Foundation", ours / foundation))
        Harness.report("per source, Foundation JSONSerialization", us(foundation), "1.00x")
    }
}
