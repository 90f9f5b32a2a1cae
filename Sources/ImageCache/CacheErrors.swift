import ImageTableCore

/// The cache's errors are ``ImageTableError``s like every other layer's: a table's or the
/// renderer's code reaches the caller unchanged (`locked`, `no-space`, `truncated`…), with the
/// request's key added. These build the few the cache makes itself.
extension ImageTableError {
    /// The request for `key` in `format` was cancelled while it waited.
    static func cancelled(key: String?, format: String?) -> ImageTableError {
        ImageTableError(.cancelled, format.map { "the request for format '\($0)' was cancelled" } ?? "the request was cancelled", key: key)
    }

    /// A lower layer's error, kept as it is, about `key` (and the table of `format`).
    static func table(_ error: ImageTableError, key: String?, format: String?) -> ImageTableError {
        format.map { error.explained("format '\($0)'") }.map { $0.at($0.path, key: key) } ?? error.at(error.path, key: key)
    }

    /// The renderer's error for `key`'s source, kept as it is.
    static func decode(_ error: ImageTableError, key: String, format: String?) -> ImageTableError {
        error.at(error.path ?? key, key: key)
    }
}
