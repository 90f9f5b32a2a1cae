import ImageCache
import ImageManifest
import ImageTableCore

extension ImageCache.Configuration {
    /// A configuration serving a manifest's formats, so the cache reads and fills the tables
    /// `imagetable bake` writes: the formats are the manifest's own values, with the bake's
    /// parameter hashes, so no table is rebuilt.
    ///
    /// - Parameters:
    ///   - manifest: a validated manifest.
    ///   - directory: where the tables live; the manifest's `output` by default.
    ///   - scales: the scales to serve (an app on a 2× screen wants only `@2x` tables); all of
    ///     each format's scales by default. The others are `Configuration.siblingFormats`:
    ///     not served, but drawn around as the bake draws.
    public init(manifest: Manifest, directory: String? = nil, scales: Set<Int>? = nil) {
        self.init(directory: directory ?? manifest.outputPath, formats: manifest.formats.filter { scales?.contains($0.scale) ?? true })
        siblingFormats = manifest.formats.filter { !(scales?.contains($0.scale) ?? true) }
    }
}

extension ImageCache {
    /// A cache that draws misses with the libvips pipeline (``VipsRenderer``).
    ///
    /// - Parameters:
    ///   - configuration: formats, directory and policies.
    ///   - provider: supplies sources on a miss.
    ///   - decoding: the decode limits and strictness for fetched sources.
    /// - Throws: what `ImageCache.init(configuration:provider:renderer:)` throws.
    public convenience init(configuration: Configuration, provider: any SourceProvider,
                            decoding: DecodeOptions = DecodeOptions()) throws(ImageTableError) {
        try self.init(configuration: configuration, provider: provider, renderer: VipsRenderer(options: decoding))
    }
}
