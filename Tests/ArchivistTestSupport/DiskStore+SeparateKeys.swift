import Archivist
import Foundation

/// The disk store's read and write with the entry's file and its header's strings given
/// apart, as tests and workers name them (often a fixed file for any parameter): each call
/// makes the ``EntryKey`` the store takes.
extension DiskStore {
    /// ``write(_:to:writeDate:expiry:durability:byteLimit:payloadChecksum:origin:onCommit:)``
    /// to the file at `key`, its header recording `typeName` and `parameter`.
    @discardableResult
    package func write(
        _ payload: Data,
        to key: DiskKey,
        typeName: String,
        parameter: String?,
        writeDate: Date = Date(),
        expiry: Date?,
        durability: Durability,
        byteLimit: Int64? = nil,
        payloadChecksum: UInt32? = nil,
        origin: UInt = 0,
        onCommit: (_ change: UInt64) -> Void = { _ in }
    ) throws -> [DiskKey] {
        try write(
            payload,
            to: EntryKey(key, typeName: typeName, parameter: parameter),
            writeDate: writeDate,
            expiry: expiry,
            durability: durability,
            byteLimit: byteLimit,
            payloadChecksum: payloadChecksum,
            origin: origin,
            onCommit: onCommit
        )
    }

    /// ``write(pieces:to:writeDate:expiry:durability:byteLimit:payloadChecksum:origin:onCommit:)``
    /// to the file at `key`, its header recording `typeName` and `parameter`.
    @discardableResult
    package func write(
        pieces: PayloadPieces,
        to key: DiskKey,
        typeName: String,
        parameter: String?,
        writeDate: Date = Date(),
        expiry: Date?,
        durability: Durability,
        byteLimit: Int64? = nil,
        payloadChecksum: UInt32,
        origin: UInt = 0,
        onCommit: (_ change: UInt64) -> Void = { _ in }
    ) throws -> [DiskKey] {
        try write(
            pieces: pieces,
            to: EntryKey(key, typeName: typeName, parameter: parameter),
            writeDate: writeDate,
            expiry: expiry,
            durability: durability,
            byteLimit: byteLimit,
            payloadChecksum: payloadChecksum,
            origin: origin,
            onCommit: onCommit
        )
    }

    /// ``read(_:recordingAccess:locking:_:)`` of the file at `key`, expecting a header that
    /// records `typeName` and `parameter`.
    package func read<R>(
        _ key: DiskKey,
        typeName: String,
        parameter: String?,
        recordingAccess: Bool = true,
        locking: Bool = true,
        _ body: (Entry) throws -> R
    ) throws -> R? {
        try read(
            EntryKey(key, typeName: typeName, parameter: parameter),
            recordingAccess: recordingAccess,
            locking: locking,
            body
        )
    }
}
