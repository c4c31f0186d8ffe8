#!/usr/bin/env bash
# Compiles every ```swift block of README.md, docs/*.md and the DocC articles
# (Sources/*/*.docc/*.md) against the package's library products, and fails with the
# document's file:line on any compile error.
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
