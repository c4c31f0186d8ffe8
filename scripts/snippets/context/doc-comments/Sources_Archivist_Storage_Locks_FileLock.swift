// What the examples of FileLock.swift take for granted; never run.
var folder: String { "/tmp/root" }
