#!/usr/bin/env bash
# Builds the DocC documentation of the library modules (Archivist, ArchivistKeyedArchive) with
# the toolchain's own docc, no package plugin, and fails on any warning — an unresolved or
# ambiguous symbol link, an undocumented parameter, a malformed article — except the ones
# listed in scripts/docs-known-warnings.txt.
#
#   scripts/build-docs.sh              # archives in .build/docs/<Module>.doccarchive
#
# That list holds the warnings docc reports on doc comments in Sources/ that are still to be
# fixed, as "path: message" (no line numbers, so that edits elsewhere in a file do not
# matter); a listed warning may occur as often as it is listed. Fix a comment, then delete its
# line: the script names the lines that no longer match. Nothing is ever added to it for the
# catalogs' own articles.
#
# Symbol graphs come from `swift package dump-symbol-graph`, which reuses the debug build
# (`swift build` / `swift test` leave it in place). DOCC=/path/to/docc overrides the docc
# binary (by default the one next to the swift on PATH). Needs python3 to read docc's
# diagnostics file.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

swift_bin=$(command -v swift)
docc=${DOCC:-$(dirname "$(readlink -f "$swift_bin")")/docc}
if [ ! -x "$docc" ]; then docc=$(command -v docc || true); fi
if [ -z "$docc" ] || [ ! -x "$docc" ]; then
    echo "build-docs: no docc next to $swift_bin or on PATH; set DOCC" >&2
    exit 1
fi

work=.build/docs
mkdir -p "$work"
dump_log=$work/dump-symbol-graph.log
# The tool extracts a graph for every module of the package and exits non-zero when one
# cannot be (on Linux, the test-discovery modules before the tests are built); only the two
# library modules matter here, so its status is not the verdict: their graphs, written by
# this run, are. The tool's last line names the folder it wrote the graphs to.
find .build -path '*/symbolgraph/Archivist*.symbols.json' -delete 2>/dev/null || true
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members \
    --emit-extension-block-symbols >"$dump_log" 2>&1 || true
graphs=$(sed -n 's/^Files written to //p' "$dump_log" | tail -1)
for module in Archivist ArchivistKeyedArchive; do
    if [ -z "$graphs" ] || [ ! -f "$graphs/$module.symbols.json" ]; then
        cat "$dump_log" >&2
        echo "build-docs: no symbol graph for $module" >&2
        exit 1
    fi
done

found=$work/warnings.txt
: >"$found"
for module in Archivist ArchivistKeyedArchive; do
    # Each module's graph and its extensions of other modules' types (Module@Other).
    input=$work/symbol-graphs/$module
    rm -rf "$input" "$work/$module.doccarchive"
    mkdir -p "$input"
    cp "$graphs/$module.symbols.json" "$input/"
    find "$graphs" -maxdepth 1 -name "$module@*.symbols.json" -exec cp {} "$input/" \;
    if ! "$docc" convert "Sources/$module/$module.docc" \
            --additional-symbol-graph-dir "$input" \
            --fallback-display-name "$module" \
            --fallback-bundle-identifier "org.archivist.$module" \
            --output-path "$work/$module.doccarchive" \
            --diagnostics-file "$work/$module-diagnostics.json" >"$work/$module.log" 2>&1; then
        cat "$work/$module.log" >&2
        echo "build-docs: docc failed for $module" >&2
        exit 1
    fi
    # One line per warning or error: the file relative to the package, and docc's message.
    python3 - "$work/$module-diagnostics.json" "$root" >>"$found" <<'PY'
import json, sys
from urllib.parse import unquote, urlparse
diagnostics, root = json.load(open(sys.argv[1]))["diagnostics"], sys.argv[2] + "/"
for d in diagnostics:
    if d["severity"] not in ("warning", "error"):
        continue
    path = unquote(urlparse(d.get("source") or "").path)
    print(f"{path[len(root):] if path.startswith(root) else path or '(no file)'}: {d['summary']}")
PY
    echo "built $work/$module.doccarchive"
done

sort -o "$found" "$found"
known=$(grep -v -e '^#' -e '^[[:space:]]*$' scripts/docs-known-warnings.txt | sort || true)
new=$(comm -23 "$found" <(printf '%s\n' "$known" | sed '/^$/d'))
gone=$(comm -13 "$found" <(printf '%s\n' "$known" | sed '/^$/d'))
if [ -n "$gone" ]; then
    echo "build-docs: these listed warnings are gone; delete them from scripts/docs-known-warnings.txt:"
    printf '%s\n' "$gone" | sed 's/^/  /'
fi
if [ -n "$new" ]; then
    echo "build-docs: new documentation warnings (docc's output: $work/<Module>.log):" >&2
    printf '%s\n' "$new" | sed 's/^/  /' >&2
    exit 1
fi
echo "build-docs: no new warnings ($(grep -c . "$found" || true) of those listed in scripts/docs-known-warnings.txt remain)"
