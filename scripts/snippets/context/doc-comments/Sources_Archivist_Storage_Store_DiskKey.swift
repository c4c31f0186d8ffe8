// What the examples of DiskKey.swift take for granted; never run.
var user: String { "alice" }
