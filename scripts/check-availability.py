#!/usr/bin/env python3
"""The Apple availability gate's work (scripts/check-availability.sh runs it; see there).

    check-availability.py check    DEBUG_YAML CACHE_DIR [--target MODULE]...
    check-availability.py planted  DEBUG_YAML CACHE_DIR SWIFT_FILE

`check` type-checks every Swift target of the package with the flags of its debug build
(DEBUG_YAML, written by `swift build --build-tests`, whose modules it imports), dumps the AST as JSON, and
collects every declaration each file references: the USR of each declaration reference and
conformance, and each nominal type named in a type. It looks each one up in the symbol graphs
of the toolchain's modules (CACHE_DIR, filled from `swift-symbolgraph-extract`), which keep the
Apple availability of the Apple SDKs' interfaces. A reference to a declaration introduced after
the deployment target of Package.swift's `platforms`, with no `@available` on an enclosing
declaration and no `if #available` / `guard #available` around it, is printed as
`file:line: symbol (introduced in macOS 15, ...)`; the exit status is then 1.

`planted` type-checks SWIFT_FILE as one more file of the `Archivist` target and exits 0 only if
it reports exactly the lines of SWIFT_FILE that end in `// found`: the gate's self-test, which
proves it still finds newer calls, types and members, and still honours `@available`,
`if #available` and `guard #available`.
"""
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

DOMAINS = ["macOS", "iOS", "tvOS", "watchOS", "visionOS"]

# The toolchain modules whose declarations the package may reference. Their symbol graphs keep
# the Apple availability written in the interfaces (Foundation on Linux is swift-foundation's
# FoundationEssentials and FoundationInternationalization, which carry it, under
# swift-corelibs-foundation, which carries it only here and there).
MODULES = [
    "Swift", "_Concurrency", "Synchronization", "Observation", "Dispatch",
    "Foundation", "FoundationEssentials", "FoundationInternationalization",
]

# References that the Linux type-check resolves to a declaration newer than the one the Darwin
# compiler picks for the same code: symbol path -> whether only a reference the compiler wrote
# itself (an implicit one) is let through.
ALLOWED = {
    # `&*` on a concrete integer: the Linux standard library's interface has the Swift 6
    # `FixedWidthInteger` requirement, which Darwin's (macOS 15) binds only where available and
    # otherwise falls back to the protocol extension's `&*` (all OS versions).
    "FixedWidthInteger.&*(_:_:)": False,
    # `for await` calls `next(isolation:)` (macOS 15) where it is available and `next()`
    # otherwise; the Linux type-check always records the newer one, as an implicit call. A call
    # written in the code is still reported.
    "AsyncIteratorProtocol.next(isolation:)": True,
    "*.Iterator.next(isolation:)": True,
}


def allowed(path, implicit):
    for pattern, implicit_only in ALLOWED.items():
        if (path == pattern or (pattern.startswith("*.") and path.endswith(pattern[1:]))) \
                and (implicit or not implicit_only):
            return True
    return False


def parse_version(text):
    parts = [int(p) for p in re.findall(r"\d+", text)]
    return tuple((parts + [0, 0])[:3])


def show(version):
    major, minor, patch = version
    return f"{major}.{minor}" + (f".{patch}" if patch else "")


def deployment_targets(package_swift):
    """The `platforms:` minimums of Package.swift; visionOS defaults to 1.0 when not named."""
    text = pathlib.Path(package_swift).read_text()
    targets = {"visionOS": (1, 0, 0)}
    for name, version in re.findall(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\(\s*\.?v?([\d_\"\.]+)", text):
        targets[name] = parse_version(version.replace("_", "."))
    # Mac Catalyst takes iOS's availability, so the iOS check covers it at iOS's minimum or later.
    catalyst = re.search(r"\.macCatalyst\(\s*\.?v?([\d_\"\.]+)", text)
    if catalyst and "iOS" in targets and parse_version(catalyst.group(1).replace("_", ".")) < targets["iOS"]:
        sys.exit("check-availability: Package.swift's Mac Catalyst minimum is below iOS's, which the gate does not check")
    missing = [d for d in DOMAINS if d not in targets]
    if missing:
        sys.exit(f"check-availability: Package.swift names no minimum for {', '.join(missing)}")
    return targets


def vision_from_ios(version):
    """visionOS inherits iOS availability that does not name visionOS: iOS 17 or earlier is
    visionOS 1, iOS 18.x is visionOS 2.x, and the versions are shared from 26 on."""
    if version[0] <= 17:
        return (1, 0, 0)
    if version[0] < 26:
        return (version[0] - 16,) + version[1:]
    return version


def symbol_availability(entries):
    """{domain: introduced} from a symbol graph's or an attribute's entries."""
    result = {}
    for entry in entries or []:
        domain = entry.get("domain")
        if domain in DOMAINS and "introduced" in entry:
            intro = entry["introduced"]
            result[domain] = (intro.get("major", 0), intro.get("minor", 0), intro.get("patch", 0))
    if "visionOS" not in result and "iOS" in result:
        result["visionOS"] = vision_from_ios(result["iOS"])
    return result


def load_symbols(cache, targets):
    """USR -> (path, {domain: introduced}) for every toolchain symbol newer than a target;
    and the USR "bodies" of those that are types, to find them in mangled type names."""
    cache = pathlib.Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    stamp = cache / "toolchain"
    version = subprocess.run(["swiftc", "--version"], capture_output=True, text=True).stdout
    if not stamp.exists() or stamp.read_text() != version:
        for old in cache.glob("*.symbols.json"):
            old.unlink()
        for module in MODULES:
            subprocess.run(
                ["swift-symbolgraph-extract", "-module-name", module, "-target", "x86_64-unknown-linux-gnu",
                 "-minimum-access-level", "public", "-output-dir", str(cache)],
                check=True, stdout=subprocess.DEVNULL)
        stamp.write_text(version)
    # What this needs of the 70 MB of symbol graphs, kept for the next run.
    summary = cache / "newer.json"
    key = {"toolchain": version, "targets": {d: list(v) for d, v in targets.items()}}
    if summary.exists():
        saved = json.loads(summary.read_text())
        if saved["key"] == key:
            newer = {usr: (path, {d: tuple(v) for d, v in available.items()})
                     for usr, (path, available) in saved["newer"].items()}
            return newer, saved["types"]
    newer, type_bodies = {}, {}
    for graph_file in sorted(cache.glob("*.symbols.json")):
        graph = json.loads(graph_file.read_text())
        for symbol in graph["symbols"]:
            available = symbol_availability(symbol.get("availability"))
            late = {d: v for d, v in available.items() if v > targets[d]}
            if not late:
                continue
            usr = symbol["identifier"]["precise"]
            path = ".".join(symbol["pathComponents"])
            newer[usr] = (path, available)
            kind = symbol["kind"]["identifier"]
            if kind in ("swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias") \
                    and usr.startswith("s:"):
                type_bodies[usr[2:]] = usr
    summary.write_text(json.dumps({"key": key, "newer": newer, "types": type_bodies}))
    return newer, type_bodies


def module_commands(debug_yaml, root):
    """Module name -> swiftc arguments of its debug build, for the package's own Swift targets."""
    commands = {}
    lines = pathlib.Path(debug_yaml).read_text().splitlines()
    for index, line in enumerate(lines):
        match = re.match(r'\s*"C\..+-debug\.module":', line)
        if not match:
            continue
        fields = {}
        for following in lines[index + 1:index + 8]:
            key, _, value = following.strip().partition(": ")
            if key in ("inputs", "args"):
                fields[key] = json.loads(value)
        args = fields.get("args")
        # The test runner modules SwiftPM writes for Linux have no file of the package.
        if args and args[0].endswith("swiftc") and any(is_own(path, root) for path in fields.get("inputs", [])):
            commands[args[args.index("-module-name") + 1]] = args
    return commands


def is_own(path, root):
    path = os.path.abspath(path)
    return path.startswith(root + os.sep) and not path.startswith(os.path.join(root, ".build"))


DROP_WITH_VALUE = {"-emit-module-path", "-output-file-map", "-index-store-path", "-emit-objc-header-path", "-o",
                   "-emit-dependencies-path", "-serialize-diagnostics-path"}
DROP = {"-emit-dependencies", "-emit-module", "-incremental", "-c", "-v", "-enable-batch-mode",
        "-serialize-diagnostics", "-parseable-output", "-emit-objc-header", "-g", "-emit-executable",
        "-color-diagnostics", "-whole-module-optimization"}


def dump_command(args, extra_sources=()):
    command = [args[0]]
    skip = keep = False
    for arg in args[1:]:
        if keep or arg in ("-Xcc", "-Xfrontend", "-Xlinker"):
            # An option passed on to another tool, with its value, stays as it is.
            command.append(arg)
            keep = not keep
            continue
        if skip:
            skip = False
            continue
        if arg in DROP_WITH_VALUE:
            skip = True
            continue
        if arg in DROP or re.fullmatch(r"-j\d+", arg):
            continue
        command.append(arg)
    return command + list(extra_sources) + ["-dump-ast", "-dump-ast-format", "json", "-suppress-warnings"]


def frontend_command(args, extra_sources, filelist):
    """The one frontend job that dumps every file of the module: the driver runs one job per
    file for `-dump-ast`, each loading the module's imports again, several times slower."""
    driver = dump_command(args, extra_sources)
    jobs = subprocess.run(driver + ["-driver-print-jobs"], capture_output=True, text=True, check=True).stdout
    job = shlex.split(jobs.strip().splitlines()[0])
    sources = read_sources(args) + list(extra_sources)
    pathlib.Path(filelist).write_text("".join(f"{path}\n" for path in sources))
    command, skip = [], False
    for arg in job:
        if skip:
            skip = False
        elif arg in ("-o", "-filelist", "-primary-file", "-primary-filelist", "-supplementary-output-file-map"):
            skip = True
        elif not (arg.endswith(".swift") and not arg.startswith("-")):
            command.append(arg)
    return command + ["-filelist", filelist, "-primary-filelist", filelist]


def read_sources(args):
    sources = []
    for arg in args:
        if arg.startswith("@"):
            sources += [line for line in pathlib.Path(arg[1:]).read_text().splitlines() if line]
        elif arg.endswith(".swift") and not arg.startswith("-"):
            sources.append(arg)
    return sources


def source_files(dump):
    """The `source_file` JSON objects of a dump (the driver writes them one after another)."""
    decoder = json.JSONDecoder()
    index, end = 0, len(dump)
    while index < end:
        start = dump.find('{"_kind":"source_file"', index)
        if start < 0:
            return
        value, index = decoder.raw_decode(dump, start)
        yield value


def availability_attrs(node):
    """{domain: version} an enclosing declaration's `@available` raises the floor to; a domain
    marked unavailable is raised to infinity (nothing in it is compiled for that platform)."""
    floors = {}
    for attr in node.get("attrs") or []:
        if attr.get("_kind") != "available_attr":
            continue
        domain = attr.get("domain")
        if attr.get("unavailable"):
            for d in (DOMAINS if domain == "*" else [domain]):
                floors[d] = (999, 0, 0)
        elif domain in DOMAINS and "introduced" in attr:
            floors[domain] = parse_version(attr["introduced"])
    if "visionOS" not in floors and "iOS" in floors:
        floors["visionOS"] = vision_from_ios(floors["iOS"])
    return floors


def condition_floors(conditions):
    floors = {}
    for condition in conditions or []:
        if condition.get("_kind") != "#available":
            continue
        for query in condition.get("queries") or []:
            if query.get("domain") in DOMAINS and "version" in query:
                floors[query["domain"]] = parse_version(query["version"])
    if floors and "visionOS" not in floors and "iOS" in floors:
        floors["visionOS"] = vision_from_ios(floors["iOS"])
    return floors


def raised(floors, more):
    if not more:
        return floors
    result = dict(floors)
    for domain, version in more.items():
        result[domain] = max(result[domain], version)
    return result


TYPES_IN = {}


def types_in(mangled, type_pattern):
    """USRs of the late nominal types a mangled type name spells: a type's USR (`s:` + its
    mangling) matched where a mangling token starts, never inside an identifier (`Sch`, the
    substitution for `TaskExecutor`, is in `isScheduled` too)."""
    if type_pattern is None:
        return ()
    found = TYPES_IN.get(mangled)
    if found is None:
        found, index = [], 2
        while index < len(mangled):
            match = type_pattern.match(mangled, index)
            if match:
                found.append("s:" + match.group(0))
            digits = re.match(r"\d+", mangled[index:])
            index += len(digits.group(0)) + int(digits.group(0)) if digits else 1
        TYPES_IN[mangled] = found = tuple(found)
    return found


class File:
    def __init__(self, name):
        self.name = name
        self.data = pathlib.Path(name).read_bytes()
        self.line_starts = [0] + [m.end() for m in re.finditer(rb"\n", self.data)]

    def line(self, offset):
        import bisect
        return bisect.bisect_right(self.line_starts, offset)

    def says_unavailable(self, start, end):
        return b"#unavailable" in self.data[start:end]


def scan(source, targets, newer, type_pattern, findings, root):
    """Walks one source file's AST, recording each late reference with the floors in force."""
    file = File(source["filename"])
    relative = os.path.relpath(file.name, root)
    stack = [(source, dict(targets), 0, False)]
    while stack:
        node, floors, position, implicit = stack.pop()
        if isinstance(node, list):
            for child in node:
                stack.append((child, floors, position, implicit))
            continue
        if not isinstance(node, dict):
            continue
        span = node.get("range")
        if isinstance(span, dict) and "start" in span:
            position = span["start"]
        floors = raised(floors, availability_attrs(node))
        kind = node.get("_kind")
        if isinstance(kind, str) and kind.endswith("_expr"):
            implicit = bool(node.get("implicit"))
        for key, value in node.items():
            if not isinstance(value, str) or key == "usr":
                continue
            if value.startswith("s:") and value in newer:
                report(findings, relative, file.line(position), newer[value], floors, implicit)
            elif value.startswith("$s"):
                for usr in types_in(value, type_pattern):
                    report(findings, relative, file.line(position), newer[usr], floors, implicit)
        if kind in ("if_stmt", "guard_stmt", "while_stmt"):
            available = condition_floors(node.get("conditions"))
            if available:
                header_end = (node.get("then_stmt") or node.get("body") or {}).get("range", {}).get("start", position)
                inverted = file.says_unavailable(position, header_end)
                for key, child in node.items():
                    if key == "conditions":
                        continue
                    covered = (key == "else_stmt") if inverted else (key in ("then_stmt", "body") and kind != "guard_stmt")
                    if kind == "guard_stmt" and inverted and key == "body":
                        covered = True
                    stack.append((child, raised(floors, available) if covered else floors, position, implicit))
                continue
        if kind == "brace_stmt" and isinstance(node.get("elements"), list):
            # `guard #available` covers the rest of the block it is in.
            inner = floors
            for element in node["elements"]:
                stack.append((element, inner, position, implicit))
                if isinstance(element, dict) and element.get("_kind") == "guard_stmt":
                    available = condition_floors(element.get("conditions"))
                    start = element.get("range", {}).get("start", position)
                    body = element.get("body", {}).get("range", {}).get("start", start)
                    if available and not file.says_unavailable(start, body):
                        inner = raised(inner, available)
            for key, child in node.items():
                if key != "elements":
                    stack.append((child, floors, position, implicit))
            continue
        for key, child in node.items():
            if isinstance(child, (dict, list)):
                stack.append((child, floors, position, implicit))


def report(findings, file, line, symbol, floors, implicit):
    path, available = symbol
    if allowed(path, implicit):
        return
    late = {d: v for d, v in available.items() if v > floors[d]}
    if late:
        findings.add((file, line, path, ", ".join(f"{d} {show(available[d])}" for d in DOMAINS if d in available)))


def check(debug_yaml, cache, wanted, extra=None):
    root = os.path.abspath(".")
    targets = deployment_targets("Package.swift")
    newer, type_bodies = load_symbols(cache, targets)
    type_pattern = re.compile("|".join(sorted(map(re.escape, type_bodies), key=len, reverse=True))) \
        if type_bodies else None
    commands = module_commands(debug_yaml, root)
    if wanted:
        unknown = set(wanted) - set(commands)
        if unknown:
            sys.exit(f"check-availability: no debug build of {', '.join(sorted(unknown))} in {debug_yaml}")
        commands = {name: commands[name] for name in wanted}
    findings, failed = set(), False
    for name, args in sorted(commands.items()):
        with tempfile.TemporaryDirectory() as scratch:
            command = frontend_command(args, [extra] if extra else [], os.path.join(scratch, "sources"))
            with open(os.path.join(scratch, "dump"), "w+b") as output:
                result = subprocess.run(command, stdout=output, stderr=output)
                output.seek(0)
                dump = output.read().decode("utf-8", "replace")
        if result.returncode != 0:
            failed = True
            print(f"check-availability: {name} does not type-check:", file=sys.stderr)
            print("\n".join(line for line in dump.splitlines() if not line.startswith("{"))[-4000:], file=sys.stderr)
            continue
        for source in source_files(dump):
            if is_own(source["filename"], root) or (extra and source["filename"] == os.path.abspath(extra)):
                scan(source, targets, newer, type_pattern, findings, root)
    return findings, failed


def main():
    mode, debug_yaml, cache, *rest = sys.argv[1:]
    if mode == "planted":
        planted = os.path.abspath(rest[0])
        findings, failed = check(debug_yaml, cache, ["Archivist"], extra=planted)
        lines = pathlib.Path(planted).read_text().splitlines()
        expected = {number for number, text in enumerate(lines, 1) if text.rstrip().endswith("// found")}
        found = {line for file, line, _, _ in findings if os.path.abspath(file) == planted}
        for file, line, path, introduced in sorted(findings):
            print(f"self-test: {file}:{line}: {path} (introduced in {introduced})")
        problems = [f"line {n} is not reported" for n in sorted(expected - found)] + \
            [f"line {n} is reported though covered" for n in sorted(found - expected)]
        for problem in problems:
            print(f"check-availability: self-test: {os.path.relpath(planted)} {problem}", file=sys.stderr)
        return 1 if failed or problems or not expected else 0
    wanted = [rest[i + 1] for i in range(len(rest) - 1) if rest[i] == "--target"]
    findings, failed = check(debug_yaml, cache, wanted)
    for file, line, path, introduced in sorted(findings):
        print(f"{file}:{line}: {path} (introduced in {introduced})")
    if findings:
        print(f"check-availability: {len(findings)} use(s) newer than the deployment targets "
              "with no @available or #available around them", file=sys.stderr)
    return 1 if findings or failed else 0


if __name__ == "__main__":
    sys.exit(main())
