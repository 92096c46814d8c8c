"""docs/grafana-dashboard.json: valid JSON whose panels query only metrics printjob has."""

from __future__ import annotations

import json
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_panel_queries_a_documented_metric() -> None:
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    operations = (DOCS / "operations.md").read_text()
    documented = set(re.findall(r"^\| `(printjob_[a-z_]+)` \|", operations, re.MULTILINE))
    assert len(documented) >= 12
    queried: set[str] = set()
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            for name in re.findall(r"printjob_[a-z_]+", target["expr"]):
                queried.add(re.sub(r"_(bucket|sum|count)$", "", name))
    assert queried and queried <= documented, queried - documented
    # Every documented metric is on the dashboard.
    assert documented <= queried, documented - queried
