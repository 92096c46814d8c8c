"""The C heap of a process that traces many images: warm from its first job on.

A trace of a 512-px logo allocates and frees a few dozen NumPy arrays of 0.25 to 2 MB.
glibc's malloc serves blocks over its mmap threshold (128 KB at start) with fresh
`mmap`s and returns them to the kernel on `free`, and trims the heap's top above its
trim threshold, so each such array costs its pages' first-touch faults again, trace after
trace: 700 to 2,000 minor faults and several milliseconds of system time a logo. glibc
raises both thresholds by itself once a large mmapped block is freed (the mmap threshold
to that block's size, at most 32 MB on 64-bit; the trim threshold to twice that), so a
worker that has traced one photo stops paying; a worker that has traced only logos
never does. `keep_heap_warm` sets those same steady-state values at start, so every job
is traced as the later ones are.

What it costs: freed blocks under 32 MB stay in the process for reuse instead of going
back to the kernel, up to 64 MB of free heap top; the peak of a job is what glibc's own
steady state would give after one large image. Only processes that trace many images
call it (the workers); the engine itself never changes a process-wide setting.
"""

from __future__ import annotations

import ctypes
import sys

#: `mallopt` parameters from glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: glibc's own ceiling for its dynamic mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
#: Twice the mmap threshold, as glibc's dynamic rule sets it.
TRIM_THRESHOLD_BYTES = 2 * MMAP_THRESHOLD_BYTES


def keep_heap_warm() -> bool:
    """Set glibc's steady-state mmap and trim thresholds for this process; False where
    the C library is not glibc (or not reachable), which leaves the process as it was."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt answers 1 on success.
    mmap_set: bool = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
    trim_set: bool = mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
    return mmap_set and trim_set


__all__ = ["keep_heap_warm"]
