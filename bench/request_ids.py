"""What `X-Request-Id` and the metrics add to every request.

    .venv/bin/python bench/request_ids.py [--number 200000]

Prints microseconds per request for `request_id_of` (header absent: a new id; header
given: checked and taken), for the two ASGI messages of an answer sent bare and through
`echoing`, and for counting a request when `PRINTJOB_METRICS_TOKEN` is set
(`Recorder.request` in prometheus-client's multiprocess mode, files in a temporary
folder). Figures: docs/operations.md, "Request ids".
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from printjob_http.request_ids import echoing, request_id_of

HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"authorization", b"Bearer pjk1_" + b"x" * 38),
    (b"user-agent", b"wrk"),
]


async def _answer(send: Any) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"300")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"{}", "more_body": False})


async def _sends(number: int, wrap: bool) -> float:
    async def send(message: Any) -> None:
        return None

    started = time.perf_counter()
    for _ in range(number):
        await _answer(echoing(send, "req_0123456789abcdef01234567") if wrap else send)
    return (time.perf_counter() - started) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--number", type=int, default=200_000)
    number = parser.parse_args().number
    absent = {"headers": HEADERS}
    given = {"headers": [*HEADERS, (b"x-request-id", b"lb-1234567890")]}
    for name, scope in (("absent", absent), ("given", given)):
        seconds = timeit.timeit(lambda s=scope: request_id_of(s), number=number)
        print(f"request_id_of, header {name:6}  {seconds / number * 1e6:6.2f} us")
    bare = asyncio.run(_sends(number, wrap=False))
    echoed = asyncio.run(_sends(number, wrap=True))
    print(f"answer sent bare              {bare:6.2f} us")
    print(f"answer sent with the echo     {echoed:6.2f} us  (+{echoed - bare:.2f} us)")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
        from printjob_adapters.metrics import recorder

        counting = recorder()
        assert counting is not None
        seconds = timeit.timeit(lambda: counting.request("job", "GET", 200, 0.0003), number=number)
        print(f"metrics: one request counted  {seconds / number * 1e6:6.2f} us")


if __name__ == "__main__":
    main()
