"""The import-linter contracts cover the whole tree, new modules included.

A `forbidden` contract names modules one by one, so a module added to the adapters later
would slip past "the engine imports nothing of printjob's but itself" unless it is named
there too: this test fails until it is.
"""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path

import printjob_adapters

ROOT = Path(__file__).resolve().parents[2]


def _contract(name: str) -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    found = [c for c in config["contracts"] if c["name"] == name]
    assert len(found) == 1, f"no single contract named {name!r}"
    contract: dict[str, object] = found[0]
    return contract


def test_the_engine_contract_forbids_every_other_printjob_module() -> None:
    contract = _contract("The engine imports nothing of printjob's but itself")
    forbidden = set(contract["forbidden_modules"])  # type: ignore[call-overload]
    siblings = {
        f"printjob_adapters.{module.name}"
        for module in pkgutil.iter_modules(printjob_adapters.__path__)
        if module.name != "engine"
    }
    packages = {"printjob_core", "printjob_http", "printjob_client"}
    assert siblings | packages <= forbidden, sorted(siblings | packages - forbidden)


def test_every_package_is_a_root_of_the_contracts() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    packages = {p.name for p in (ROOT / "src").iterdir() if (p / "__init__.py").exists()}
    assert packages == set(config["root_packages"])


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle anywhere: between modules, and so between subpackages (function-level
    imports included, as grimp reads them)."""
    import graphlib

    import grimp

    graph = grimp.build_graph(
        "printjob_core", "printjob_adapters", "printjob_http", "printjob_client"
    )
    order = graphlib.TopologicalSorter(
        {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    )
    try:
        order.prepare()
    except graphlib.CycleError as cycle:
        raise AssertionError(f"an import cycle: {' -> '.join(cycle.args[1])}") from None
