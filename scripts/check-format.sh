#!/usr/bin/env bash
# Fails when a Swift file is not as scripts/format.sh would write it, or breaks a rule of
# .swift-format: `swift format lint --strict` over the whole package, naming file:line:column
# and the rule of each finding. Fix with scripts/format.sh (a comment too long for its line
# must be moved by hand: swift-format never moves comments).
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --recursive --parallel Sources Tests Benchmarks Tools Fuzz Package.swift
echo "check-format: every Swift file is formatted"
