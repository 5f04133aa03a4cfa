"""``python -m tests.integration.hostile.hostile_run PARSER_FILE [--crash] -- run --target NAME``

The real CLI with one test double: the coder. No LLM can be made to write hostile code here,
so ``HostileCoder`` stands in for one that does: every attempt is the parser in PARSER_FILE;
with ``--crash`` the coder raises a RuntimeError when asked to refine (a bug inside the loop,
after a sandbox ran). Everything else (engine, image, sandbox, history, CLI) is real.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agents.bank_parser.coders.base import GeneratedCode


class HostileCoder:
    """A test double for an LLM coder that writes the hostile parser it was given."""

    name = "hostile"

    def __init__(self, code: str, crash: bool) -> None:
        self.code, self.crash = code, crash

    def generate(self, analysis):  # noqa: ANN001, ANN201
        return GeneratedCode(self.code, "hostile")

    def refine(self, analysis, history):  # noqa: ANN001, ANN201
        if self.crash:
            raise RuntimeError("the coder double crashed on purpose")
        return GeneratedCode(self.code, f"hostile-{len(history) + 1}")


def main(argv: list[str]) -> int:
    from agents.bank_parser import agent
    from controller.entry import cli

    split = argv.index("--")
    options, cli_args = argv[:split], argv[split + 1:]
    coder = HostileCoder(Path(options[0]).read_text(), "--crash" in options)
    # The bank-parser agent builds its coder in plan(); replace the two names it calls.
    agent.make_coder = lambda settings, lessons=None: coder  # type: ignore[assignment]
    agent.check_coder = lambda coder: ""  # type: ignore[assignment]
    return cli.main(cli_args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
