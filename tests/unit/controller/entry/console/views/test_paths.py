"""No server path in a page (issue 43): paths the agents wrote are named as in the run folder.

A node's detail, a summary's ``parser_path`` and a progress line hold the paths the run used
(``runs/ID/…``, absolute ones in a service); the console shows the run-relative name the Files
list uses, and an absolute path outside the run as its last part.
"""

from __future__ import annotations

import pytest

from controller.entry.console.views.paths import RUN_FOLDER, local_names

RUN = "20261128-090102-icici-ab12"


class TestLocalNames:
    @pytest.mark.parametrize(("text", "shown"), [
        (f"412 words; runs/{RUN}/attempts/1/report.md", "412 words; attempts/1/report.md"),
        (f"/srv/sandloop/runs/{RUN}/report.md", "report.md"),
        (f"3 of 3 attempt(s) used; partial output /tmp/x/runs/{RUN}",
         f"3 of 3 attempt(s) used; partial output {RUN_FOLDER}"),
        ("published /home/ops/custom_parsers/icici_parser.py.", "published icici_parser.py."),
        (f'{{"line": "saved runs/{RUN}/attempts/2/parser.py"}}', '{"line": "saved attempts/2/parser.py"}'),
    ])
    def test_paths_become_run_relative_names(self, text: str, shown: str):
        assert local_names(text, RUN) == shown

    @pytest.mark.parametrize("text", [f"run {RUN} started", "see https://example.com/a/b", "01/08/2024 and/or 3/4",
                                      "Opening balance 1,935.30"])
    def test_what_is_not_a_server_path_is_kept(self, text: str):
        assert local_names(text, RUN) == text
