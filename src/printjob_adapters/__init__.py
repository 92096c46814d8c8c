"""Implementations of the core's ports: storage, clock, ids, blobs and the tracing engine."""
