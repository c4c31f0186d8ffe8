#!/usr/bin/env bash
# Compiles every ```swift block of README.md, docs/*.md and the DocC articles
# (Sources/*/*.docc/*.md) against the package's library products, and of the `///` doc comments
# of the public and package declarations of Archivist and ArchivistKeyedArchive against the
# package's own debug build, and fails with the document's (or source file's) file:line on any
# compile error.
#
#   scripts/check-snippets.sh          # scratch package in .build/snippets, one `swift build`
#
# scripts/snippets/extract.py writes one target per document: the document's declarations
# together in one file, each block of statements in a synchronous function and in an `async`
# one (only `async` when it says `await`), plus the names the snippets take for granted from
# scripts/snippets/context/<document>.swift. An HTML comment right before a block changes
# that: `<!-- snippet: declarations -->`, `sync`, `async`, `manifest` (a Package.swift, checked
# with `swift package dump-package`) or `skip REASON`. A block in another language (```sh) is
# never compiled. The package depends on this one by path, so its first build compiles the
# libraries once more in .build/snippets/.build; later runs rebuild only the snippets.
# Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=.build/snippets

mkdir -p "$out"
python3 scripts/snippets/extract.py generate "$root" "$out"

status=0
for folder in "$out"-manifests/*/; do
    [ -f "$folder/Package.swift" ] || continue
    origin=$(cat "$folder/origin")
    if ! (cd "$folder" && swift package dump-package >dump.log 2>&1); then
        echo "$origin: error: the manifest does not load:" >&2
        cat "$folder/dump.log" >&2
        status=1
    fi
done

# The doc comments' examples: each source file's, type-checked against this package's own
# debug build under its package name (so `package` declarations are in reach), two at a time.
comments_log=$out/doc-comments.log
: >"$comments_log"
if [ -d "$out-doc-comments" ]; then
    swift build >/dev/null
    bin=$(swift build --show-bin-path)
    export bin
    find "$out-doc-comments" -mindepth 1 -maxdepth 1 -type d -print0 |
        xargs -0 -P 2 -I{} sh -c 'swiftc -typecheck -swift-version 6 -package-name "$(cat "$1/package-name")" \
            -I "$bin/Modules" -I "$bin" -Xcc -fmodule-map-file="$bin/CArchivistSupport.build/module.modulemap" \
            -Xcc -ISources/CArchivistSupport/include "$1"/*.swift >"$1/typecheck.log" 2>&1 || true' sh {}
    cat "$out-doc-comments"/*/typecheck.log >>"$comments_log"
    if grep -q "error:" "$comments_log"; then
        python3 scripts/snippets/extract.py report "$root" "$out" "$comments_log" || true
        echo "check-snippets: the doc comments' examples do not compile (full log: $comments_log)" >&2
        status=1
    fi
fi

log=$out/build.log
if swift build --package-path "$out" >"$log" 2>&1; then
    python3 scripts/snippets/extract.py report "$root" "$out" "$log" || true
else
    if ! python3 scripts/snippets/extract.py report "$root" "$out" "$log"; then
        :
    fi
    echo "check-snippets: the snippets do not compile (full log: $log)" >&2
    status=1
fi
if [ "$status" -eq 0 ]; then echo "check-snippets: every snippet compiles"; fi
exit "$status"
