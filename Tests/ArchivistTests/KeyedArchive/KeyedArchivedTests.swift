import Archivist
import ArchivistKeyedArchive
import Foundation
import Testing

/// A declared `NSSecureCoding` class held by a `Codable` model through `@KeyedArchived`: the
/// model stays synthesized, the class keeps its identity inside one Archivist archive (as it
/// does in hand-written models), and other coders carry the class's keyed archive as data.
@Suite struct KeyedArchivedTests {
    struct Shipment: Codable, Archivable {
        @KeyedArchived var order: SecureOrder
        @KeyedArchived var backup: SecureOrder
        var note: String
    }

    struct Depot: Codable, Archivable {
        var shipments: [Shipment]
        @KeyedArchived var featured: SecureOrder
    }

    @Test func aDeclaredClassRoundTripsInsideACodableModel() throws {
        let order = SecureOrder(number: "A-1", total: 12.5)
        let copy = try Archive.decode(
            Shipment.self,
            from: try Archive.encode(Shipment(order: order, backup: order, note: "fragile"))
        )
        #expect(copy.order.number == "A-1" && copy.order.total == 12.5 && copy.note == "fragile")
        #expect(copy.order === copy.backup)
        #expect(copy.order !== order)
    }

    @Test func identityIsKeptAcrossTheWholeArchive() throws {
        let first = SecureOrder(number: "A-1", total: 1)
        let second = SecureOrder(number: "B-2", total: 2)
        let depot = Depot(
            shipments: [
                Shipment(order: first, backup: second, note: "a"), Shipment(order: second, backup: first, note: "b"),
            ],
            featured: second
        )
        let copy = try Archive.decode(Depot.self, from: try Archive.encode(depot))
        #expect(copy.shipments.map(\.order.number) == ["A-1", "B-2"])
        #expect(copy.shipments[0].order === copy.shipments[1].backup)
        #expect(copy.shipments[0].backup === copy.shipments[1].order)
        #expect(copy.featured === copy.shipments[1].order)
        #expect(copy.shipments[0].order !== copy.shipments[0].backup)
    }

    /// Outside Archivist (`JSONEncoder`, `KeyedArchiveWriter`) the field is the class's keyed
    /// archive as data, read back through the validating bridge.
    @Test func otherCodersCarryTheKeyedArchiveAsData() throws {
        let shipment = Shipment(
            order: SecureOrder(number: "C-3", total: 3),
            backup: SecureOrder(number: "D-4", total: 4),
            note: "n"
        )
        let json = try JSONDecoder().decode(Shipment.self, from: try JSONEncoder().encode(shipment))
        #expect(json.order.number == "C-3" && json.backup.total == 4)
        let keyed = try KeyedArchive.decode(Shipment.self, from: try KeyedArchiveWriter.encode(shipment))
        #expect(keyed.order.number == "C-3" && keyed.backup.number == "D-4" && keyed.note == "n")
    }

    @Test func badBytesThrowTheBridgesTypedErrors() throws {
        let garbage = #"{"order": "bm90IGEgcGxpc3Q=", "backup": "bm90IGEgcGxpc3Q=", "note": ""}"#
        let error = #expect(throws: ArchiveError.self) {
            try JSONDecoder().decode(Shipment.self, from: Data(garbage.utf8))
        }
        #expect(error?.code == .badMagic, "\(String(describing: error))")
    }
}
