import Foundation

@testable import ArchivistKeyedArchive

/// The `NSNull` tests put in graphs they hand to Foundation's `NSKeyedArchiver`: one instance,
/// as on Apple platforms. Two distinct corelibs `NSNull`s are equal but hash apart, and the
/// archiver traps on them by chance of the hash seed (see `KeyedArchiverBridgeNullTests`).
var foundationNull: NSNull { KeyedArchiveFoundationObjects.sharedNull }
