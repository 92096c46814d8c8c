"""The workers' heap setting: repeated traces stop paying first-touch page faults."""

from __future__ import annotations

import json
import subprocess
import sys

#: Traces one drawn logo-sized image four times after a warm-up and prints the minor page
#: faults of each trace; with "warm" the process first sets the workers' thresholds.
_PROBE = r"""
import io, json, resource, sys
import numpy as np
from PIL import Image, ImageDraw
if sys.argv[1] == "warm":
    from printjob_adapters.allocator import keep_heap_warm
    assert keep_heap_warm()
from printjob_adapters.engine import TraceOptions, trace
image = Image.new("RGB", (512, 512), "white")
draw = ImageDraw.Draw(image)
draw.ellipse((60, 60, 450, 450), fill=(200, 30, 40), outline=(20, 20, 20), width=6)
draw.rectangle((180, 200, 330, 320), fill=(30, 90, 200))
buffer = io.BytesIO()
image.save(buffer, format="PNG")
data = buffer.getvalue()
trace(data, TraceOptions())
faults = []
for _ in range(4):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    trace(data, TraceOptions())
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps(faults))
"""


def _faults(mode: str) -> list[int]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
    )
    faults: list[int] = json.loads(done.stdout.strip().splitlines()[-1])
    return faults


def test_a_warm_heap_saves_the_page_faults_of_every_later_trace() -> None:
    cold = _faults("cold")
    warm = _faults("warm")
    # Without the setting each trace maps its large arrays afresh and touches their pages
    # again; with it the freed blocks are reused from the heap.
    assert min(cold) > 300, cold
    assert sorted(warm)[len(warm) // 2] < min(cold) / 4, (warm, cold)
