/// One entry as the disk store reads and writes it: where its file is (``DiskKey``) and the
/// original type name and parameter its header records and a read checks.
///
/// Made once per operation, where the caller's key enters the storage layer; the lengths an
/// entry header can record are checked here, the one place (before the parameter's MD5, so a
/// parameter too long to store costs no hash).
///
/// ```swift
/// let key = try EntryKey(folder: folder, typeName: "orders", parameter: "/v1/orders")
/// try store.write(payload, to: key, expiry: nil, durability: .none)
/// ```
package struct EntryKey: Sendable {
    /// Where the entry's file is: its folder and hashed name.
    package let disk: DiskKey
    /// The type name recorded in the entry's header.
    package let typeName: String
    /// The parameter recorded in the entry's header, if any.
    package let parameter: String?

    /// The key of `parameter`'s entry in `folder`: its file named by the parameter's MD5, or
    /// `value` without one.
    ///
    /// - Throws: ``StorageError`` `keyTooLong` when a header cannot record the name or the
    ///   parameter (``EntryHeader/checkLengths(typeName:parameter:)``).
    /// - Complexity: O(parameter length) for the MD5.
    package init(folder: FolderPath, typeName: String, parameter: String?) throws {
        try EntryHeader.checkLengths(typeName: typeName, parameter: parameter)
        self.init(
            checked: DiskKey(folder: folder, name: EntryName(parameter: parameter)),
            typeName: typeName,
            parameter: parameter
        )
    }

    /// The key of the entry at `disk` recording `typeName` and `parameter`, for callers that
    /// name the file themselves (the test workers write one fixed file for any parameter).
    ///
    /// - Throws: ``StorageError`` `keyTooLong`, as ``init(folder:typeName:parameter:)``.
    package init(_ disk: DiskKey, typeName: String, parameter: String?) throws {
        try EntryHeader.checkLengths(typeName: typeName, parameter: parameter)
        self.init(checked: disk, typeName: typeName, parameter: parameter)
    }

    private init(checked disk: DiskKey, typeName: String, parameter: String?) {
        self.disk = disk
        self.typeName = typeName
        self.parameter = parameter
    }
}
