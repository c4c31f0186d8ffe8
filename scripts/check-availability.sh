#!/usr/bin/env bash
# The Apple availability gate. Linux ignores `@available`, so code that calls an API newer
# than the package's deployment targets (Package.swift's `platforms`) builds here and fails on
# a Mac. This type-checks every Swift target (the libraries, the tool, the benchmarks, the test
# support, the worker processes and the tests: a Mac builds the tests too) with its debug
# build's flags, takes every declaration each file references from the AST
# (`swiftc -dump-ast -dump-ast-format json`), and looks up the Apple availability the
# toolchain's interfaces keep (`swift-symbolgraph-extract` of Swift, _Concurrency,
# Synchronization, Observation, Dispatch and Foundation, cached in .build/availability). A use
# introduced after a deployment target, with no `@available` declaration and no
# `if #available` / `guard #available` around it, is printed as `file:line: symbol
# (introduced in ...)` and the gate exits 1. The work is in scripts/check-availability.py.
#
#   scripts/check-availability.sh               # every target
#   scripts/check-availability.sh --self-test   # proves the gate finds the newer APIs of
#                                               # scripts/check-availability-planted.swift
#
# What it cannot see: code in a `#if os(macOS)`-style branch that Linux does not compile, and
# APIs that only the Apple SDKs declare (docs/Platforms.md, "The availability gate").
# Needs python3 and a Linux toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests --quiet
cache=.build/availability
if [ "${1:-}" = "--self-test" ]; then
    exec python3 scripts/check-availability.py planted .build/debug.yaml "$cache" \
        scripts/check-availability-planted.swift
fi
exec python3 scripts/check-availability.py check .build/debug.yaml "$cache" "$@"
