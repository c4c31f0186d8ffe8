#!/usr/bin/env bash
# The layer rule (docs/Architecture.md, "Layers"): a layer names nothing declared in a layer
# above it or beside it.
#
#   Support  <  Archiving  <  Storage  <  Cache, Stores   (Cache and Stores name each other's
#                                                           types neither)
#   ArchivistKeyedArchive uses only the public API of Archivist.
#
# The first part reads the sources: every type declared at the top level of a layer's folder,
# then every type name used in the code (comments and string literals left out) of the layers
# that must not name it. The second type-checks the keyed module against the built Archivist
# module under another package name, where Archivist's `package` declarations are out of reach.
# Needs a debug build (`swift build`). Exits 1 and names each use when the rule is broken.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 - <<'PYTHON'
import pathlib, re, sys

root = pathlib.Path("Sources/Archivist")
layers = {name: sorted((root / name).rglob("*.swift")) for name in ["Support", "Archiving", "Storage", "Cache", "Stores"]}
# What each layer must not name: the layers above it, and its sibling.
forbidden = {
    "Support": ["Archiving", "Storage", "Cache", "Stores"],
    "Archiving": ["Storage", "Cache", "Stores"],
    "Storage": ["Cache", "Stores"],
    "Cache": ["Stores"],
    "Stores": ["Cache"],
}
declaration = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|open|indirect|nonisolated)\s+)*"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z]\w*)", re.M)

def code_of(text):
    """The text without comments and string literals (so a name in prose or a message is no use)."""
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    text = re.sub(r"/\*[\s\S]*?\*/", "", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"//[^\n]*", "", text)

declared = {layer: {name for f in files for name in declaration.findall(f.read_text())} for layer, files in layers.items()}
failures = []
for layer, files in layers.items():
    names = {name: other for other in forbidden[layer] for name in declared[other]}
    for f in files:
        for number, line in enumerate(code_of(f.read_text()).split("\n"), 1):
            for token in set(re.findall(r"\b[A-Z]\w*\b", line)):
                if token in names and token not in declared[layer]:
                    failures.append(f"{f}:{number}: {layer} names {token}, declared in {names[token]}")
for failure in failures:
    print(failure)
if failures:
    print(f"check-layers: {len(failures)} uses across layers")
    sys.exit(1)
print("check-layers: Support < Archiving < Storage < Cache, Stores holds")
PYTHON

# The keyed module against Archivist's public API only.
bin=$(swift build --show-bin-path)
find Sources/ArchivistKeyedArchive -name '*.swift' -print0 |
    xargs -0 swiftc -typecheck -swift-version 6 -package-name archivist-layer-check \
        -I "$bin/Modules" -I "$bin" \
        -Xcc -fmodule-map-file="$bin/CArchivistSupport.build/module.modulemap" \
        -Xcc -ISources/CArchivistSupport/include
echo "check-layers: ArchivistKeyedArchive uses only Archivist's public API"
