// What the examples of ChangeSignal.swift take for granted; never run.
var root: String { "/tmp/root" }
