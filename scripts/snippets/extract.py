#!/usr/bin/env python3
"""Turns the ```swift blocks of the documentation into a SwiftPM package that compiles them.

    extract.py generate ROOT OUT     # writes the scratch package OUT (one target per document)
    extract.py report ROOT OUT LOG   # maps `swift build` errors in LOG back to documents

Documents: README.md, docs/*.md and Sources/*/*.docc/*.md under ROOT, and the `///` doc
comments of the `public`, `open` and `package` declarations in Sources/Archivist and
Sources/ArchivistKeyedArchive (one target per source file, compiled with the library's package
name so that `package` API is in reach). A block's treatment is given by an HTML comment on
the last non-blank line before its fence (in a doc comment, a `///` line of its own):

    <!-- snippet: declarations -->    file-scope code only (types, extensions, functions)
    <!-- snippet: sync -->            statements, compiled in a synchronous throwing function
    <!-- snippet: async -->           statements, compiled in an `async throws` function
    <!-- snippet: manifest -->        a whole Package.swift, checked by `swift package dump-package`
    <!-- snippet: skip REASON -->     not compiled; the reason is required
    <!-- snippet: member TYPE -->     members of a type (an `init(from:)`, a `var location`),
                                      compiled in an extension of TYPE, which the context declares

An unmarked block is split: its top-level types, extensions and functions join the document's
declarations, and its statements are compiled in a synchronous function and in an `async` one
(only the `async` one when the block says `await`). A document's `import` lines hold for all its
blocks; every target imports the library its documentation belongs to (`Archivist`, or for
`Sources/<Module>/<Module>.docc`, that module). Names the snippets take for granted (`documents`,
`api.hots()`, a stored `letter`) are declared in scripts/snippets/context/<document>.swift, its
path with `/` as `_` and `.swift` for `.md` (`docs_Guide.swift`). A source file's doc comments
take theirs from scripts/snippets/context/doc-comments/<path with `/` as `_`>
(`Sources_Archivist_Cache_MemoryCache.swift`) when it exists, and from
scripts/snippets/context/doc-comments/<Module>.swift (what the module's examples share: a
`cache`, the `ShopCache` type, ...), less any name the file's own examples or context declare;
their targets import Foundation too. `#sourceLocation` makes every diagnostic name the document
and line.
"""
import shutil
import os
import re
import sys

MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(\w+)\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
DECLARATION = re.compile(
    r"^(@\w+(\([^)]*\))?\s+)*"
    r"((public|private|fileprivate|internal|package|final|open|nonisolated|indirect)\s+)*"
    r"(struct|class|enum|extension|protocol|func|actor|typealias)\b")
ATTRIBUTE_ONLY = re.compile(r"^@\w+(\([^)]*\))?\s*$")
IMPORT = re.compile(r"^import\s+(\w+)\s*$")
KINDS = {"declarations", "sync", "async", "manifest", "skip", "member"}
DECLARED_NAME = re.compile(r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:\w+\s+)*?(?:struct|class|enum|protocol|actor|typealias|func|var|let)\s+(\w+)")
DOC_COMMENT = re.compile(r"^\s*///\s?(.*)$")
DOCUMENTED_MODULES = ["Archivist", "ArchivistKeyedArchive"]
VISIBLE = re.compile(r"\b(public|open|package)\b")


def documents(root):
    found = ["README.md"]
    found += sorted("docs/" + name for name in os.listdir(os.path.join(root, "docs")) if name.endswith(".md"))
    sources = os.path.join(root, "Sources")
    for module in sorted(os.listdir(sources)):
        for entry in sorted(os.listdir(os.path.join(sources, module))):
            if entry.endswith(".docc"):
                folder = os.path.join(sources, module, entry)
                found += sorted(f"Sources/{module}/{entry}/{name}" for name in os.listdir(folder) if name.endswith(".md"))
    return [path for path in found if os.path.isfile(os.path.join(root, path))]


def source_documents(root):
    """The Swift sources whose doc comments are checked."""
    found = []
    for module in DOCUMENTED_MODULES:
        for folder, subfolders, names in os.walk(os.path.join(root, "Sources", module)):
            subfolders[:] = sorted(name for name in subfolders if not name.endswith(".docc"))
            found += sorted(os.path.relpath(os.path.join(folder, name), root) for name in names if name.endswith(".swift"))
    return found


def doc_comment_lines(root, path):
    """The file's lines with the doc comments of public, open and package declarations as
    their text (`///` and one space removed) and every other line empty, so that line numbers
    stay those of the file."""
    lines = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    result, index = [""] * len(lines), 0
    while index < len(lines):
        if not DOC_COMMENT.match(lines[index]):
            index += 1
            continue
        end = index
        while end < len(lines) and DOC_COMMENT.match(lines[end]):
            end += 1
        following = end
        while following < len(lines) and (ATTRIBUTE_ONLY.match(lines[following].strip()) or not lines[following].strip()):
            following += 1
        declaration = lines[following].split("//", 1)[0] if following < len(lines) else ""
        if VISIBLE.search(declaration):
            for number in range(index, end):
                result[number] = DOC_COMMENT.match(lines[number]).group(1)
        index = end
    return result


def blocks(root, path):
    """(first line number of the code, kind, argument, lines) for each ```swift block."""
    if path.endswith(".swift"):
        lines = doc_comment_lines(root, path)
    else:
        lines = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    result, index = [], 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        language, indent = fence.group(2), len(fence.group(1))
        end = index + 1
        while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
            end += 1
        if language == "swift":
            kind, argument = None, ""
            previous = index - 1
            while previous >= 0 and not lines[previous].strip():
                previous -= 1
            marker = MARKER.match(lines[previous]) if previous >= 0 else None
            if marker:
                kind, argument = marker.group(1), marker.group(2)
            body = [line[indent:] if indent == 0 or line[:indent].isspace() else line.lstrip() for line in lines[index + 1:end]]
            result.append((index + 2, kind, argument, body))
        index = end + 1
    return result


def strip_code(line):
    """The line without string literals and `//` comments, for counting braces."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return line.split("//", 1)[0]


def split(body):
    """Marks each line 'decl', 'stmt' or 'import': top-level declarations and the rest."""
    roles, depth, in_declaration, pending = [], 0, False, []
    for line in body:
        code = strip_code(line).strip()
        role = "stmt"
        if depth == 0 and not in_declaration:
            if IMPORT.match(code):
                role = "import"
            elif ATTRIBUTE_ONLY.match(code):
                pending.append(len(roles))
            elif DECLARATION.match(code):
                in_declaration, role = True, "decl"
                for attribute in pending:
                    roles[attribute] = "decl"
            if code and not ATTRIBUTE_ONLY.match(code):
                pending = []
        elif in_declaration:
            role = "decl"
        roles.append(role)
        depth += code.count("{") - code.count("}")
        if in_declaration and depth <= 0:
            depth, in_declaration = 0, False
    return roles


def main_actor(root, path):
    """Whether the examples run on the main actor: a document's or source file's context says
    `// snippets: main actor` (the `@MainActor` SwiftUI models)."""
    context = os.path.join(root, "scripts", "snippets", "context", context_name(path))
    return os.path.isfile(context) and "// snippets: main actor" in open(context, encoding="utf-8").read()


def without(text, names):
    """The context's text without its top-level declarations of `names` (those the file's own
    examples declare), each blanked line for line so that diagnostics keep their lines."""
    lines, depth, start, result = text.split("\n"), 0, None, []
    for number, line in enumerate(lines):
        code = strip_code(line).strip()
        if depth == 0 and start is None and code:
            start = number
        depth += code.count("{") - code.count("}")
        if start is not None and depth == 0 and not ATTRIBUTE_ONLY.match(code):
            chunk = lines[start:number + 1]
            first = next((strip_code(text).strip() for text in chunk if not ATTRIBUTE_ONLY.match(strip_code(text).strip())), "")
            match = DECLARED_NAME.match(first)
            result += [""] * len(chunk) if match and match.group(1) in names else chunk
            start = None
        elif start is None:
            result.append(line)
    if start is not None:
        result += lines[start:]
    return "\n".join(result)


def path_of_target(name, root):
    """The source file a doc-comment target was made from (for removing stale ones)."""
    for path in source_documents(root):
        if target_name(path) == name:
            return path
    return None


def target_name(path):
    return "Snippets_" + re.sub(r"\W", "_", path[:-6] if path.endswith(".swift") else path[:-3])


def context_name(path):
    if path.endswith(".swift"):
        return "doc-comments/" + path.replace("/", "_")
    return path.replace("/", "_")[:-3] + ".swift"


def location(path, line):
    return f'#sourceLocation(file: "{path}", line: {line})'


def generate(root, out):
    dependency = os.path.basename(os.path.abspath(root))
    targets, manifests, skipped, problems = [], [], [], []
    counts = {"blocks": 0, "functions": 0}
    package_name = re.sub(r"[^a-z0-9_]", "_", os.path.basename(os.path.abspath(root)).lower())
    for path in documents(root) + source_documents(root):
        found = blocks(root, path)
        if not found:
            continue
        module = "Archivist"
        parts = path.split("/")
        if parts[0] == "Sources":
            module = parts[1]
        imports = {module}
        if path.endswith(".swift"):
            imports.add("Foundation")
        declarations, functions = [], []
        for line, kind, argument, body in found:
            counts["blocks"] += 1
            if kind is not None and kind not in KINDS:
                problems.append(f"{path}:{line - 1}: unknown snippet marker '{kind}' (one of {', '.join(sorted(KINDS))})")
                continue
            if kind == "skip":
                if not argument:
                    problems.append(f"{path}:{line - 1}: 'snippet: skip' needs a reason")
                skipped.append(f"{path}:{line - 1}: {argument}")
                continue
            if kind == "manifest":
                manifests.append({"path": path, "line": line, "text": "\n".join(body) + "\n"})
                continue
            if kind == "member":
                if not argument:
                    problems.append(f"{path}:{line - 1}: 'snippet: member' needs a type")
                    continue
                declarations.append(f"extension {argument} {{")
                declarations.append(location(path, line))
                declarations.extend(body)
                declarations.append("}")
                continue
            roles = ["decl"] * len(body) if kind == "declarations" else split(body)
            for number, (text, role) in enumerate(zip(body, roles)):
                if role == "import":
                    imports.add(IMPORT.match(strip_code(text).strip()).group(1))
            # Declarations, each contiguous run under its own #sourceLocation.
            run_start = None
            for number, role in enumerate(roles + ["end"]):
                if role == "decl" and run_start is None:
                    run_start = number
                elif role != "decl" and run_start is not None:
                    declarations.append(location(path, line + run_start))
                    declarations.extend(body[run_start:number])
                    run_start = None
            statements = [text if role == "stmt" else "" for text, role in zip(body, roles)]
            if not any(strip_code(text).strip() for text in statements):
                continue
            if kind == "declarations":
                continue
            says_await = any(re.search(r"\bawait\b", strip_code(text)) for text in statements)
            # A doc comment shows the form of the call it documents: the blocking one unless it
            # says `await` (an `async` function would pick the `async` overload).
            either = ["sync"] if path.endswith(".swift") else ["sync", "async"]
            contexts = {"sync": ["sync"], "async": ["async"]}.get(kind, ["async"] if says_await else either)
            for context in contexts:
                effects = "async throws" if context == "async" else "throws"
                functions.append(f"@MainActor func snippet_line{line}_{context}() {effects} {{" if main_actor(root, path)
                                 else f"func snippet_line{line}_{context}() {effects} {{")
                functions.append(location(path, line))
                functions.extend(statements)
                functions.append("#sourceLocation()")
                functions.append("}")
                functions.append("")
                counts["functions"] += 1
        name = target_name(path)
        # A source file's examples are type-checked by check-snippets.sh with swiftc against the
        # package's own debug build, under its package name, so that `package` API is in reach
        # (a package depending on this one never reaches it); the documents' are targets here.
        folder = os.path.join(out + "-doc-comments" if path.endswith(".swift") else os.path.join(out, "Sources"), name)
        os.makedirs(folder, exist_ok=True)
        header = "".join(f"import {module_name}\n" for module_name in sorted(imports))
        with open(os.path.join(folder, "Declarations.swift"), "w", encoding="utf-8") as file:
            file.write(header + "\n" + "\n".join(declarations) + ("\n#sourceLocation()\n" if declarations else ""))
        with open(os.path.join(folder, "Statements.swift"), "w", encoding="utf-8") as file:
            file.write(header + "\n" + "\n".join(functions) + "\n")
        contexts = [context_name(path)]
        if path.endswith(".swift"):
            contexts.insert(0, f"doc-comments/{module}.swift")
        declared = {match.group(1) for text in declarations if (match := DECLARED_NAME.match(text))}
        for entry in os.listdir(folder):
            if entry.startswith("Context"):
                os.remove(os.path.join(folder, entry))
        for number, context in reversed(list(enumerate(contexts))):   # the file's own context first
            source_path = os.path.join(root, "scripts", "snippets", "context", context)
            if os.path.isfile(source_path):
                text = open(source_path, encoding="utf-8").read()
                if path.endswith(".swift"):
                    text = without(text, declared)
                    declared |= {match.group(1) for line in text.split("\n") if (match := DECLARED_NAME.match(line))}
                with open(os.path.join(folder, f"Context{number}.swift"), "w", encoding="utf-8") as file:
                    file.write(location("scripts/snippets/context/" + context, 1) + "\n" + text)
        if path.endswith(".swift"):
            with open(os.path.join(folder, "package-name"), "w", encoding="utf-8") as file:
                file.write(package_name + "\n")
            continue
        targets.append(name)
    comment_root = out + "-doc-comments"
    for stale in os.listdir(comment_root) if os.path.isdir(comment_root) else []:
        if path_of_target(stale, root) is None:
            shutil.rmtree(os.path.join(comment_root, stale))
    for stale in os.listdir(os.path.join(out, "Sources")) if os.path.isdir(os.path.join(out, "Sources")) else []:
        if stale not in targets:
            for entry in os.listdir(os.path.join(out, "Sources", stale)):
                os.remove(os.path.join(out, "Sources", stale, entry))
            os.rmdir(os.path.join(out, "Sources", stale))
    products = ", ".join(
        f'.product(name: "{product}", package: "{dependency}")' for product in ("Archivist", "ArchivistKeyedArchive"))
    manifest = [
        "// swift-tools-version: 6.2",
        "// Generated by scripts/check-snippets.sh: the documentation's Swift snippets, one target per document.",
        "import PackageDescription",
        "",
        "let package = Package(",
        '    name: "Snippets",',
        '    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],',
        f'    dependencies: [.package(path: "{os.path.relpath(os.path.abspath(root), os.path.abspath(out))}")],',
        "    targets: [",
    ]
    manifest += [f'        .target(name: "{name}", dependencies: [{products}]),' for name in targets]
    manifest += ["    ],", "    swiftLanguageModes: [.v6]", ")", ""]
    with open(os.path.join(out, "Package.swift"), "w", encoding="utf-8") as file:
        file.write("\n".join(manifest))
    # Manifests beside the package, not inside it: each is checked on its own.
    manifest_root = os.path.join(os.path.dirname(os.path.abspath(out)), os.path.basename(os.path.abspath(out)) + "-manifests")
    if os.path.isdir(manifest_root):
        shutil.rmtree(manifest_root)
    for number, entry in enumerate(manifests):
        folder = os.path.join(manifest_root, str(number))
        os.makedirs(folder)
        with open(os.path.join(folder, "Package.swift"), "w", encoding="utf-8") as file:
            file.write(entry["text"])
        with open(os.path.join(folder, "origin"), "w", encoding="utf-8") as file:
            file.write(f"{entry['path']}:{entry['line'] - 1}\n")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"check-snippets: {counts['blocks']} blocks in {len(targets)} documents: "
          f"{counts['functions']} function bodies, {len(manifests)} manifests, {len(skipped)} skipped")
    for entry in skipped:
        print(f"  skipped {entry}")
    return 1 if problems else 0


def report(root, log):
    """Prints each error with the block it is in; returns the number of errors."""
    starts = {}
    for path in documents(root) + source_documents(root):
        starts[path] = [(line, line + len(body)) for line, _, _, body in blocks(root, path)]
    diagnostic = re.compile(r"^(?:.*/)?((?:README\.md|docs/[^:]+|Sources/[^:]+\.(?:md|swift)|scripts/snippets/[^:]+)):(\d+):(\d+): (error|warning|note): (.*)$")
    errors, seen = 0, set()
    for raw in open(log, encoding="utf-8", errors="replace"):
        match = diagnostic.match(raw.rstrip("\n"))
        if not match:
            if re.match(r"^\S.*\berror:", raw) and raw not in seen:
                seen.add(raw)
                errors += 1
                print(raw.rstrip("\n"))
            continue
        path, line, column, severity, message = match.groups()
        key = (path, line, column, severity, message)
        if key in seen or severity == "warning" and re.search(r"never (used|mutated)|was never", message):
            continue
        seen.add(key)
        if severity == "warning" and re.search(r"no calls to throwing functions occur within 'try'|no 'async' operations occur within 'await'", message):
            severity = "error"  # a snippet that teaches a needless `try` or `await` is wrong too
        block = next((start for start, end in starts.get(path, []) if start <= int(line) < end), None)
        where = f" (block at {path}:{block - 1})" if block else ""
        print(f"{path}:{line}:{column}: {severity}: {message}{where}")
        errors += severity == "error"
    return errors


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "generate":
        sys.exit(generate(sys.argv[2], sys.argv[3]))
    elif command == "report":
        sys.exit(1 if report(sys.argv[2], sys.argv[4]) else 0)
    sys.exit(f"unknown command {command}")
