"""Importers: topologies and task graphs from other tools' formats.

An importer reads another tool's description (an hwloc XML of a host, a task graph exported by a
profiler) and returns the same validated `specs` models the YAML loader builds, with errors
located in the source file like every other spec error. One module per format.
"""
