import Foundation

/// Keyed archives of `NSURL`s with chosen `NS.base` and `NS.relative` fields, written as XML
/// property lists so each case reads as what it is. Object 1 is the NSURL class description,
/// object 2 an NSArray class description, the root is object 3.
enum KeyedArchiveURLs {
    /// A field of an NSURL instance: a string object to create, or a reference to an object.
    enum Field {
        case string(String)
        case object(Int)
    }

    /// An archive whose `$objects` after the two class descriptions are `objects`.
    static func archive(_ objects: [String]) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(3))</dict>\
            <key>$objects</key><array><string>$null</string>\
            <dict><key>$classname</key><string>NSURL</string></dict>\
            <dict><key>$classname</key><string>NSArray</string></dict>\(objects.joined())</array></dict></plist>
            """.utf8
        )
    }

    /// An NSURL instance whose fields refer to the objects at `base` and `relative`.
    static func url(base: Int, relative: Int) -> String {
        "<dict><key>$class</key>\(uid(1))<key>NS.base</key>\(uid(base))<key>NS.relative</key>\(uid(relative))</dict>"
    }

    /// An NSArray instance holding the objects at `elements`.
    static func array(_ elements: [Int]) -> String {
        "<dict><key>$class</key>\(uid(2))<key>NS.objects</key><array>\(elements.map(uid).joined())</array></dict>"
    }

    static func string(_ value: String) -> String {
        "<string>\(value.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;"))</string>"
    }

    /// The root NSURL `relative`, relative to a base NSURL `base` (itself without a base), or
    /// to none: objects 3 (root), 4 (its relative string), 5 (base URL), 6 (base string).
    static func url(_ relative: String, base: String?) -> Data {
        archive([
            url(base: base == nil ? 0 : 5, relative: 4), string(relative),
            url(base: 0, relative: 6), string(base ?? "unused"),
        ])
    }

    /// Inputs the bridge must refuse with `.corrupt` (each crashed corelibs Foundation before
    /// the validator resolved URLs against their bases), with what each one is.
    static let refused: [(name: String, data: Data)] = [
        // NSURL.init(coder:) bridges its base to URL, which traps on a string Swift's URL rejects.
        ("base URL is the empty string", url("https://example.com/a", base: "")),
        ("base URL is the empty string, relative path", url("b/c", base: "")),
        // A decoded URL that traps when used as a URL (e.g. inside an NSArray's description).
        ("root URL Swift's URL parser rejects", url("http://[::1", base: nil)),
        ("root URL is the empty string", url("", base: nil)),
        ("NS.base refers to a string", archive([url(base: 4, relative: 4), string("a/b")])),
        ("NS.base refers to an NSArray", archive([url(base: 5, relative: 4), string("a/b"), array([])])),
    ]

    private static func uid(_ value: Int) -> String { "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
}
