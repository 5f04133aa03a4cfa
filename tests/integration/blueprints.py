"""Blueprint targets the integration tests make: one whose required tool reads an empty file (the
manager's no-go, issue 41), shared by the CLI's, the service's and the console's tests."""

from __future__ import annotations

import json
from pathlib import Path

NO_GO = "empty-supplier"
#: The reason the manager gives, as the run's one line.
NO_GO_REASON = "the required tool deliveries has nothing to read: deliveries.csv is empty"
NO_GO_BLUEPRINT = {
    "name": NO_GO, "title": "Supplier review", "goal": "Decide whether to renew the supplier.",
    "subject": "Northwind Parts",
    "tools": [{"name": "deliveries", "files": ["deliveries.csv"], "required": True}],
    "sections": [{"title": "Deliveries", "tools": ["deliveries"]}],
}


def no_go_target(data: Path) -> Path:
    """``data/empty-supplier``: a blueprint whose required tool reads an empty CSV; its blueprint.json."""
    folder = data / NO_GO
    folder.mkdir(parents=True)
    (folder / "target.toml").write_text('agent = "blueprint"\n')
    (folder / "deliveries.csv").write_bytes(b"")
    path = folder / "blueprint.json"
    path.write_text(json.dumps(NO_GO_BLUEPRINT))
    return path
