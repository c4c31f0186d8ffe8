import Foundation
import Testing

@testable import Archivist

@Suite struct PlistValueTests {
    @Test func literalsBuildNestedValues() {
        let value: PlistValue = ["name": "Reading", "minutes": 25, "ratio": 0.5, "on": true, "tags": ["a", 1]]
        #expect(value["name"] == .string("Reading"))
        #expect(value["minutes"]?.intValue == 25)
        #expect(value["ratio"]?.doubleValue == 0.5)
        #expect(value["on"]?.boolValue == true)
        #expect(value["tags"]?[1] == .int(1))
        #expect(value["tags"]?[2] == nil)
        #expect(value["missing"] == nil)
        #expect(value[0] == nil, "a dictionary has no elements by index")
    }

    @Test func accessorsAreStrictAboutKinds() {
        let text: PlistValue = "1"
        #expect(text.intValue == nil)
        #expect(text.boolValue == nil)
        let one: PlistValue = 1
        #expect(one.boolValue == nil, "a number is not a Boolean")
        #expect(one.stringValue == nil)
        #expect(PlistValue.double(2.0).intValue == 2)
        #expect(PlistValue.double(2.5).intValue == nil)
        #expect(PlistValue.double(.infinity).intValue == nil)
        #expect(PlistValue.int(3).doubleValue == 3)
    }

    @Test func foundationObjectsConvertByStorageType() throws {
        let legacy: [String: Any] = [
            "int": NSNumber(value: 7), "real": NSNumber(value: 2.0), "float": Float(1.5),
            "bool": NSNumber(value: true), "swiftBool": false, "int8": Int8(-3), "uint": UInt32(9),
            "string": NSString(string: "ns"), "date": Date(timeIntervalSince1970: 5),
            "data": Data([1, 2]), "array": NSArray(array: [1, "x"]),
            "dict": NSDictionary(dictionary: ["k": ["deep": true]]),
        ]
        let value = try PlistValue(propertyList: legacy)
        let expected: PlistValue = [
            "int": 7, "real": .double(2), "float": 1.5, "bool": true, "swiftBool": false,
            "int8": -3, "uint": 9, "string": "ns", "date": .date(Date(timeIntervalSince1970: 5)),
            "data": .data(Data([1, 2])), "array": [1, "x"], "dict": ["k": ["deep": true]],
        ]
        #expect(value == expected)
    }

    @Test func propertyListObjectRoundTrips() throws {
        let value: PlistValue = ["a": [1, 2.5, true, "s"], "b": ["c": .data(Data([9]))]]
        #expect(try PlistValue(propertyList: value.propertyListObject) == value)
    }

    /// Values that are not property lists, built on demand because `Any` is not `Sendable`.
    enum Offender: CaseIterable, Sendable {
        case null, nullInArray, customType, hugeUnsigned, nilOptional, integerKeys

        struct NotAPlist {}

        var example: (object: [String: Any], path: String, reason: String) {
            switch self {
            case .null: (["a": NSNull()], "a", "NSNull")
            case .nullInArray: (["tags": ["ok", NSNull()] as [Any]], "tags[1]", "NSNull")
            case .customType: (["alert": ["hour": NotAPlist()] as [String: Any]], "alert.hour", "NotAPlist")
            case .hugeUnsigned: (["big": UInt64.max], "big", "does not fit")
            case .nilOptional: (["n": Int?.none as Any], "n", "nil")
            case .integerKeys: (["keys": [1: "one"] as [Int: String]], "keys", "keys must be strings")
            }
        }
    }

    @Test(arguments: Offender.allCases)
    func nonPlistValuesNameTheirPath(offender: Offender) {
        let (object, path, reason) = offender.example
        do {
            _ = try PlistValue(propertyList: object)
            Issue.record("expected an error for \(path)")
        } catch let error as StoreError {
            #expect(error.code == .notRepresentable)
            #expect(error.key == path)
            #expect(error.message.contains(reason), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func convertibleTypesRoundTrip() {
        #expect([String: [Int]](plistValue: ["a": [1, 2]]) == ["a": [1, 2]])
        #expect([Int](plistValue: [1, "x"]) == nil, "one bad element fails the whole array")
        #expect(Sample(plistValue: "two") == .two)
        #expect(Sample(plistValue: "zero") == nil)
        #expect(Sample.two.plistValue == "two")
        #expect(Date(plistValue: .date(.distantPast)) == .distantPast)
        #expect(Data(plistValue: "x") == nil)
    }

    @Test func descriptionIsCompactAndSorted() {
        let value: PlistValue = ["b": [1, true], "a": "x", "d": .data(Data([1, 2, 3]))]
        #expect(value.description == #"{"a": "x", "b": [1, true], "d": <3 bytes>}"#)
    }
}

private enum Sample: String, PlistConvertible { case one, two }
