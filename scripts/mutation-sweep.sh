#!/usr/bin/env bash
# Mutation sweep: mutants the project does not choose case by case. scripts/mutation_sweep.py
# lists every one-operator mutant of the critical code — `<`/`<=`, `>`/`>=`, `==`/`!=`,
# `&&`/`||`, `true`/`false`, a statement removed, a guard's condition negated, an integer
# constant off by one — in Storage/{Files,Store,Index,Locks}, the cache's read and expiry
# paths, Preferences, RecordStore, the keyed archive's validator, reader and writer, and the
# verifier; this script samples some with a seed, and for each: mutates the file, builds,
# runs the suites mapped to the file's folder, and restores the file. docs/Reliability.md
# ("Mutation testing") records the score.
#
#   scripts/mutation-sweep.sh --seed 7 --count 25     # a sample (CI: a few dozen)
#   scripts/mutation-sweep.sh --count 0               # every candidate (before a release: hours)
#   scripts/mutation-sweep.sh --list --seed 7 --count 25   # only print the sample
#   scripts/mutation-sweep.sh --only ID...            # these mutants (IDs as --list prints them)
#
# A mutant is *killed* when its suites fail, or run past the timeout (MUTATION_TIMEOUT,
# default 600 s: killed by timeout); *survived* when they pass; *not compiled* when the
# build fails (not counted). A survivor recorded in scripts/mutation-equivalents.tsv (its file,
# the text of its line, operator and original text, with the reason) is *equivalent*: it
# cannot change what the code does, and is left out of the score,
#   killed / (compiled - equivalent).
# Each mutation is made in the working tree and undone with `git checkout` (also on Ctrl-C or
# an error), so Sources must have no uncommitted change. Results: .build-mutants/results.tsv.
set -uo pipefail
cd "$(dirname "$0")/.."

seed=1; count=25; list=false; only=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seed) seed=$2; shift 2 ;;
        --count) count=$2; shift 2 ;;
        --list) list=true; shift ;;
        --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do only+=("$1"); shift; done ;;
        *) echo "usage: $0 [--seed S] [--count N] [--list] [--only ID...]" >&2; exit 2 ;;
    esac
done
helper=scripts/mutation_sweep.py
timeout_seconds=${MUTATION_TIMEOUT:-600}
mkdir -p .build-mutants
sample=.build-mutants/sample.tsv
if [ ${#only[@]} -gt 0 ]; then
    python3 "$helper" list --count 0 > .build-mutants/all.tsv || exit 2
    : > "$sample"
    for id in "${only[@]}"; do
        grep -F "$id	" .build-mutants/all.tsv | head -1 >> "$sample" || { echo "no mutant $id" >&2; exit 2; }
    done
else
    python3 "$helper" list --seed "$seed" --count "$count" > "$sample" || exit 2
fi
if $list; then cat "$sample"; exit 0; fi

if [ -n "$(git status --porcelain -- Sources)" ]; then
    echo "Sources has uncommitted changes: commit or stash them first (each mutation is undone with git checkout)." >&2
    exit 2
fi
mutated=""
bin=$(swift build --show-bin-path)
# The mutated file's module is compiled afresh for each mutant and after it: an incremental
# build after a mutation and its undoing was seen to leave a stale module (tests crashing in
# code no mutant touched).
fresh() {
    local target=${1#Sources/}
    find "$bin/${target%%/*}.build" -type f \( -name '*.o' -o -name '*.swiftdeps' -o -name '*.priors' \) -delete 2>/dev/null
}
restore() {
    if [ -n "$mutated" ]; then git checkout -q -- "$mutated"; fresh "$mutated"; mutated=""; fi
}
trap 'restore' EXIT
trap 'restore; echo "interrupted: the sources are restored" >&2; exit 130' INT TERM
swift build --build-tests >/dev/null 2>&1 || { echo "the unmutated tree does not build" >&2; exit 2; }

results=.build-mutants/results.tsv
: > "$results"
killed=0; timeouts=0; survived=0; equivalent=0; uncompiled=0; survivors=()
if [ ${#only[@]} -gt 0 ]; then chosen="chosen by ID"; else chosen="seed $seed"; fi
echo "mutation sweep: $(wc -l < "$sample") mutants ($chosen), commit $(git rev-parse --short HEAD)"
while IFS=$'\t' read -r id filter description; do
    file=${id%%:*}
    mutated=$file
    python3 "$helper" apply "$id" || { restore; echo "cannot apply $id" >&2; continue; }
    fresh "$file"
    if ! swift build --build-tests >/dev/null 2>&1; then
        verdict="not compiled"; uncompiled=$((uncompiled + 1))
    else
        timeout "$timeout_seconds" swift test --skip-build --filter "$filter" >/dev/null 2>&1
        status=$?
        if [ $status -eq 0 ]; then
            restore   # the reason is looked up in the unmutated line
            reason=$(python3 "$helper" equivalent "$id")
            if [ -n "$reason" ]; then
                verdict="equivalent"; equivalent=$((equivalent + 1))
            else
                verdict="SURVIVED"; survived=$((survived + 1)); survivors+=("$id  $description")
            fi
        elif [ $status -eq 124 ]; then
            verdict="killed (timeout)"; killed=$((killed + 1)); timeouts=$((timeouts + 1))
        else
            verdict="killed"; killed=$((killed + 1))
        fi
    fi
    restore
    printf '%-16s %s  %s\n' "$verdict" "$id" "$description"
    printf '%s\t%s\t%s\n' "$verdict" "$id" "$description" >> "$results"
done < "$sample"
swift build --build-tests >/dev/null 2>&1
compiled=$((killed + survived + equivalent))
scored=$((compiled - equivalent))
echo "compiled $compiled (not compiled $uncompiled); killed $killed ($timeouts by timeout), survived $survived, equivalent $equivalent"
if [ $scored -gt 0 ]; then
    echo "score: $killed / $scored = $((100 * killed / scored))% of the non-equivalent mutants killed"
fi
for line in "${survivors[@]}"; do echo "survivor: $line"; done
[ $survived -eq 0 ]
