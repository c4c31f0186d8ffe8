import Archivist

print("ArchivistBenchmarks: suites are registered as they land.")
