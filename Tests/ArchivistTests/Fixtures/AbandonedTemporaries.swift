@testable import Archivist

/// The name of a temporary file left by a writer that died: the process that had this
/// process's PID before it (another incarnation), which ``TemporaryName`` knows to be dead.
func abandonedTemporaryName(_ serial: Int = 1) -> String {
    let identity = TemporaryName.identity
    return ".tmp-\(String(identity.pid, radix: 16)).\(String(identity.namespace, radix: 16))."
        + "\(String(identity.incarnation &+ 1, radix: 16)).\(String(serial, radix: 16))"
}
