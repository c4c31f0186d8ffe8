import Archivist
import Foundation

extension KeyedArchiveValidator {
    /// Checks an `NSURL` instance the way corelibs' `NSURL.init(coder:)` will read it, and
    /// returns the URL it decodes to.
    ///
    /// corelibs decodes `NS.base` as an `NSURL`, bridges it to `URL`, then calls
    /// `NSURL(string: NS.relative, relativeTo: base)`. Bridging an `NSURL` to `URL` traps
    /// (a force unwrap in Foundation) when Swift's `URL(string:relativeTo:)` rejects a string that
    /// CoreFoundation's parser accepted — an empty string, or `http://[::1` — so a base URL
    /// like that crashes `init(coder:)` itself, and a decoded URL like that crashes the caller
    /// the first time it is used as a `URL`. Every URL must therefore satisfy both parsers,
    /// resolved against its base, and `NS.base` must be `$null` or another such `NSURL`.
    ///
    /// The `NS.base` chain is followed iteratively and each URL is resolved once
    /// (``Layout/resolvedURLs``), so the check is O(*n*) over all URLs of an archive.
    ///
    /// - Throws: `.corrupt` naming the field; `.unresolvedReference` for a cycle of bases;
    ///   `.limitExceeded(.depth)` for a chain of bases longer than `maxDepth`.
    @discardableResult
    func resolveURL(instance node: Int, in layout: inout Layout, path: [String]) throws -> URL {
        let document = layout.document
        func fail(_ key: String, _ expectation: String) -> ArchiveError {
            ArchiveError(.corrupt, "NSURL.\(key) must be \(expectation)", codingPath: path + [key], typeName: "NSURL")
        }
        // Unresolved instances from `node` down its bases, and the URL the last one is relative to.
        var chain: [Int] = []
        var base: URL?
        var current = node
        while true {
            if let known = layout.resolvedURLs[current] {
                base = known
                break
            }
            guard !chain.contains(current) else {
                throw ArchiveError(
                    .unresolvedReference,
                    "NSURL.NS.base chain loops back to itself",
                    codingPath: path + ["NS.base"],
                    typeName: "NSURL"
                )
            }
            guard chain.count < limits.maxDepth else {
                throw ArchiveError(
                    .limitExceeded(.depth),
                    "NSURL.NS.base chain longer than maxDepth (\(limits.maxDepth))",
                    codingPath: path + ["NS.base"],
                    typeName: "NSURL"
                )
            }
            chain.append(current)
            // An absent key would make corelibs record an error that fails every later decode.
            guard let baseValue = document.value(forKey: "NS.base", inDictionaryAt: current),
                let baseObject = layout.target(ofUIDAt: baseValue)
            else {
                throw fail("NS.base", "a reference ($null for none)")
            }
            let baseNode = layout.objects[baseObject]
            if document.string(at: baseNode) == "$null" { break }
            guard className(ofInstanceAt: baseNode, in: layout) == "NSURL" else {
                throw fail("NS.base", "$null or a reference to an NSURL")
            }
            current = baseNode
        }
        // Resolve from the innermost base outwards, as decoding will.
        for instance in chain.reversed() {
            guard let relativeValue = document.value(forKey: "NS.relative", inDictionaryAt: instance),
                let object = layout.target(ofUIDAt: relativeValue),
                let relative = document.string(at: layout.objects[object]), relative != "$null"
            else {
                throw fail("NS.relative", "a reference to a string")
            }
            guard let reference = NSURL(string: relative, relativeTo: base),
                URL(string: relative, relativeTo: base) != nil,
                let url = URL(string: reference.relativeString, relativeTo: base)
            else {
                throw fail(
                    "NS.relative",
                    "a URL string both NSURL(string:relativeTo:) and URL(string:relativeTo:) accept"
                )
            }
            layout.resolvedURLs[instance] = url
            base = url
        }
        guard let url = layout.resolvedURLs[node] else {
            // Unreachable: `node` is either resolved on entry or the first entry of `chain`.
            throw fail("NS.relative", "resolvable")
        }
        return url
    }

    /// The `$classname` of the class description an instance dictionary's `$class` names, or
    /// `nil` when `node` is not such an instance. Reads only; the allowlist is checked elsewhere.
    func className(ofInstanceAt node: Int, in layout: Layout) -> String? {
        let document = layout.document
        guard let classValue = document.value(forKey: "$class", inDictionaryAt: node),
            let classObject = layout.target(ofUIDAt: classValue),
            let nameNode = document.value(forKey: "$classname", inDictionaryAt: layout.objects[classObject])
        else {
            return nil
        }
        return document.string(at: nameNode)
    }
}
