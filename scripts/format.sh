#!/usr/bin/env bash
# Formats the Swift code in place with the toolchain's swift-format and the repository's
# .swift-format (swift-nio's style: 120 columns, 4-space indentation; the rules that would ask
# for more than a mechanical change are off: scripts/check-format.sh says which and why).
#
#   scripts/format.sh            # every Swift file of the package, then scripts/check-format.sh passes
set -euo pipefail
cd "$(dirname "$0")/.."
swift format format --in-place --recursive --parallel Sources Tests Benchmarks Tools Fuzz Package.swift
