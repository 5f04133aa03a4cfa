"""Server paths out of the text a page shows: a run-relative name instead.

The agents write paths into what they report (a node's detail ``… ; runs/ID/attempts/1/report.md``,
a summary's ``parser_path``, a progress line ``published /srv/sandloop/runs/ID/parser.py``): right
on the command line, but a page must not show where the server keeps its files. So, in that text:

- a path into the run's own folder, whatever its prefix (``runs/ID/``, ``/abs/…/runs/ID/``), loses
  the prefix: ``attempts/1/report.md``, the name the run's Files list and its downloads use; the
  folder itself is "the run folder";
- any other absolute path of two or more parts becomes its last part (``/srv/x/parsers/icici.py``
  → ``icici.py``). A URL (``https://host/a/b``) is left alone: its slashes follow a word or ``:``.

Only text the agents or the platform wrote goes through here; a sandbox's own output (stdout,
stderr) is the parser's, shown as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: A path's characters: no space, quote, bracket or separator of a list.
_PART = r"[^\s'\"`<>()\[\]{},;|\\]"
_ABSOLUTE = re.compile(rf"(?<![\w.:/~@-])/(?:{_PART}+/)+({_PART}+)")
RUN_FOLDER = "the run folder"


@lru_cache(maxsize=256)
def _in_run(run_id: str) -> re.Pattern[str]:
    return re.compile(rf"{_PART}*/{re.escape(run_id)}(/(?=\S)|/?(?!{_PART}))")


def local_names(text: str, run_id: str) -> str:
    """``text`` with paths into run ``run_id``'s folder made relative to it, other absolute paths cut to their name."""
    if run_id:
        text = _in_run(run_id).sub(lambda m: "" if m.group(1) == "/" else RUN_FOLDER, text)
    return _ABSOLUTE.sub(lambda m: m.group(1), text)
