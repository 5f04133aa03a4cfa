"""Write the synthetic corpus: ``python -m tests.corpus.generate --out DIR --seed N``.

Each bank becomes ``DIR/<bank>/statement.pdf`` and ``DIR/<bank>/result.csv``, a target as
``data/`` holds them. Existing bank folders in ``DIR`` are replaced; nothing else there is
touched. The same seed always writes the same bytes.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.corpus.expected import write_expected
from tests.corpus.ledger import make_statement
from tests.corpus.render import render_pdf
from tests.corpus.specs import BANKS, OUTSIDE, BankSpec

DEFAULT_SEED = 7
PDF_NAME = "statement.pdf"
CSV_NAME = "result.csv"


class UnknownBank(ValueError):
    """A bank name that no spec has."""


@dataclass(frozen=True)
class Generated:
    """One bank's files and their size."""

    spec: BankSpec
    folder: Path
    pages: int
    rows: int


def generate_bank(out: Path, spec: BankSpec, seed: int) -> Generated:
    """Write one bank's PDF and CSV under ``out/<bank>/`` (replacing an earlier folder)."""
    folder = out / spec.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    statement = make_statement(spec, seed)
    pages = render_pdf(folder / PDF_NAME, statement, spec)
    frame = write_expected(folder / CSV_NAME, statement, spec)
    return Generated(spec, folder, pages, len(frame))


def generate(out: Path, seed: int = DEFAULT_SEED, names: Sequence[str] = ()) -> list[Generated]:
    """Write the corpus (or only the banks in ``names``, which may name outside layouts)."""
    specs = [s for s in BANKS + OUTSIDE if s.name in names] if names else list(BANKS)
    unknown = set(names) - {s.name for s in specs}
    if unknown:
        raise UnknownBank(f"unknown bank(s): {', '.join(sorted(unknown))}")
    out.mkdir(parents=True, exist_ok=True)
    return [generate_bank(out, spec, seed) for spec in specs]


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; prints one line per bank written."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.corpus.generate", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write the bank folders into"
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--bank",
        action="append",
        default=[],
        metavar="NAME",
        help="only this bank (repeatable; may name an outside layout such as kestrel)",
    )
    parser.add_argument(
        "--cases",
        action="store_true",
        help="also write the issue-15 cases: every bank without result.csv (nocsv-*), "
        "short scanned statements (scan-*); with --hostile, PDFs to refuse",
    )
    parser.add_argument("--hostile", action="store_true", help="with --cases: locked, empty, letter")
    args = parser.parse_args(argv)
    try:
        written = generate(args.out, args.seed, args.bank)
    except UnknownBank as exc:
        print(f"error: {exc}; banks: {', '.join(s.name for s in BANKS + OUTSIDE)}", file=sys.stderr)
        return 2
    for item in written:
        print(f"{item.spec.name:<12} {item.pages:>3} page(s) {item.rows:>4} rows  {item.folder}")
    if args.cases:
        from tests.corpus.cases import write_cases

        for folder in write_cases(args.out, args.seed, hostile=args.hostile):
            print(f"{folder.name:<12} (issue 15 case)  {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
