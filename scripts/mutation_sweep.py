#!/usr/bin/env python3
"""The mutating logic of scripts/mutation-sweep.sh: finds every candidate mutant of the
critical folders, samples them with a seed, applies one to its file, and judges the sweep.

    mutation_sweep.py list [--seed S] [--count N]   # the sample, one mutant a line (TSV)
    mutation_sweep.py apply ID                      # mutates the file of mutant ID in place
    mutation_sweep.py equivalent ID                 # the reason ID is equivalent, if recorded
    mutation_sweep.py count                         # candidates per folder and operator

Operators, on one occurrence in one line of code (comments and string literals are skipped):
  rel      `<` <-> `<=`, `>` <-> `>=`        eq      `==` <-> `!=`
  logic    `&&` <-> `||`                      bool    `true` <-> `false`
  drop     a one-line statement removed      guard   a guard's condition negated
  const    an integer literal off by one (+1)

A mutant's ID is `file:line:column:operator`; line numbers move as the code changes, so the
list of equivalent mutants (scripts/mutation-equivalents.tsv) names each by its file, the
text of its line and the operator instead.
"""
import os
import random
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The critical code, and the suites (a `swift test --filter` pattern) that must notice a
# mutant in it. First match wins; a folder's suites are those of the test folder mirroring it.
def suites_in(*folders):
    """The suites of these test folders or files; the long fuzz campaigns are left out (they
    look for crashes on random input, and take minutes each)."""
    names = []
    for folder in folders:
        path = os.path.join(ROOT, "Tests/ArchivistTests", folder)
        if os.path.isdir(path):
            names += sorted(f[:-len(".swift")] for f in os.listdir(path) if f.endswith("Tests.swift"))
        elif os.path.isfile(path + ".swift"):
            names.append(os.path.basename(folder))
    return [name for name in names if not name.endswith("FuzzTests")]

def area_map():
    return [
        ("Sources/Archivist/Storage/Store/DiskStore+Verification.swift",
         suites_in("Inspection/VerifyRepairTests", "Inspection/VerifyMovedEntryTests", "Storage/Store")),
        ("Sources/Archivist/Storage/Files/", suites_in("Storage/Files", "Reliability/CacheFaultTests")),
        ("Sources/Archivist/Storage/Store/", suites_in("Storage/Store", "Reliability/CacheFaultTests")),
        ("Sources/Archivist/Storage/Index/", suites_in("Storage/Index")),
        ("Sources/Archivist/Storage/Locks/", suites_in("Storage/Locks", "MultiProcess/FileLockTests")),
        ("Sources/Archivist/Cache/", suites_in("Cache")),
        ("Sources/Archivist/Stores/Preferences", suites_in("Stores/PreferencesTests", "Stores/PreferencesDeferredWriteTests",
                                                          "Stores/PreferencesRepeatedDeferredWriteTests",
                                                          "Stores/PreferencesDurableChangeTests",
                                                          "Stores/ObservedPreferenceTests")),
        ("Sources/Archivist/Stores/PendingChanges.swift", suites_in("Stores/PreferencesTests", "Stores/PreferencesDeferredWriteTests",
                                                                    "Stores/PreferencesRepeatedDeferredWriteTests")),
        ("Sources/Archivist/Stores/RecordStore", [s for s in suites_in("Stores") if s.startswith(("RecordStore", "ChangeLog"))]),
        ("Sources/Archivist/Stores/RecordTable.swift", [s for s in suites_in("Stores") if s.startswith("RecordStore")]),
        ("Sources/Archivist/Stores/RecordBatch.swift", [s for s in suites_in("Stores") if s.startswith("RecordStore")]),
        ("Sources/Archivist/Stores/ChangeLog.swift", [s for s in suites_in("Stores") if s.startswith(("RecordStore", "ChangeLog"))]),
        ("Sources/ArchivistKeyedArchive/Validation/", suites_in("KeyedArchive")),
        ("Sources/ArchivistKeyedArchive/Reader/", suites_in("KeyedArchive")),
        ("Sources/ArchivistKeyedArchive/Writer/", suites_in("KeyedArchive")),
        ("Sources/ArchivistInspection/RootVerification.swift",
         suites_in("Inspection/VerifyRepairTests", "Inspection/VerifyMovedEntryTests", "Inspection/VerifyForeignItemsTests",
                   "Inspection/ArchivistToolTests")),
        ("Sources/ArchivistInspection/RootWalk.swift",
         suites_in("Inspection/VerifyRepairTests", "Inspection/VerifyMovedEntryTests", "Inspection/ArchivistToolTests")),
    ]

# Of the cache, only the read and expiry paths (the rest is clearing, statistics plumbing,
# change streams: the hand-picked table covers what of it matters).
CACHE_FILES = {"CacheManager+StoreAndRead.swift", "CacheManager.swift", "CacheType.swift", "CacheManager+MemoryTier.swift",
               "MemoryCache.swift", "LRUTable.swift", "CacheManager+Clearing.swift", "CacheManager+Coherence.swift",
               "CacheEntryInfo.swift", "CacheManager+Fallback.swift"}

def critical_files():
    files = []
    areas = area_map()
    for prefix, _ in areas:
        base = os.path.join(ROOT, prefix)
        if prefix.endswith("/"):
            for name in sorted(os.listdir(base)):
                if name.endswith(".swift") and (not prefix.endswith("/Cache/") or name in CACHE_FILES):
                    files.append(prefix + name)
        elif os.path.isfile(base):
            files.append(prefix)
        else:
            folder, start = os.path.split(base)
            for name in sorted(os.listdir(folder)):
                if name.startswith(start) and name.endswith(".swift"):
                    files.append(os.path.relpath(os.path.join(folder, name), ROOT))
    seen, unique = set(), []
    for f in files:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return unique

def suites_for(path):
    for prefix, suites in area_map():
        if path == prefix or (path.startswith(prefix) and (prefix.endswith("/") or not prefix.endswith(".swift"))):
            return "|".join(suites)
    return ""

def code_mask(line):
    """The line with string literals and a trailing comment blanked (same length), or None
    for a line that is all comment or directive."""
    stripped = line.strip()
    if not stripped or stripped.startswith(("//", "/*", "*", "#", "import ", "@available", "precondition", "assert", "fatalError")):
        return None
    out, in_string, i = [], False, 0
    while i < len(line):
        c = line[i]
        if in_string:
            if c == "\\":
                out.append("  ")
                i += 2
                continue
            if c == '"':
                in_string = False
                out.append('"')
            else:
                out.append(" ")
        else:
            if line.startswith("//", i):
                out.append(" " * (len(line) - i))
                break
            if c == '"':
                in_string = True
            out.append(c)
        i += 1
    return "".join(out)[:len(line)]

SWAPS = [
    ("rel", re.compile(r"(?<=\s)(<=|>=|<|>)(?=\s)"), {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}),
    ("eq", re.compile(r"(?<=\s)(==|!=)(?=\s)"), {"==": "!=", "!=": "=="}),
    ("logic", re.compile(r"(?<=\s)(&&|\|\|)(?=\s)"), {"&&": "||", "||": "&&"}),
    ("bool", re.compile(r"\b(true|false)\b"), {"true": "false", "false": "true"}),
]
CONST = re.compile(r"(?<![\w.$])(\d[\d_]*)(?![\w.])")
STATEMENT = re.compile(r"^(\s*)((?:try\??\s+|_ = )?[A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:\s*(?:[-+|&]?=)\s*.+|\(.*\)))\s*$")
GUARD = re.compile(r"^(\s*guard\s+)(.+?)(\s+else\s*\{.*)$")
DECLARATION = re.compile(r"^\s*(let|var|case|default|return|throw|func|init|if|else|guard|for|while|switch|do|catch|defer|"
                         r"private|fileprivate|internal|public|package|static|@|\}|\{|\)|\]|\.|\?)")

def balanced(text):
    return all(text.count(a) == text.count(b) for a, b in ("()", "[]", "{}"))

def active_on_linux(condition):
    """Whether a `#if` condition holds in a Linux debug build (the build the sweep tests)."""
    condition = condition.strip()
    if condition.startswith("!"):
        return not active_on_linux(condition[1:].lstrip("("). rstrip(")"))
    if "||" in condition:
        return any(active_on_linux(part) for part in condition.split("||"))
    if "&&" in condition:
        return all(active_on_linux(part) for part in condition.split("&&"))
    if re.search(r"os\((macOS|iOS|tvOS|watchOS|visionOS)\)|canImport\((Darwin|UIKit|AppKit|ObjectiveC)\)|_runtime\(_ObjC\)", condition):
        return False
    return True

def candidates_in(path):
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    found = []
    branches = []   # per open #if: (whether a branch was taken, whether this branch is compiled)
    for number, line in enumerate(lines, 1):
        directive = line.strip()
        if directive.startswith("#if "):
            taken = active_on_linux(directive[4:].split("//")[0])
            branches.append([taken, taken])
        elif directive.startswith("#elseif ") and branches:
            now = not branches[-1][0] and active_on_linux(directive[8:].split("//")[0])
            branches[-1] = [branches[-1][0] or now, now]
        elif directive.startswith("#else") and branches:
            branches[-1] = [True, not branches[-1][0]]
        elif directive.startswith("#endif") and branches:
            branches.pop()
        if not all(compiled for _, compiled in branches):
            continue   # not compiled here: a mutant of it could only survive
        code = code_mask(line)
        if code is None:
            continue
        for op, pattern, table in SWAPS:
            for m in pattern.finditer(code):
                found.append((path, number, m.start() + 1, op, m.group(1), table[m.group(1)]))
        for m in CONST.finditer(code):
            digits = m.group(1)
            if digits.startswith("0") and len(digits) > 1:
                continue
            value = int(digits.replace("_", ""))
            found.append((path, number, m.start() + 1, "const", digits, str(value + 1)))
        m = GUARD.match(code)
        if m and not re.search(r"\b(let|var|case)\b", m.group(2)) and balanced(m.group(2)):
            condition = line[m.start(2):m.end(2)]   # the text itself, strings included
            found.append((path, number, m.start(2) + 1, "guard", condition, "!(" + condition + ")"))
        m = STATEMENT.match(code)
        if m and not DECLARATION.match(code) and balanced(code) and not code.rstrip().endswith(("{", ",", "(", "[", "in")):
            # Not a body's only expression (its value is returned: removing it does not compile).
            before = lines[number - 2].split("//")[0].rstrip() if number > 1 else ""
            after = lines[number].strip() if number < len(lines) else ""
            sole = before.endswith("{") and after.startswith("}")
            initializes = re.match(r"\s*self\.\w+ = ", code)   # an init's: removing it does not compile
            if "{" not in code and "}" not in code and not sole and not initializes:
                found.append((path, number, len(m.group(1)) + 1, "drop", line.strip(), ""))
    return found

def all_candidates():
    result = []
    for path in critical_files():
        result += candidates_in(path)
    return result

def mutant_id(c):
    return "%s:%d:%d:%s" % (c[0], c[1], c[2], c[3])

def mutated_line(c):
    path, number, column, op, original, replacement = c
    line = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")[number - 1]
    start = column - 1
    if op == "drop":
        return line[:start] + "// (removed)"   # keeps the line count
    assert line[start:start + len(original)] == original, (line, original)
    return line[:start] + replacement + line[start + len(original):]

def sample(seed, count):
    candidates = all_candidates()
    rng = random.Random(seed)
    chosen = rng.sample(candidates, min(count, len(candidates))) if count else candidates
    return candidates, chosen

def load_equivalents():
    table = {}
    path = os.path.join(ROOT, "scripts/mutation-equivalents.tsv")
    if not os.path.exists(path):
        return table
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\n").split("\t")
        if len(fields) >= 5:
            table[(fields[0], fields[1].strip(), fields[2], fields[3])] = fields[4]
    return table

def equivalent_reason(c):
    path, number, column, op, original, replacement = c
    text = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")[number - 1].strip()
    return load_equivalents().get((path, text, op, original))

def find(identifier):
    for c in all_candidates():
        if mutant_id(c) == identifier:
            return c
    sys.exit("no candidate mutant %s (the sources changed since it was listed?)" % identifier)

def main(argv):
    if not argv:
        sys.exit(__doc__)
    command, rest = argv[0], argv[1:]
    seed, count = 1, 25
    i = 0
    while i < len(rest):
        if rest[i] == "--seed":
            seed = int(rest[i + 1]); i += 2
        elif rest[i] == "--count":
            count = int(rest[i + 1]); i += 2
        else:
            i += 1
    if command == "list":
        candidates, chosen = sample(seed, count)
        sys.stderr.write("%d candidate mutants in %d files; %d sampled with seed %d\n"
                         % (len(candidates), len(critical_files()), len(chosen), seed))
        for c in chosen:
            described = "removed: %s" % c[4] if c[3] == "drop" else "%s -> %s" % (c[4], c[5])
            print("\t".join([mutant_id(c), suites_for(c[0]), described.replace("\t", " ")]))
    elif command == "apply":
        c = find(rest[0])
        path = os.path.join(ROOT, c[0])
        lines = open(path, encoding="utf-8").read().split("\n")
        lines[c[1] - 1] = mutated_line(c)
        open(path, "w", encoding="utf-8").write("\n".join(lines))
    elif command == "equivalent":
        reason = equivalent_reason(find(rest[0]))
        if reason:
            print(reason)
    elif command == "count":
        tally = {}
        for c in all_candidates():
            key = (os.path.dirname(c[0]), c[3])
            tally[key] = tally.get(key, 0) + 1
        for key in sorted(tally):
            print("%-50s %-6s %d" % (key[0], key[1], tally[key]))
    else:
        sys.exit(__doc__)

if __name__ == "__main__":
    main(sys.argv[1:])
