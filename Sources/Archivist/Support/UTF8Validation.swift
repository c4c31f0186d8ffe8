extension String {
    /// The string the bytes spell in UTF-8, or `nil` when they are not valid UTF-8.
    ///
    /// `String(validating:as:)` needs macOS 15 and iOS 18; this works on every deployment
    /// target. Decoding repairs bad sequences with U+FFFD, so a faithful round trip proves
    /// validity.
    init?(validatingUTF8Bytes buffer: UnsafeBufferPointer<UInt8>) {
        let string = String(decoding: buffer, as: UTF8.self)
        let same =
            string.utf8.withContiguousStorageIfAvailable { $0.elementsEqual(buffer) }
            ?? string.utf8.elementsEqual(buffer)
        guard same else { return nil }
        self = string
    }

    /// The string the bytes spell in UTF-8, or `nil` when they are not valid UTF-8.
    init?(validatingUTF8Bytes bytes: Slice<UnsafeRawBufferPointer>) {
        self.init(validatingUTF8Bytes: UnsafeRawBufferPointer(rebasing: bytes).assumingMemoryBound(to: UInt8.self))
    }
}
