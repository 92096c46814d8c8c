"""What the website costs: the gate's routing with and without it, and its pages in process.

    .venv/bin/python bench/website_bench.py [--number 20000] [--pages 300] [--rounds 3]

1. The gate's routing (`Gate._route`) of the API's hot read (`/v1/jobs/{id}`), of a
   website page and of an unknown path, with the website wired and without it, in
   interleaved rounds (best round kept), in microseconds per request.
2. Website pages through the whole app in process (`httpx.ASGITransport`, the core's
   fakes, so no database and a fast password hash): milliseconds per answer for the
   visitor's front page, the converter, the account page, the job's status poll and a
   CSRF-checked form post (creating and revoking a key).

Figures: docs/architecture.md, "The website".
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from tests.unit.http.test_website_inprocess import PASSWORD, make_browser

from printjob_http.gate import Gate

CSRF = re.compile(r'name="csrf_token" value="([^"]*)"')


def _scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000")],
    }


async def _nothing(message: Any) -> None:
    return None


async def _route_cost(gate: Gate, path: str, number: int) -> float:
    started = time.perf_counter()
    for _ in range(number):
        await gate._route(_scope(path), _nothing)
    return (time.perf_counter() - started) / number * 1e6


def routing(number: int, rounds: int) -> None:
    with_site = make_browser()
    gate: Gate = with_site.client._transport.app  # type: ignore[attr-defined]
    without = Gate(gate.app, gate.direct, gate.docs_for, None)
    paths = {
        "API poll /v1/jobs/{id}": "/v1/jobs/job_" + "a" * 32,
        "website /account": "/account",
        "unknown /no/such/path": "/no/such/path",
    }
    best: dict[tuple[str, str], float] = {}
    loop = with_site.loop
    for _ in range(rounds):
        for label, path in paths.items():
            for name, which in (("without website", without), ("with website", gate)):
                cost = loop.run_until_complete(_route_cost(which, path, number))
                key = (label, name)
                best[key] = min(best.get(key, cost), cost)
    print(f"gate routing, microseconds per request (best of {rounds} rounds):")
    for label in paths:
        off, on = best[(label, "without website")], best[(label, "with website")]
        print(f"  {label:28} without {off:6.2f}   with {on:6.2f}")


def pages(number: int) -> None:
    browser = make_browser()
    assert browser.post("/signup", email="bench@example.com", password=PASSWORD).status_code == 303
    token = CSRF.search(browser.get("/").text)
    assert token is not None
    image = {"image": ("a.png", b"IMG PNG 100 100 bench", "image/png")}
    job = browser.request(
        "POST", "/convert", data={"csrf_token": token.group(1), "format": "svg"}, files=image
    ).headers["location"]
    visitor = httpx.AsyncClient(transport=browser.client._transport, base_url="http://testserver")

    def timed(label: str, call: Any) -> None:
        call()  # warm: templates compiled, first imports done
        started = time.perf_counter()
        for _ in range(number):
            call()
        print(f"  {label:42} {(time.perf_counter() - started) / number * 1e3:6.2f} ms")

    def key_round() -> None:
        made = browser.request(
            "POST", "/account/keys", data={"csrf_token": token.group(1), "label": "b"}
        )
        key_id = re.search(r"/account/keys/([^/]+)/revoke", made.text)
        assert key_id is not None
        browser.request(
            "POST", f"/account/keys/{key_id.group(1)}/revoke", data={"csrf_token": token.group(1)}
        )

    print(f"website pages in process over the fakes, ms per answer ({number} each):")
    timed("GET / (visitor)", lambda: browser.loop.run_until_complete(visitor.get("/")))
    timed("GET / (signed in: the converter)", lambda: browser.get("/"))
    timed("GET /account", lambda: browser.get("/account"))
    timed("GET /jobs/{id}/status", lambda: browser.get(job + "/status"))
    timed("POST /account/keys, then revoke it", key_round)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    routing(args.number, args.rounds)
    pages(args.pages)
    asyncio.set_event_loop(None)


if __name__ == "__main__":
    main()
