#!/usr/bin/env bash
# Mutation check: applies each hand-made mutation of a critical line (scripts/mutations.tsv),
# builds, runs the suites named for it, and restores the file. A mutation is *killed* when
# those suites fail (or hang past the timeout); one that survives is a missing test. Run it
# before a release; docs/Reliability.md ("Mutation testing") records the score;
# scripts/mutation-sweep.sh samples mutants nobody chose.
#
#   scripts/mutation-check.sh            # every mutation
#   scripts/mutation-check.sh NAME...    # only these
#   scripts/mutation-check.sh --validate # no build: every entry's text occurs exactly once
#                                        # (CI runs it, so a reformat cannot leave the table stale)
#
# Each line of mutations.tsv: name, file, the exact text to replace (it must occur exactly
# once), its replacement, and the `swift test --filter` pattern of the suites that must fail;
# fields separated by tabs. Exit status: 0 when every mutation was killed.
set -uo pipefail
cd "$(dirname "$0")/.."
table=scripts/mutations.tsv

# How many times the text FROM occurs in a file.
occurrences() { FROM="$1" perl -0ne 'BEGIN { $n = 0 } $n += () = /\Q$ENV{FROM}\E/g; END { print $n }' "$2"; }

if [ "${1:-}" = "--validate" ]; then
    stale=0; entries=0
    while IFS=$'\t' read -r name file from to filter; do
        case "$name" in ''|'#'*) continue ;; esac
        entries=$((entries + 1))
        if [ ! -f "$file" ]; then
            echo "mutation table: $name names $file, which does not exist"; stale=$((stale + 1))
        elif [ "$(occurrences "$from" "$file")" != 1 ] || [ -z "$filter" ]; then
            echo "mutation table: $name: its text does not occur exactly once in $file (or it names no suites)"
            stale=$((stale + 1))
        fi
    done < "$table"
    [ "$stale" -eq 0 ] && echo "mutation table: all $entries entries apply"
    exit $((stale > 0))
fi
timeout_seconds=${MUTATION_TIMEOUT:-600}
if [ -n "$(git status --porcelain -- Sources)" ]; then
    echo "Sources has uncommitted changes: commit or stash them first (each mutation is undone with git checkout)." >&2
    exit 2
fi
swift build --build-tests >/dev/null 2>&1 || { echo "the unmutated tree does not build" >&2; exit 2; }

killed=0; survived=(); invalid=()
while IFS=$'\t' read -r name file from to filter; do
    case "$name" in ''|'#'*) continue ;; esac
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
    count=$(occurrences "$from" "$file")
    if [ "$count" != 1 ]; then
        echo "INVALID  $name: the text to replace occurs $count times in $file"
        invalid+=("$name"); continue
    fi
    FROM="$from" TO="$to" perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$file"
    if ! swift build --build-tests >/dev/null 2>&1; then
        echo "INVALID  $name: the mutated tree does not build"
        invalid+=("$name")
    elif timeout "$timeout_seconds" swift test --skip-build --filter "$filter" >/dev/null 2>&1; then
        echo "SURVIVED $name ($file; suites: $filter)"
        survived+=("$name")
    else
        echo "killed   $name"
        killed=$((killed + 1))
    fi
    git checkout -q -- "$file"
done < "$table"
swift build --build-tests >/dev/null 2>&1
total=$((killed + ${#survived[@]} + ${#invalid[@]}))
echo "mutation check: $killed of $total killed, ${#survived[@]} survived, ${#invalid[@]} invalid"
[ ${#survived[@]} -eq 0 ] && [ ${#invalid[@]} -eq 0 ]
