"""The quantise-and-trace engine: raster image in, `VectorArt` out, then a print file.

    from printjob_adapters.engine import trace_file
    trace_file("logo.png", "logo.svg", colors=4)

`decode` is bound here at import because a submodule of the same name exists (importing
the submodule would otherwise shadow the function); the pipeline names are imported on
first use, so that the writers, which use `engine.canvas`, can be imported on their own.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from printjob_adapters.engine.decode import PillowImageProbe, decode

if TYPE_CHECKING:
    from printjob_adapters.engine.pipeline import TracingEngine, convert, trace_file

__all__ = ["PillowImageProbe", "TracingEngine", "convert", "decode", "trace_file"]

_HOMES = {
    "trace_file": "pipeline",
    "convert": "pipeline",
    "TracingEngine": "pipeline",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
