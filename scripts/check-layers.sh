#!/usr/bin/env bash
# The layer rule (docs/Architecture.md, "Layers"): each module, and each layer of the core,
# names only what its row of the layer table allows.
#
#   Support  <  Archiving, Storage  <  Cache, Stores
#       Archiving and Storage are siblings over Support, and so are Cache and Stores over both:
#       a layer names nothing declared in a layer above it or beside it.
#   ArchivistKeyedArchive    uses only the public API of Archivist.
#   ArchivistInspection      uses the public API of Archivist and ArchivistKeyedArchive, and of
#                            their `package` types only those listed in `inspection_may_name`
#                            below (the storage it inspects and repairs, the checksum, the
#                            archive outline, the property-list table).
#   ArchivistCLI (Tools/)    imports only ArchivistInspection (whose `ArchivistTool` does the
#                            work) and Foundation.
#   Benchmarks               imports Archivist and ArchivistKeyedArchive (public and `package`
#                            API: it measures internals such as the software CRC32C), never
#                            ArchivistInspection.
#   Every module imports only the modules its row names (`imports` below): the core never
#   imports the keyed module, the tool or the benchmarks, and nothing imports the tests.
#
# The first part reads the sources: every type declared at the top level of a layer's folder,
# then every type name used in the code (comments and string literals left out) of the layers
# that must not name it; then the same for ArchivistInspection against the `package` types of
# the modules below it; then every module's imports. The second type-checks the keyed module
# against the built Archivist module under another package name, where `package`
# declarations are out of reach.
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
    "Storage": ["Archiving", "Cache", "Stores"],
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

# ArchivistInspection: the public API of the modules below, and these of their `package` types.
inspection_may_name = {
    "DiskStore", "DiskKey", "EntryHeader", "EntryName", "FolderPath", "AtomicFile", "TemporaryName",
    "StorageError", "SharedStatistics", "MD5",      # Archivist's storage: what `ls`, `verify`, `clear` read and repair
    "CRC32C",                                        # the checksum `inspect` shows and checks
    "PersistentIndex",                               # the index's internal files `inspect` summarizes
    "ArchiveOutline",                                # Archivist's archiving: any native archive as a tree
    "PropertyListTable",                             # ArchivistKeyedArchive: any property list as a table
}
modifiers = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*((?:(?:public|package|internal|private|fileprivate|final|open|indirect|nonisolated)\s+)*)"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z]\w*)", re.M)
public, hidden = set(), {}
for module in ["Archivist", "ArchivistKeyedArchive"]:
    for f in sorted(pathlib.Path("Sources", module).rglob("*.swift")):
        for words, name in modifiers.findall(f.read_text()):
            if "public" in words or "open" in words:
                public.add(name)
            else:
                hidden.setdefault(name, module)
inspection = sorted(pathlib.Path("Sources/ArchivistInspection").rglob("*.swift"))
own = {name for f in inspection for _, name in modifiers.findall(f.read_text())}
for f in inspection:
    for number, line in enumerate(code_of(f.read_text()).split("\n"), 1):
        for token in sorted(set(re.findall(r"\b[A-Z]\w*\b", line))):
            if token in hidden and token not in public and token not in own and token not in inspection_may_name:
                failures.append(f"{f}:{number}: ArchivistInspection names {token}, a non-public type of {hidden[token]} "
                                "outside inspection_may_name")

# Imports: what each module may import besides the system's (Foundation, Dispatch, libc, ...).
system = {"Foundation", "Dispatch", "Glibc", "Darwin", "Observation", "notify", "Synchronization"}
imports = {
    "Sources/Archivist": {"CArchivistSupport"},
    "Sources/ArchivistKeyedArchive": {"Archivist"},
    "Sources/ArchivistInspection": {"Archivist", "ArchivistKeyedArchive"},
    "Tools": {"ArchivistInspection"},
    "Benchmarks": {"Archivist", "ArchivistKeyedArchive"},
}
statement = re.compile(r"^\s*(?:@\w+\s+)*(?:\w+\s+)?import\s+(?:\w+\s+)?(\w+)", re.M)
for folder, allowed in imports.items():
    for f in sorted(pathlib.Path(folder).rglob("*.swift")):
        for number, line in enumerate(code_of(f.read_text()).split("\n"), 1):
            m = statement.match(line)
            if m and m.group(1) not in allowed | system:
                failures.append(f"{f}:{number}: {folder} imports {m.group(1)}")

for failure in failures:
    print(failure)
if failures:
    print(f"check-layers: {len(failures)} uses across layers")
    sys.exit(1)
print("check-layers: Support < Archiving, Storage < Cache, Stores holds; ArchivistInspection names only its listed package types; every module's imports are its own")
PYTHON

# The keyed module against Archivist's public API only.
bin=$(swift build --show-bin-path)
find Sources/ArchivistKeyedArchive -name '*.swift' -print0 |
    xargs -0 swiftc -typecheck -swift-version 6 -package-name archivist-layer-check \
        -I "$bin/Modules" -I "$bin" \
        -Xcc -fmodule-map-file="$bin/CArchivistSupport.build/module.modulemap" \
        -Xcc -ISources/CArchivistSupport/include
echo "check-layers: ArchivistKeyedArchive uses only Archivist's public API"

