/// A keyed container of the current record, kept by the decoder for the next model with the
/// same coding keys (see ``CodableArchiveDecoder/container(keyedBy:)``).
///
/// Generic over the container type itself (`KeyedDecodingContainer<Key>`), not over `Key`:
/// ``copy()`` then finds the container type's metadata among this class's generic arguments,
/// with no runtime lookup (`KeyedDecodingContainer` is resilient, so every copy of one in
/// unspecialized code goes through its metadata).
final class KeyedContainerCache<Container> {
    let container: Container
    /// What `container` refers to without holding it (its ``KeyedReader``).
    private let kept: AnyObject

    init(_ container: Container, keeping kept: AnyObject) {
        self.container = container
        self.kept = kept
    }

    /// A copy of the container. Not inlined: inlined into a caller generic over `Key`, the copy
    /// would look up `KeyedDecodingContainer<Key>` again.
    @inline(never)
    func copy() -> Container { container }
}
