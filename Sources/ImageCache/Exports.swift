// The types an ImageCache user handles are declared in lower modules: `MemberSpec`, `Fit`,
// `RGBAColor` (RenderModel) to build formats, and `ImageView`, `PixelStyle`, `PixelRect`,
// `ProtectionMode` (ImageTableCore) to read images. Re-exported so that `import ImageCache`
// is enough, as ImagePipeline does for RenderModel.
@_exported import ImageTableCore
