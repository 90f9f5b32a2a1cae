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
        #expect(Int32(CV_LOG_LEVEL_WARNING) == Int32(G_LOG_LEVEL_WARNING.rawValue))
        #expect(Int32(CV_LOG_LEVEL_MESSAGE) == Int32(G_LOG_LEVEL_MESSAGE.rawValue))
        // The ABI that CVips' signatures describe (its loader checks it again at start).
        #expect(VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE == 42)
    }

    /// In a process that links libvips (this test), the loader uses that copy, not a second one:
    /// the version the pipeline reports is the linked library's.
    @Test func theLoaderUsesTheCopyAlreadyInTheProcess() throws {
        #expect(try PipelineRuntime.libvipsVersion() == String(cString: vips_version_string()))
    }
}
