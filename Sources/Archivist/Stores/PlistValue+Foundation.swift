import Foundation

extension PlistValue {
    /// Converts a Foundation property-list object (`String`, `NSNumber`, `Bool`, `Date`,
    /// `Data`, arrays and string-keyed dictionaries of those, Swift or `NS` classes alike) into
    /// a ``PlistValue``.
    ///
    /// This is the bridge for code that still holds `Any`, such as the seeds'
    /// `[String: Any]`. Anything else, including `NSNull`, an optional that is `nil`, a
    /// dictionary with a non-string key, or an unsigned integer above `Int.max`, throws and
    /// names the offending value's path.
    ///
    /// ```swift
    /// let legacy: [String: Any] = ["id": 2, "tags": ["a", "b"], "alert": ["hour": 7]]
    /// let value = try PlistValue(propertyList: legacy)
    /// try store.set(value, forKey: "task", in: "taskData")
    /// ```
    ///
    /// - Parameter object: a property-list object.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/notRepresentable``; its `key` is
    ///   the path to the offending value (`alert.hour`, `tags[1]`).
    /// - Complexity: O(n) in the number of values; no file I/O.
    public init(propertyList object: Any) throws {
        do {
            self = try Self.convert(object)
        } catch {
            throw StoreError(.notRepresentable, error.reason, key: error.path.isEmpty ? nil : error.pathDescription)
        }
    }

    /// The Foundation object `PropertyListSerialization` writes for this value: `String`,
    /// `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]` or `[String: Any]`.
    ///
    /// ```swift
    /// let bytes = try PropertyListSerialization.data(
    ///     fromPropertyList: value.propertyListObject, format: .binary, options: 0)
    /// ```
    ///
    /// Built iteratively (containers wait on an explicit stack), so a deeply nested value costs
    /// heap, not stack.
    ///
    /// - Complexity: O(n) in the number of values; no file I/O.
    public var propertyListObject: Any {
        // A limit no value reaches: `Int.max` containers cannot be held in memory.
        propertyListObject(depthLimit: .max) ?? [String: Any]()
    }

    /// ``propertyListObject``, or `nil` when containers nest more than `depthLimit` deep
    /// (this value counts as one level when it is a container).
    func propertyListObject(depthLimit: Int) -> Any? {
        guard var top = ObjectFrame(self) else { return scalarObject }
        guard depthLimit >= 1 else { return nil }
        var waiting: [ObjectFrame] = []
        while true {
            if top.next < top.children.count {
                let child = top.children[top.next]
                if let frame = ObjectFrame(child) {
                    guard waiting.count + 2 <= depthLimit else { return nil }
                    waiting.append(top)
                    top = frame
                } else {
                    top.add(child.scalarObject)
                }
                continue
            }
            let finished = top.object
            guard let parent = waiting.popLast() else { return finished }
            top = parent
            top.add(finished)
        }
    }

    /// A scalar's Foundation object (a container's is built by ``propertyListObject``).
    private var scalarObject: Any {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .double(let value): value
        case .bool(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array, .dictionary: [String: Any]()  // never asked: containers have frames
        }
    }

    /// A container whose Foundation object is being built: its children, the next one to
    /// convert and what the converted ones became.
    private struct ObjectFrame {
        let keys: [String]?  // nil for an array
        let children: [PlistValue]
        var next = 0
        var elements: [Any] = []
        var entries: [String: Any] = [:]

        init?(_ value: PlistValue) {
            switch value {
            case .array(let values):
                keys = nil
                children = values
                elements.reserveCapacity(values.count)
            case .dictionary(let values):
                keys = Array(values.keys)
                children = Array(values.values)
                entries.reserveCapacity(values.count)
            default:
                return nil
            }
        }

        mutating func add(_ object: Any) {
            if let keys { entries[keys[next]] = object } else { elements.append(object) }
            next += 1
        }

        var object: Any { keys == nil ? elements : entries }
    }

    // MARK: Conversion

    /// Why a conversion failed and where, built up as the error unwinds.
    struct ConversionFailure: Error {
        var reason: String
        var path: [String] = []

        var pathDescription: String {
            var out = ""
            for component in path {
                if component.hasPrefix("[") || out.isEmpty { out += component } else { out += "." + component }
            }
            return out
        }
    }

    /// Converts `object` and everything inside it.
    ///
    /// Iterative (containers wait on an explicit stack), so the deepest nesting Foundation's
    /// parser reads (about 511 levels) converts on a 512 KiB thread, and a deeper `Any` from
    /// the caller costs heap, not stack.
    static func convert(_ object: Any) throws(ConversionFailure) -> PlistValue {
        var step = try classify(object)
        guard case .value(let scalar) = step else {
            var stack: [ContainerFrame] = []
            while true {
                switch step {
                case .value(let value):
                    // `value` belongs to the container on top of the stack.
                    stack[stack.count - 1].add(value)
                case .array(let elements):
                    stack.append(ContainerFrame(elements: elements))
                case .dictionary(let entries):
                    stack.append(ContainerFrame(entries: entries))
                case .stringDictionary(let entries):
                    stack.append(ContainerFrame(stringEntries: entries))
                }
                // Finish every container whose children are all converted, then descend into
                // the next child of the innermost unfinished one.
                while true {
                    let top = stack.count - 1
                    let next: Any?
                    do { next = try stack[top].nextChild() } catch { throw failure(error, under: stack.dropLast()) }
                    if let next {
                        do { step = try classify(next) } catch { throw failure(error, under: stack[...]) }
                        break
                    }
                    let finished = stack.removeLast().value
                    if stack.isEmpty { return finished }
                    stack[stack.count - 1].add(finished)
                }
            }
        }
        return scalar
    }

    /// `error` raised at the current child of every frame of `stack`, with their keys and
    /// indexes as its path.
    private static func failure(
        _ error: ConversionFailure,
        under stack: ArraySlice<ContainerFrame>
    ) -> ConversionFailure {
        var failure = error
        failure.path = stack.map(\.childPathComponent) + failure.path
        return failure
    }

    /// One object sorted out: a finished value, or a container whose children are still to
    /// be converted.
    private enum Step {
        case value(PlistValue)
        case array([Any])
        case dictionary([AnyHashable: Any])
        case stringDictionary([String: Any])
    }

    /// A container being converted: its source, the children converted so far, and which
    /// child is being converted now.
    private struct ContainerFrame {
        private enum Source {
            case array([Any], next: Int)
            case dictionary([AnyHashable: Any], next: Dictionary<AnyHashable, Any>.Index)
            case stringDictionary([String: Any], next: Dictionary<String, Any>.Index)
        }

        private var source: Source
        private var elements: [PlistValue] = []
        private var entries: [String: PlistValue] = [:]
        /// The key of the child being converted (dictionaries).
        private var childKey = ""

        init(elements: [Any]) {
            source = .array(elements, next: 0)
            self.elements.reserveCapacity(elements.count)
        }

        init(entries: [AnyHashable: Any]) {
            source = .dictionary(entries, next: entries.startIndex)
            self.entries.reserveCapacity(entries.count)
        }

        init(stringEntries: [String: Any]) {
            source = .stringDictionary(stringEntries, next: stringEntries.startIndex)
            entries.reserveCapacity(stringEntries.count)
        }

        /// `[i]` or the key of the child being converted.
        var childPathComponent: String {
            if case .array = source { return "[\(elements.count)]" }
            return childKey
        }

        /// The next child to convert, or `nil` when all are converted.
        mutating func nextChild() throws(ConversionFailure) -> Any? {
            switch source {
            case .array(let array, let next):
                guard next < array.count else { return nil }
                source = .array(array, next: next + 1)
                return array[next]
            case .dictionary(let dictionary, let next):
                guard next < dictionary.endIndex else { return nil }
                let (key, element) = dictionary[next]
                source = .dictionary(dictionary, next: dictionary.index(after: next))
                guard let key = key.base as? String else {
                    throw ConversionFailure(
                        reason: "property-list dictionary keys must be strings, found \(type(of: key.base)) \(key)"
                    )
                }
                childKey = key
                return element
            case .stringDictionary(let dictionary, let next):
                guard next < dictionary.endIndex else { return nil }
                let (key, element) = dictionary[next]
                source = .stringDictionary(dictionary, next: dictionary.index(after: next))
                childKey = key
                return element
            }
        }

        /// Stores the converted child.
        mutating func add(_ value: PlistValue) {
            if case .array = source { elements.append(value) } else { entries[childKey] = value }
        }

        /// The converted container.
        var value: PlistValue {
            if case .array = source { return .array(elements) }
            return .dictionary(entries)
        }
    }

    private static func classify(_ object: Any) throws(ConversionFailure) -> Step {
        // Fast path: the exact types PropertyListSerialization produces, matched by metatype
        // (cheap) before any dynamic cast (not cheap); this keeps a read close to
        // PropertyListSerialization alone (the `stores` suite's plist reads guard it). Numbers
        // are classified by their storage type, because a Swift cast would turn NSNumber(1)
        // into `true` on Apple platforms.
        let dynamicType = type(of: object)
        #if canImport(Darwin)
        // Apple's PropertyListSerialization returns Objective-C objects (`__NSCFString`,
        // `NSTaggedPointerString`, `__NSCFNumber`, `__NSCFBoolean`, `__NSDictionaryM`,
        // `__NSArrayM`, `__NSDate`, `_NSInlineData`…), whose metatypes are never `String.self`
        // and the rest: classify those by class, bridging each lazily. A Swift value (not a
        // class) goes on to the metatype checks below.
        if dynamicType is AnyObject.Type {
            if let number = object as? NSNumber { return .value(try convert(number)) }
            if let value = object as? NSString { return .value(.string(value as String)) }
            if let value = object as? NSDictionary { return .dictionary(value as [AnyHashable: Any]) }
            if let value = object as? NSArray { return .array(value as [Any]) }
            if let value = object as? NSDate { return .value(.date(value as Date)) }
            if let value = object as? NSData { return .value(.data(value as Data)) }
        }
        #endif
        if dynamicType == String.self, let value = object as? String { return .value(.string(value)) }
        if dynamicType is NSNumber.Type, let number = object as? NSNumber { return .value(try convert(number)) }
        if dynamicType == Bool.self, let value = object as? Bool { return .value(.bool(value)) }
        if dynamicType == [AnyHashable: Any].self, let value = object as? [AnyHashable: Any] {
            return .dictionary(value)
        }
        if dynamicType == [Any].self, let value = object as? [Any] { return .array(value) }
        if dynamicType == Date.self, let value = object as? Date { return .value(.date(value)) }
        if dynamicType == Data.self, let value = object as? Data { return .value(.data(value)) }
        return try classifyBridged(object)
    }

    /// The general path: Swift values of other types, `NS` containers and bridged objects.
    private static func classifyBridged(_ object: Any) throws(ConversionFailure) -> Step {
        switch object {
        case let value as String: return .value(.string(value))
        case let value as Bool: return .value(.bool(value))
        case let value as Int: return .value(.int(value))
        case let value as Double: return .value(.double(value))
        case let value as Date: return .value(.date(value))
        case let value as Data: return .value(.data(value))
        case let value as [String: Any]: return .stringDictionary(value)
        case let value as [AnyHashable: Any]: return .dictionary(value)
        case let value as [Any]: return .array(value)
        case let value as any BinaryInteger:
            guard let int = Int(exactly: value) else {
                throw ConversionFailure(reason: "integer \(value) does not fit in a property-list integer (Int)")
            }
            return .value(.int(int))
        case let value as Float: return .value(.double(Double(value)))
        default:
            if Mirror(reflecting: object).displayStyle == .optional {
                throw ConversionFailure(reason: "nil cannot be stored in a property list; remove the key instead")
            }
            throw ConversionFailure(reason: "a value of type \(type(of: object)) cannot be stored in a property list")
        }
    }

    private static func convert(_ number: NSNumber) throws(ConversionFailure) -> PlistValue {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            return .double(number.doubleValue)
        case UInt8(ascii: "c") where number === NSNumber(value: true) || number === NSNumber(value: false):
            // Booleans are the two CFBoolean singletons on every platform.
            return .bool(number.boolValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"):
            guard let int = Int(exactly: number.uint64Value) else {
                throw ConversionFailure(
                    reason: "integer \(number.uint64Value) does not fit in a property-list integer (Int)"
                )
            }
            return .int(int)
        default:
            // `Int` is 32 bits on watchOS devices (arm64_32): a wider integer is refused, not cut.
            guard let int = Int(exactly: number.int64Value) else {
                throw ConversionFailure(
                    reason: "integer \(number.int64Value) does not fit in a property-list integer (Int)"
                )
            }
            return .int(int)
        }
    }
}
