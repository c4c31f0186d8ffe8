#!/usr/bin/env bash
# Builds a libFuzzer target together with the library sources and runs it.
#
#   Fuzz/run.sh TARGET [LENGTH] [libFuzzer flags...]
#
#   TARGET  archive (ArchiveDecoderFuzzer), keyed (KeyedArchiveFuzzer: the Foundation bridge)
#           or reader (KeyedArchiveReaderFuzzer: the pure-Swift keyed-archive reader)
#   LENGTH  a duration, 90s or 10m (default 60s), or a number of runs, 1000000
#
# Everything lives in .build-fuzz/TARGET/ (ignored by git): the binary, seeds/ (regenerated
# each run: sample archives, plus for keyed and reader the 28 fixtures copied from shared/), corpus/
# (kept between runs, grows as libFuzzer finds new coverage) and crash-*/leak-*/timeout-*
# artifacts. Set FUZZ_SANITIZERS=fuzzer to build without AddressSanitizer (about 2-3x faster).
# Reproduce a finding with: .build-fuzz/TARGET/fuzzer .build-fuzz/TARGET/crash-<hash>
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:-}"
length="${2:-60s}"
shift $(( $# < 2 ? $# : 2 ))

case "$target" in
  archive|ArchiveDecoderFuzzer) name=archive; files=(Fuzz/ArchiveFuzzModels.swift Fuzz/ArchiveDecoderFuzzer.swift) ;;
  keyed|KeyedArchiveFuzzer) name=keyed; files=(Fuzz/KeyedArchiveFuzzer.swift) ;;
  reader|KeyedArchiveReaderFuzzer) name=reader; files=(Fuzz/KeyedArchiveReaderFuzzer.swift) ;;
  *) echo "usage: Fuzz/run.sh archive|keyed|reader [seconds (90s, 10m) | runs (1000000)] [libFuzzer flags]" >&2; exit 64 ;;
esac

case "$length" in
  *s) limit=(-max_total_time="${length%s}") ;;
  *m) limit=(-max_total_time=$(( ${length%m} * 60 ))) ;;
  *[!0-9]*|'') echo "LENGTH must be like 90s, 10m or 1000000" >&2; exit 64 ;;
  *) limit=(-runs="$length") ;;
esac

work="$root/.build-fuzz/$name"
mkdir -p "$work/corpus"
cd "$root"

# Rebuild only when a source changed. The library's C target (Sources/CArchivistSupport) is
# compiled by the toolchain's clang with the same sanitizers and imported through a module map
# written here, as SwiftPM would.
binary="$work/fuzzer"
sanitizers="${FUZZ_SANITIZERS:-fuzzer,address}"
mapfile -t library < <(find Sources/Archivist Sources/ArchivistKeyedArchive -name '*.swift' | sort)
mapfile -t c_sources < <(find Sources/CArchivistSupport -name '*.c' | sort)
sources=("${library[@]}" "${files[@]}")
# The sanitizers the binary was built with are kept beside it: switching FUZZ_SANITIZERS rebuilds.
if [ ! -x "$binary" ] || [ "$(cat "$work/sanitizers" 2>/dev/null)" != "$sanitizers" ] ||
   [ -n "$(find "${sources[@]}" Sources/CArchivistSupport Fuzz/run.sh -newer "$binary" 2>/dev/null)" ]; then
  echo "building $binary (swiftc -O -sanitize=$sanitizers)" >&2
  clang="$(dirname "$(command -v swiftc)")/clang"
  include="$root/Sources/CArchivistSupport/include"
  mkdir -p "$work/c"
  printf 'module CArchivistSupport {\n  header "%s/CArchivistSupport.h"\n  export *\n}\n' "$include" > "$work/c/module.modulemap"
  objects=()
  for source in "${c_sources[@]}"; do
    object="$work/c/$(basename "$source" .c).o"
    "$clang" -O2 -fsanitize="${sanitizers/fuzzer/fuzzer-no-link}" -I "$include" -c "$source" -o "$object"
    objects+=("$object")
  done
  swiftc -O -sanitize="$sanitizers" -parse-as-library -module-name Archivist -package-name Archivist \
    -swift-version 6 -use-ld=lld -I "$work/c" "${sources[@]}" "${objects[@]}" -o "$binary.new"
  # Only a build that succeeded replaces the binary (swiftc may write one and still fail, e.g.
  # when a source changed during the build).
  mv "$binary.new" "$binary"
  echo "$sanitizers" > "$work/sanitizers"
fi

# Seeds: the generated archives, and for keyed and reader the fixtures (never committed, see README there).
rm -rf "$work/seeds" && mkdir -p "$work/seeds"
# Leak checking is off here: the seeds are still alive when the seed writer exits.
if ! ARCHIVIST_FUZZ_WRITE_SEEDS="$work/seeds" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$binary" >/dev/null; then
  echo "the fuzzer could not write its seeds" >&2; exit 70
fi
if [ "$name" = keyed ] || [ "$name" = reader ]; then
  fixtures=""
  dir="$root"
  while [ "$dir" != / ]; do
    dir="$(dirname "$dir")"
    if [ -f "$dir/shared/fixtures/nskeyedarchiver/README.md" ]; then fixtures="$dir/shared/fixtures/nskeyedarchiver"; break; fi
  done
  if [ -z "$fixtures" ]; then echo "shared/fixtures/nskeyedarchiver not found beside the repository" >&2; exit 66; fi
  find "$fixtures" -type f ! -name '*.md' ! -name '*.txt' | while read -r file; do
    cp "$file" "$work/seeds/fixture-$(echo "${file#"$fixtures"/}" | tr / _)"
  done
fi
seed_count=$(find "$work/seeds" -type f | wc -l)
if [ "$seed_count" -eq 0 ]; then echo "no seeds were written" >&2; exit 70; fi
echo "seeds: $seed_count files; corpus before: $(find "$work/corpus" -type f | wc -l) files" >&2

extra=()
dictionary="Fuzz/$name.dict"
[ "$name" = reader ] && dictionary=Fuzz/keyed.dict
[ -f "$dictionary" ] && extra+=(-dict="$dictionary")
# corelibs' property-list parser (inside NSKeyedUnarchiver) leaks on some inputs; that is not
# ours to fix, so leak checking stays on for the native archive only.
if [ "$name" = keyed ]; then
  extra+=(-detect_leaks=0)
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi

# libFuzzer prints the stack of a crash itself; Swift's backtracer would only race with ASan.
export SWIFT_BACKTRACE=enable=no
exec "$binary" "$work/corpus" "$work/seeds" "${limit[@]}" "${extra[@]}" \
  -artifact_prefix="$work/" -max_len=16384 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$@"
