#!/usr/bin/env bash
# Measures the cost of a change on the same machine in one sitting: builds COMMIT (the
# baseline) and the working tree in release mode, runs both benchmark executables alternately
# ROUNDS times on the given suites, and prints each case's best median, baseline against now.
#
#   Benchmarks/compare-with-baseline.sh COMMIT [ROUNDS] [SUITE...]
#   Benchmarks/compare-with-baseline.sh 3bc5b8f 3 cache-manager cache-memory memory-cache records
#
# The baseline is checked out in .build-baseline/source (ignored by git, like every .build*).
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:?usage: $0 COMMIT [ROUNDS] [SUITE...]}
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
suites=()
for suite in "$@"; do suites+=(--suite "$suite"); done

source=.build-baseline/source
# A checkout of its own (a linked worktree has a `.git` file): without one, `git -C` below
# would find this repository and check COMMIT out here, in place of the working tree.
if [ ! -e "$source/.git" ]; then
    rm -rf "$source"
    git worktree prune
    git worktree add --detach "$source" "$commit" >/dev/null
fi
git -C "$source" checkout -q --detach "$commit"
swift build -c release --package-path "$source" --product ArchivistBenchmarks >/dev/null
swift build -c release --product ArchivistBenchmarks >/dev/null
base_binary="$source/.build/release/ArchivistBenchmarks"
new_binary=.build/release/ArchivistBenchmarks

out=$(mktemp -d)
base_files=(); new_files=()
for round in $(seq 1 "$rounds"); do
    "$base_binary" "${suites[@]}" --output "$out/base-$round" >/dev/null
    "$new_binary" "${suites[@]}" --output "$out/new-$round" >/dev/null
    base_files+=("$out/base-$round/results.json"); new_files+=("$out/new-$round/results.json")
    echo "round $round of $rounds done" >&2
done
join() { local IFS=,; echo "$*"; }
"$new_binary" --compare "$(join "${base_files[@]}")" "$(join "${new_files[@]}")"
rm -rf "$out"
