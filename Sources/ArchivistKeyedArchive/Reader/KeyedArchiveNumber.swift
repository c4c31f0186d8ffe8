/// A number as an archive holds it — an integer, a real or a Boolean `NSNumber`, or an inline
/// scalar — read the way `NSCoder` reads it: into any numeric type that represents its value.
///
/// Both of Foundation's archivers make this necessary. corelibs' `NSKeyedArchiver` keys its
/// object table by equality, so equal `NSNumber`s are one object whatever their kind: a
/// record's `1` and another's `1.0` may both be stored as a third record's `true`. Apple's keys
/// it by identity, but still writes `encodeBool` as a Boolean that a model may read as an
/// integer. So every reader of numbers — the `Decoder`, ``KeyedArchiveUnarchiver``'s scalar
/// methods and the ``KeyedArchiveDecodable`` number types — goes through these conversions:
/// - an integer type takes any number whose value it holds exactly (`true` is 1, `1.0` is 1;
///   `1.5`, NaN and values out of its range are refused);
/// - `Double` takes any number it holds exactly (integers beyond 2^53 that it cannot hold are
///   refused); `Float` takes the nearest `Float`, as `NSCoder.decodeFloat(forKey:)` does, and
///   refuses a finite value beyond its range;
/// - `Bool` takes a Boolean, or a number equal to 0 or 1.
enum KeyedArchiveNumber {
    case integer(Int64)
    case unsignedInteger(UInt64)
    case real(Double)
    case bool(Bool)

    /// The number an object holds, or `nil` when it is not a number.
    @inline(__always)
    init?(_ object: KeyedArchiveObject?) {
        switch object {
        case .integer(let value)?: self = .integer(value)
        case .unsignedInteger(let value)?: self = .unsignedInteger(value)
        case .real(let value)?: self = .real(value)
        case .bool(let value)?: self = .bool(value)
        default: return nil
        }
    }

    /// The number an inline field holds, or `nil` when it is not a number.
    @inline(__always)
    init?(_ field: KeyedArchiveField) {
        switch field {
        case .integer(let value): self = .integer(value)
        case .unsignedInteger(let value): self = .unsignedInteger(value)
        case .real(let value): self = .real(value)
        case .bool(let value): self = .bool(value)
        default: return nil
        }
    }

    /// The value as a `T`, when `T` holds it exactly.
    func exactly<T: FixedWidthInteger>(_ type: T.Type) -> T? {
        switch self {
        case .integer(let value): T(exactly: value)
        case .unsignedInteger(let value): T(exactly: value)
        case .real(let value): T(exactly: value)
        case .bool(let value): value ? 1 : 0
        }
    }

    /// The value as a `Double`, when it holds it exactly.
    var double: Double? {
        switch self {
        case .integer(let value): Double(exactly: value)
        case .unsignedInteger(let value): Double(exactly: value)
        case .real(let value): value
        case .bool(let value): value ? 1 : 0
        }
    }

    /// The nearest `Float`, or `nil` for a finite value beyond `Float`'s range.
    var float: Float? {
        let value: Double
        switch self {
        case .integer(let integer): value = Double(integer)
        case .unsignedInteger(let integer): value = Double(integer)
        case .real(let real): value = real
        case .bool(let bool): value = bool ? 1 : 0
        }
        let nearest = Float(value)
        return nearest.isInfinite && value.isFinite ? nil : nearest
    }

    /// The value as a Boolean: a Boolean, or a number equal to 0 or 1.
    var bool: Bool? {
        switch self {
        case .bool(let value): value
        case .integer(let value): value == 0 || value == 1 ? value == 1 : nil
        case .real(let value): value == 0 || value == 1 ? value == 1 : nil
        case .unsignedInteger: nil
        }
    }
}
