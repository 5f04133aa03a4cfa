"""Owner label of the sandboxes a test session creates in-process.

It carries this session's pid, so two test sessions on one engine (a developer's run beside
CI, or two worktrees) never take each other's live containers for their own leftovers. The
host part is "pytest", not the real host name, so the reaper of a running controller never
mistakes a test's sandbox for one of a dead process on its host.
"""

from __future__ import annotations

import os

TEST_OWNER = f"pytest:{os.getpid()}"
