#!/usr/bin/env bash
# Fails when a Swift file is not as scripts/format.sh would write it, or breaks a rule of
# .swift-format: `swift format lint --strict` over the whole package, naming file:line:column
# and the rule of each finding. Fix with scripts/format.sh (a comment too long for its line
# must be moved by hand: swift-format never moves comments).
#
# Rules off in .swift-format, and why (counts: findings on the formatted tree with the rule on):
#   BeginDocumentationCommentWithOneLineSummary (394), ValidateDocumentationComments (27),
#   AllPublicDeclarationsHaveDocumentation (5): each asks for doc comments to be reworded or
#     written; scripts/build-docs.sh already fails on an undocumented public parameter.
#   NeverForceUnwrap (102), UseEarlyExits (10), OnlyOneTrailingClosureArgument (5),
#   ReplaceForEachWithForLoop (4), OmitExplicitReturns (3), AlwaysUseLowerCamelCase (3),
#   UseSynthesizedInitializer (1), AmbiguousTrailingClosureOverload (1): each finding is a
#     change of code or API to be judged, not a layout the formatter can apply.
#   NeverUseImplicitlyUnwrappedOptionals, NoLeadingUnderscores, UseWhereClausesInForLoops,
#   AlwaysUseLiteralForEmptyCollectionInit, NoEmptyLinesOpeningClosingBraces: off in
#     swift-format's own defaults and in swift-nio's configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --recursive --parallel Sources Tests Benchmarks Tools Fuzz Package.swift
echo "check-format: every Swift file is formatted"
