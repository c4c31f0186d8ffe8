/// Class instances handled as `AnyObject` by the object tables of the encoder and decoder.
enum ClassInstance {
    /// `value` as the class instance it is, without the runtime's general `as AnyObject`
    /// conversion (a dynamic cast per object); callers route only class types here.
    @inline(__always)
    static func object<T>(_ value: T) -> AnyObject {
        if T.self is AnyObject.Type { return unsafeBitCast(value, to: AnyObject.self) }
        return value as AnyObject
    }
}
