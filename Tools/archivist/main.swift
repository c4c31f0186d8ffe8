// archivist: look inside Archivist caches, archives and stores. See `archivist --help`;
// the work is done by ArchivistInspection (ArchivistTool.run).
import ArchivistInspection
import Foundation

var output = ToolOutput(
    output: { FileHandle.standardOutput.write($0) },
    error: { FileHandle.standardError.write(Data($0.utf8)) }
)
exit(ArchivistTool.run(Array(CommandLine.arguments.dropFirst()), output: &output))
