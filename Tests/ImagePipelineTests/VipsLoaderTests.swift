import CLibvips
import CVips
import Foundation
import ImagePipeline
import Testing

/// CVips declares libvips' enumerations itself, so that building needs no libvips headers: its
/// values must be libvips' own, which these tests hold to the real headers (CLibvips).
@Suite struct VipsLoaderTests {
    @Test func theEnumerationsCarryLibvipsValues() {
        #expect(CV_FORMAT_UCHAR.rawValue == VIPS_FORMAT_UCHAR.rawValue)
        #expect(CV_FORMAT_FLOAT.rawValue == VIPS_FORMAT_FLOAT.rawValue)
        #expect(CV_INTERPRETATION_CMYK.rawValue == VIPS_INTERPRETATION_CMYK.rawValue)
        #expect(CV_INTERPRETATION_sRGB.rawValue == VIPS_INTERPRETATION_sRGB.rawValue)
        #expect(CV_FAIL_ON_NONE.rawValue == VIPS_FAIL_ON_NONE.rawValue)
        #expect(CV_FAIL_ON_TRUNCATED.rawValue == VIPS_FAIL_ON_TRUNCATED.rawValue)
        #expect(CV_FAIL_ON_ERROR.rawValue == VIPS_FAIL_ON_ERROR.rawValue)
        #expect(CV_FAIL_ON_WARNING.rawValue == VIPS_FAIL_ON_WARNING.rawValue)
        #expect(CV_INTERESTING_ENTROPY.rawValue == VIPS_INTERESTING_ENTROPY.rawValue)
        #expect(CV_INTERESTING_ATTENTION.rawValue == VIPS_INTERESTING_ATTENTION.rawValue)
        #expect(Int32(CV_ACCESS_SEQUENTIAL) == Int32(VIPS_ACCESS_SEQUENTIAL.rawValue))
        #expect(Int32(CV_SIZE_DOWN) == Int32(VIPS_SIZE_DOWN.rawValue))
        #expect(Int32(CV_EXTEND_COPY) == Int32(VIPS_EXTEND_COPY.rawValue))
        #expect(Int32(CV_LOG_LEVEL_WARNING) == Int32(G_LOG_LEVEL_WARNING.rawValue))
        #expect(Int32(CV_LOG_LEVEL_MESSAGE) == Int32(G_LOG_LEVEL_MESSAGE.rawValue))
        // The ABI that CVips' signatures describe (its loader checks it again at start).
        #expect(VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE == 42)
    }

    /// In a process that links libvips (this test), the loader uses that copy, not a second one:
    /// one libvips file is mapped, and the functions the loader resolved come from it.
    @Test func theLoaderUsesTheCopyAlreadyInTheProcess() throws {
        #expect(try PipelineRuntime.libvipsVersion() == String(cString: vips_version_string()))
        #if os(Linux)
        // Read to the end: /proc files report a size of 0.
        let maps = String(decoding: try FileHandle(forReadingAtPath: "/proc/self/maps").map { try $0.readToEnd() ?? Data() } ?? Data(),
                          as: UTF8.self)
        let mapped = Set(maps.split(separator: "\n").compactMap { line -> String? in
            guard let slash = line.firstIndex(of: "/") else { return nil }
            let path = String(line[slash...])
            return path.contains("/libvips.so") ? path : nil
        })
        #expect(mapped.count == 1, "\(mapped)")
        let loaded = String(cString: try #require(cv_library_path()))
        #expect(URL(fileURLWithPath: loaded).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: try #require(mapped.first)).resolvingSymlinksInPath().path, "\(loaded) \(mapped)")
        #endif
    }
}
