"""A synthetic corpus of bank statements: invented banks, real PDFs, matching result.csv.

Each bank is a small declarative :class:`~tests.corpus.specs.BankSpec` (which layout features
it combines); :mod:`tests.corpus.ledger` makes its transactions from a seed,
:mod:`tests.corpus.render` draws the PDF with reportlab (a real text layer), and
:mod:`tests.corpus.expected` writes the CSV a correct parser must return. Everything is
deterministic from the seed: the same seed gives byte-identical files.

``python -m tests.corpus.generate --out DIR --seed N`` writes ``DIR/<bank>/`` folders that
``python -m controller run --all`` (with ``SBX_DATA_DIR=DIR``) runs like any other target.
"""
