"""Runs inside an environment image: compare a parser's result with the expected CSV there.

Usage: judge.py [--wait-for GO_FILE] RESULT_JSON EXPECTED_CSV VERDICT_JSON

This is the SECOND execution of a check, in a fresh container of the parser's own
environment, so that ``DataFrame.equals`` means what it means under the pandas the parser
ran with. Its inputs are the first execution's ``result.json`` (plain JSON, decoded with
the controller's own allowlisting decoder, ``frame_codec.py``) and the expected CSV; the
parser itself never enters this container, and the parser's container never saw the CSV.
The verdict is JSON: passed, a one-line summary, the first difference, the pandas version.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SCHEMA = "sandloop.verdict/1"


def verdict(result_path, expected_path):
    """Decode the result, read the CSV under this pandas, compare; return the verdict."""
    import pandas as pd
    from compare import compare_frames
    from frame_codec import ParserFailure, ResultFormatError, decode_result

    with open(result_path, "rb") as handle:
        try:
            frame = decode_result(handle.read())
        except ResultFormatError as exc:
            return {"schema": SCHEMA, "status": "error", "message": str(exc)[:500], "pandas": pd.__version__}
    if isinstance(frame, ParserFailure):
        return {"schema": SCHEMA, "status": "error", "message": "the result is a failure", "pandas": pd.__version__}
    comparison = compare_frames(frame, pd.read_csv(expected_path))
    first = ""
    if not comparison.passed and comparison.cells:
        cell = comparison.cells[0]
        first = f"row {cell.row} {cell.column!r}: expected {cell.expected}, got {cell.actual}"
    return {
        "schema": SCHEMA, "status": "ok", "passed": bool(comparison.passed),
        "summary": comparison.summary()[:500], "first_difference": (first or comparison.summary())[:500],
        "report": comparison.report()[:8000], "pandas": pd.__version__,
    }


def main(argv):
    """Write the verdict; exit 0 when one was written."""
    if argv[:1] == ["--wait-for"]:
        import pandas  # noqa: F401 - warm the interpreter before the work arrives

        while not os.path.exists(argv[1]):
            time.sleep(0.002)
        argv = argv[2:]
    result_path, expected_path, verdict_path = argv
    document = verdict(result_path, expected_path)
    with open(verdict_path, "w", encoding="utf-8") as out:
        json.dump(document, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
