"""Runs inside the python-parser sandbox: import a parser, call parse(pdf), report as JSON.

Usage: entrypoint.py [--wait-for GO_FILE] PARSER_PY STATEMENT_PDF RESULT_JSON

With ``--wait-for`` (the warm pool's mode) it imports pandas and pdfplumber first, prints
the ready marker (``\x1esandloop-ready\x1e``) on stdout, then blocks reading one line from
stdin (the holder's ``go``, written once the inputs are unpacked) and checks that GO_FILE
exists (exit 4 if not: the inputs never arrived). Only then does it load the parser: the
container is started before the code to run exists.

The result is JSON only (never pickle), in the ``sandloop.frame/1`` shape the controller's
decoder accepts: columns, dtype names, index and rows, with NaN kept as NaN and None as null
so that ``DataFrame.equals`` means the same on both sides. Failures are JSON too, with the
exception type, message and traceback. Exit status: 0 ok, 1 the parser raised, 2 the parser
broke the contract (no ``parse``, or it did not return a DataFrame), 3 result unwritable,
4 no inputs. Once the result is written and closed (and the ``atexit`` handlers ran) the
process ends with ``os._exit``: the interpreter's teardown, tens of milliseconds with pandas
loaded, would only delay the end.
This file depends on nothing but the standard library and pandas.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from typing import Any

SCHEMA = "sandloop.frame/1"
DOCUMENT_SCHEMA = "sandloop.document/1"
#: Told to the holder's reader on stdout once the warm interpreter is ready for its work.
READY_MARKER = b"\x1esandloop-ready\x1e"


class ContractError(Exception):
    """The parser module does not honour ``parse(pdf_path) -> pandas.DataFrame``."""


def load_module(parser_path: str) -> Any:
    """Import the program (a parser, or the controller's statement probe) from its file."""
    spec = importlib.util.spec_from_file_location("generated_parser", parser_path)
    if spec is None or spec.loader is None:
        raise ContractError(f"cannot load {parser_path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules["generated_parser"] = module
    spec.loader.exec_module(module)
    return module


def run_program(program_path: str, pdf_path: str) -> dict[str, Any]:
    """Run the program on the statement: a parser's frame, or the document the controller's
    statement probe returns (``sandloop_document``, issue 23). The controller decodes each
    result with the decoder of what it asked for, so a parser that returns a document is
    refused as a parser."""
    module = load_module(program_path)
    probe = getattr(module, "sandloop_document", None)
    if callable(probe):
        return {"schema": DOCUMENT_SCHEMA, "status": "ok", "document": probe(pdf_path)}
    parse = getattr(module, "parse", None)
    if not callable(parse):
        raise ContractError("the parser module defines no callable parse(pdf_path)")
    return encode_frame(parse(pdf_path))


def encode_value(value: Any) -> Any:
    """Turn one cell into plain JSON, keeping NaN apart from None."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item") and not hasattr(value, "isoformat"):
        value = value.item()  # numpy scalar -> Python scalar
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value  # json writes NaN and Infinity as literals, which json.loads reads back
    if hasattr(value, "isoformat"):
        import pandas as pd

        return None if pd.isna(value) else {"$datetime": value.isoformat()}
    return {"$repr": repr(value)[:200]}


def encode_index(index: Any) -> dict[str, Any]:
    """Describe the index compactly when it is a plain range, else list its values."""
    import pandas as pd

    if isinstance(index, pd.RangeIndex):
        return {"kind": "range", "start": index.start, "stop": index.stop, "step": index.step}
    return {"kind": "values", "dtype": str(index.dtype), "values": [encode_value(v) for v in index]}


def encode_frame(frame: Any) -> dict[str, Any]:
    """Encode a DataFrame as the ``sandloop.frame/1`` document."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise ContractError(f"parse() returned {type(frame).__name__}, not a pandas DataFrame")
    columns = [encode_value(c) for c in frame.columns]
    rows = [[encode_value(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    return {
        "schema": SCHEMA,
        "status": "ok",
        "columns": columns,
        "dtypes": [str(t) for t in frame.dtypes],
        "index": encode_index(frame.index),
        "data": rows,
    }


def failure(kind: str, exc: BaseException) -> dict[str, Any]:
    """Describe an exception the parser raised or a broken contract."""
    return {
        "schema": SCHEMA,
        "status": "error",
        "kind": kind,
        "error_type": type(exc).__name__,
        "message": str(exc)[:2000],
        "traceback": "".join(traceback.format_exception(exc))[-8000:],
    }


def warm_up_and_wait(go_file: str) -> bool:
    """Import the heavy libraries, say so, then block until the holder hands over the work.

    Ready means pdfplumber is imported: all the statement probe (a run's first execution)
    needs. pandas, which only parsers need, goes on importing in a thread while the go line is
    awaited; a parser's own ``import pandas`` waits for it (the module's import lock), so a
    parser loses nothing and the probe does not wait for pandas (issue 23: the warm run).

    Returns whether the inputs arrived (the go file exists once the holder unpacked them).
    """
    import os
    import threading

    import pdfplumber  # noqa: F401 - imported for its side effect: a warm interpreter

    os.write(1, READY_MARKER)
    threading.Thread(target=_import_pandas, name="sandloop-warm-pandas", daemon=True).start()
    _read_go_line()
    return os.path.exists(go_file)


def _import_pandas() -> None:
    import pandas  # noqa: F401 - imported for its side effect: a warm interpreter


def _read_go_line() -> None:
    """Block until one line (or EOF) arrives on stdin, byte by byte: read nothing past it."""
    import os

    while True:
        try:
            byte = os.read(0, 1)
        except OSError:
            return
        if byte in (b"", b"\n"):
            return


def main(argv: list[str]) -> int:
    """Run the parser on the statement and write the result document."""
    if argv[:1] == ["--wait-for"]:
        if not warm_up_and_wait(argv[1]):
            print("sandloop entrypoint: the inputs never arrived", file=sys.stderr)
            return 4
        argv = argv[2:]
    parser_path, pdf_path, result_path = argv
    try:
        document, status = run_program(parser_path, pdf_path), 0
    except ContractError as exc:
        document, status = failure("type_error", exc), 2
    except BaseException as exc:  # noqa: BLE001 - whatever the parser raises is reported
        if isinstance(exc, KeyboardInterrupt):
            raise
        document, status = failure("execution_error", exc), 1
    try:
        with open(result_path, "w", encoding="utf-8") as out:
            json.dump(document, out, allow_nan=True)
    except (OSError, TypeError, ValueError) as exc:
        print(f"sandloop entrypoint: cannot write {result_path}: {exc}", file=sys.stderr)
        return 3
    if status:
        print(document.get("traceback", ""), file=sys.stderr)
    return status


def finish(status: int) -> None:
    """Run the exit handlers, flush what was printed and end now, skipping the teardown.

    The parser's ``atexit`` handlers still run, as they would in a normal exit: what they
    do to the outputs is the parser's doing, and the controller must see it.
    """
    import atexit
    import os

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    finish(main(sys.argv[1:]))
