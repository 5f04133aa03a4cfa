"""Every decoder of untrusted bytes, with the inputs to try it on and the contract it must keep.

A decoder's contract: whatever the input, it returns its normal result or raises only the
one error type it documents (a ``ResultFormatError``, a ``ConfigError``...); anything else
escaping it (``RecursionError``, ``KeyError``, ``MemoryError``, a hang) is a bug that would
crash a node. ``check`` raises :class:`ContractBroken` for such an input; the fuzzer
(:mod:`tests.fuzz.run`) and the property tests under tests/unit both use these.

The strategies mix three kinds of input: random bytes or text; inputs assembled from the
format's own pieces (so the decoder gets past its first check); and known bombs (deep
nesting, huge numbers, repeated keys, invalid UTF-8, lone surrogates, control characters).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import strategies as st

from controller.platform.settings import PROJECT_ROOT

ICICI = PROJECT_ROOT / "data" / "icici"


class ContractBroken(Exception):
    """The decoder did something its contract forbids (an undocumented exception, bad output)."""


@dataclass(frozen=True)
class Decoder:
    """A decoder under test: its name, what to feed it, and how to judge one input."""

    name: str
    inputs: st.SearchStrategy[Any]
    check: Callable[[Any], None]
    warmup: Callable[[], Any] = lambda: None
    slow_ok: bool = False  # a malformed PDF may take seconds (it is the user's own input, not a sandbox's)


def _guard(allowed: tuple[type[BaseException], ...], call: Callable[[], Any]) -> Any:
    """Run ``call``; an exception outside ``allowed`` breaks the contract."""
    try:
        return call()
    except allowed:
        return None
    except ContractBroken:
        raise
    except BaseException as exc:  # noqa: BLE001 - that is what is being looked for
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ContractBroken(f"{type(exc).__name__}: {str(exc)[:200]}") from exc


# --- JSON pieces -------------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.integers(min_value=-(10**30), max_value=10**30),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=16,
)
DTYPES = [
    "str", "string", "object", "bool", "boolean", "int8", "int64", "uint8", "Int64", "UInt16",
    "float32", "float64", "Float64", "datetime64[ns]", "datetime64[us]", "datetime64[ns, UTC]",
    "datetime64[ns, Europe/Paris]", "datetime64[xs]", "datetime64[ns, ../../etc/passwd]",
    "category", "complex128", "timedelta64[ns]", "period[D]", "", "object\x00",
]
_CELLS = st.one_of(
    _SCALARS,
    st.builds(lambda t: {"$datetime": t}, st.one_of(st.text(max_size=30), st.sampled_from(
        ["2024-01-31", "2024-01-31T10:00:00", "9999-12-31", "0001-01-01", "2024-13-45", "NaT"]))),
    st.builds(lambda t: {"$repr": t}, _JSON),
    _JSON,
)


@st.composite
def _frame_documents(draw: st.DrawFn) -> dict[str, Any]:
    width = draw(st.integers(0, 5))
    rows = draw(st.integers(0, 6))
    columns = draw(st.lists(st.one_of(st.text(max_size=12), st.integers(), _CELLS), min_size=width, max_size=width))
    dtypes = draw(st.lists(st.sampled_from(DTYPES), min_size=width, max_size=width))
    same_type = st.sampled_from([st.integers(-1000, 1000), st.floats(allow_nan=True), st.text(max_size=8), _CELLS])
    column_values = [draw(st.lists(draw(same_type), min_size=rows, max_size=rows)) for _ in range(width)]
    data = [[column_values[c][r] for c in range(width)] for r in range(rows)]
    if draw(st.integers(0, 9)) == 0:
        data = draw(st.lists(st.lists(_CELLS, max_size=6), max_size=6))
    index = draw(st.one_of(
        st.just({"kind": "range", "start": 0, "stop": rows, "step": 1}),
        st.fixed_dictionaries({"kind": st.just("range"), "start": _SCALARS, "stop": _SCALARS, "step": _SCALARS}),
        st.fixed_dictionaries({"kind": st.just("values"), "dtype": st.sampled_from(DTYPES),
                               "values": st.lists(_CELLS, min_size=rows, max_size=rows)}),
        _JSON,
    ))
    document: dict[str, Any] = {"schema": "sandloop.frame/1", "status": "ok", "columns": columns,
                                "dtypes": dtypes, "index": index, "data": data}
    if draw(st.integers(0, 5)) == 0:
        document = {"schema": "sandloop.frame/1", "status": "error",
                    "kind": draw(st.one_of(st.sampled_from(["type_error", "execution_error"]), _JSON)),
                    "error_type": draw(_JSON), "message": draw(_JSON), "traceback": draw(_JSON)}
    return document


def _dumps(document: Any) -> bytes:
    return json.dumps(document, allow_nan=True).encode("utf-8", errors="surrogatepass")


def _bombs() -> st.SearchStrategy[bytes]:
    depth = st.integers(1, 300_000)
    return st.one_of(
        depth.map(lambda n: b"[" * n + b"]" * n),
        depth.map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
        depth.map(lambda n: b'{"schema":"sandloop.frame/1","data":' + b"[" * n),
        st.integers(1, 20_000).map(lambda n: b'{"schema":"sandloop.frame/1","status":"ok","columns":["a"],'
                                               b'"dtypes":["int64"],"data":[[' + b"9" * n + b"]]}"),
        st.integers(1, 300_000).map(lambda n: b"[" + b"0," * n + b"0]"),
        st.just(b'{"schema":"sandloop.frame/1","schema":"sandloop.frame/1","status":"ok"}'),
        st.just(b'{"schema":"sandloop.frame/1","status":"ok","columns":["\\ud800"],"dtypes":["object"],'
                b'"data":[],"index":{"kind":"range","start":0,"stop":0,"step":1}}'),
        st.just(b'{"schema":"sandloop.frame/1","status":"error","message":"\\u001b]0;pwned\\u0007\\u001b[2J"}'),
        st.just(b"\xff\xfe{}"), st.just(b'"\\"'), st.just(b"[NaN, Infinity, -Infinity]"),
    )


def _mutated(documents: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    """A valid document with a few bytes replaced, inserted or cut off."""

    @st.composite
    def mutate(draw: st.DrawFn) -> bytes:
        raw = bytearray(draw(documents))
        for _ in range(draw(st.integers(1, 4))):
            if not raw:
                break
            at = draw(st.integers(0, len(raw) - 1))
            how = draw(st.integers(0, 2))
            if how == 0:
                raw[at] = draw(st.integers(0, 255))
            elif how == 1:
                raw[at:at] = draw(st.sampled_from([b"[", b"]", b"{", b"}", b",", b'"', b"\\", b"NaN", b"\xc3"]))
            else:
                del raw[at:]
        return bytes(raw)

    return mutate()


FRAME_INPUTS = st.one_of(
    st.binary(max_size=512),
    _JSON.map(_dumps),
    _frame_documents().map(_dumps),
    _bombs(),
    _mutated(_frame_documents().map(_dumps)),
)
_EXPECTED: list[pd.DataFrame] = []


def _expected() -> pd.DataFrame:
    if not _EXPECTED:
        _EXPECTED.append(pd.read_csv(ICICI / "result.csv"))
    return _EXPECTED[0]


def check_frame(raw: bytes) -> None:
    """decode_result returns a frame or a failure or raises ResultFormatError; the frame compares cleanly."""
    from agents.bank_parser.compare import compare_frames
    from agents.bank_parser.frame_codec import ParserFailure, ResultFormatError, decode_result

    decoded = _guard((ResultFormatError,), lambda: decode_result(raw))
    if isinstance(decoded, ParserFailure):
        for text in (decoded.error_type, decoded.message):
            if any(ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F for ch in text):
                raise ContractBroken(f"a control character reached a one-line field: {text[:60]!r}")
    elif decoded is not None:
        comparison = _guard((), lambda: compare_frames(decoded, _expected()))
        _guard((), lambda: (comparison.summary() + comparison.report()).encode("utf-8"))


# --- Idris2 transcripts ------------------------------------------------------------------

_IDRIS_LINES = [
    "1/1: Building Domains.X (Domains/X.idr)", "Error: While processing right hand side of f. Undefined name y.",
    "Error: Couldn't parse declaration.", "Warning: unreachable clause", "Uncaught error: boom",
    "Domains.X:9:7--9:8", "Error:6:19--6:20", " 9 | fee = y", "   |", "       ^^^", "Main> ", "Domains.X> :q",
    "Did you mean: x?", "Possible correct patterns:", "\x1b[31mError:\x1b[0m red", "\x1b]0;title\x07", "\r",
    "While processing type of g. Mismatch between Nat and Integer.", " " * 5000 + "x", ":" * 3000,
    "Error: " + "While processing a of " * 200,
]
IDRIS_INPUTS = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(st.sampled_from(_IDRIS_LINES), st.text(max_size=40)), max_size=80).map("\n".join),
    st.integers(1, 20_000).map(lambda n: "Error: x\n" * n),
    st.integers(1, 200_000).map(lambda n: "Error: x\nDomains.X:1:1--1:2\n" + " " * n + "x\n"),
)


def check_idris(text: str) -> None:
    """parse_transcript never raises; run_check classifies any transcript, raising only SandboxError."""
    from agents.idris.diagnostics import MAX_DIAGNOSTICS, parse_transcript, summarize
    from agents.idris.typecheck import check_spec, run_check
    from agents.ports.errors import SandboxError
    from agents.ports.sandbox import SandboxLimits

    parsed = _guard((), lambda: parse_transcript(text))
    if len(parsed.diagnostics) > MAX_DIAGNOSTICS:
        raise ContractBroken(f"{len(parsed.diagnostics)} diagnostics kept, more than {MAX_DIAGNOSTICS}")
    _guard((), lambda: json.dumps([d.to_json() for d in parsed.diagnostics], ensure_ascii=False).encode("utf-8"))
    _guard((), lambda: [d.one_line() for d in parsed.diagnostics] and summarize(parsed.diagnostics))
    sandbox = _TextSandbox(text, exit_code=len(text) % 130)
    spec = check_spec("img", "Domains.X", "module Domains.X", SandboxLimits(), {})
    result = _guard((SandboxError,), lambda: run_check(sandbox, spec))
    if result is not None and ("\n" in result.message or "\x1b" in result.message):
        raise ContractBroken(f"a check's one-line message holds a line break or escape: {result.message[:60]!r}")


class _TextSandbox:
    """A test double answering every run with ``text`` on stdout and a given exit status."""

    def __init__(self, text: str, exit_code: int) -> None:
        self.text, self.exit_code = text, exit_code

    def run(self, spec: Any) -> Any:
        from agents.ports.sandbox import CapturedStream, SandboxResult

        data = self.text.encode("utf-8", errors="replace")
        return SandboxResult(exit_code=self.exit_code, stdout=CapturedStream(data, len(data)),
                             stderr=CapturedStream(b"", 0), timed_out=False, oom_killed=False,
                             wall_seconds=0.1, files={})


# --- LLM replies -------------------------------------------------------------------------

_REPLY_PIECES = [
    "```python", "```py", "```", "~~~", "````", "```idris", "def parse(pdf_path):", "    return None",
    "import pandas as pd", "from x import y", "parse = 1", "Here is the parser:", "Hope this helps!",
    "@decorator", "class Parser:", '"""', "'''", "\r\n", "\ufeff", "\x00", "module Domains.X", "    ",
    "async def parse(p): pass", "def parse(p):\n    return " + "-" * 5000 + "1", "x = " + "(" * 250,
]
REPLY_INPUTS = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(st.sampled_from(_REPLY_PIECES), st.text(max_size=30)), max_size=40).map("\n".join),
    st.integers(1, 120_000).map(lambda n: "def parse(p):\n    return " + "not " * n + "1\n"),
    st.integers(1, 60_000).map(lambda n: "```python\nx = " + "lambda: " * n + "1\n```"),
)


def check_reply(reply: str) -> None:
    """extract_python/extract_fenced return an Extraction; usable code parses and defines parse()."""
    import ast

    from agents.llm.extract import PYTHON_TAGS, extract_fenced, extract_python

    found = _guard((), lambda: extract_python(reply))
    if found.ok:
        tree = _guard((), lambda: ast.parse(found.code))
        if tree is None:
            raise ContractBroken("extract_python returned code that does not parse")
    _guard((), lambda: extract_fenced(reply, frozenset({"idris", "idr"}), "module "))
    _guard((), lambda: extract_fenced(reply, PYTHON_TAGS, "def parse"))


# --- target.toml -------------------------------------------------------------------------

_TOML_PIECES = [
    'agent = "idris"', 'agent = "bank_parser"', 'agent = "other"', 'project = "ServiceContract"',
    'project = "Money"', 'project = "lower"', 'document_type = "contract"', 'document = "../x.pdf"',
    'document = "doc.pdf"', "[limits]", "max_attempts = 5", "max_attempts = -1", "timeout_seconds = 1e309",
    "memory_mb = 99999999999999999999999", "[[limits]]", "unknown = 1", "a = [[[[[[1]]]]]]", 'a = """',
    "a = {b = {c = 1}}", "a.b.c = 1", "a = 1979-05-27T07:32:00Z", "= 1", "[", "\x00", "\ufeff",
]
TOML_INPUTS = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(_TOML_PIECES), st.text(max_size=20)), max_size=20).map("\n".join),
    st.integers(1, 50_000).map(lambda n: "a = " + "[" * n + "]" * n),
    st.integers(1, 20_000).map(lambda n: "a = " + "{b=" * n + "1" + "}" * n),
    st.integers(60_000, 200_000).map(lambda n: "#" * n),
)


def check_toml(text: str) -> None:
    """load_target_config returns a TargetConfig (or None) or raises ConfigError/TargetError."""
    from agents.ports.errors import ConfigError, TargetError
    from agents.targets import load_target_config

    with tempfile.TemporaryDirectory(prefix="sandloop-fuzz-") as root:
        folder = Path(root) / "t"
        folder.mkdir()
        (folder / "target.toml").write_bytes(text.encode("utf-8", errors="surrogatepass"))
        _guard((ConfigError, TargetError), lambda: load_target_config(Path(root), "t"))


# --- intake replies (the intake agent's deterministic state resolver) ----------------------

_INTAKE_PIECES = ["I earn", "80,000", "80k", "1.2 million", "$1,250.50", "actually", "sorry", "I meant",
                  "I lost my job", "bankrupt", "will", "next month", "used to", "skip", "and", "but", ",", ".",
                  "no longer", "rent", "years old", "2030", "March 2031", "2030-06-01", "1/6/2030", "yes", "no",
                  "I live in", "want to", "by", "months", "savings", "\x1b[2J", "\u2028", "\x00",
                  "I'm", "my name is", "forty-two", "last year", "in three years", "1.234,56", "3.2k", "self employed",
                  "Founded in March 2015", "150", "%"]
INTAKE_INPUTS = st.one_of(
    st.text(max_size=400),
    st.lists(st.one_of(st.sampled_from(_INTAKE_PIECES), st.text(max_size=12)), max_size=80).map(" ".join),
    st.integers(1, 20_000).map(lambda n: "1," * n),
    st.integers(1, 20_000).map(lambda n: "9" * n),
    st.integers(1, 5_000).map(lambda n: "actually and " * n),
    st.integers(1, 5_000).map(lambda n: "I earn 1,000 " * n),
)


def check_intake_reply(reply: str) -> None:
    """resolve() returns a Resolution whose updates name fields of the schemas, with values their JSON
    Schema accepts (the jsonschema check every stored value passes)."""
    from agents.intake.agent import load_target
    from agents.intake.models import Question
    from agents.intake.resolver import ResolverInput, resolve
    from agents.intake.values import check
    from agents.ports.config import AgentConfig

    schemas = load_target(AgentConfig(data_dir=PROJECT_ROOT / "data"), "intake-priority-shift").schemas
    kinds = {"boolean": (bool,), "integer": (int, float), "number": (int, float), "string": (str,)}
    for question in (Question("Income", "annual_amount", "?"), Question("Personal", "city", "?"),
                     Question("Personal", "age", "?", "confirm", 1, 41)):
        found = _guard((), lambda q=question: resolve(ResolverInput(reply, q, schemas, {"Personal": {"age": 42}})))
        for update in found.updates:
            spec = schemas.get(update.node, None)
            field = spec.properties.get(update.field) if spec else None
            cleared = update.value is None and update.source == "life_event"  # "I was laid off": asked again
            if field is None or not (update.skipped or cleared or isinstance(update.value, kinds[field.type])):
                raise ContractBroken(f"update {update.node}.{update.field}={update.value!r} breaks the schemas")
            if not update.skipped and update.value is not None and not check(update.field, field, update.value).ok:
                raise ContractBroken(f"update {update.node}.{update.field}={update.value!r} fails its JSON Schema")


# --- PDFs --------------------------------------------------------------------------------

_PDF: list[bytes] = []


def _sample_pdf() -> bytes:
    if not _PDF:
        _PDF.append((ICICI / "icici sample.pdf").read_bytes())
    return _PDF[0]


@st.composite
def _broken_pdfs(draw: st.DrawFn) -> bytes:
    raw = bytearray(_sample_pdf())
    how = draw(st.integers(0, 3))
    if how == 0:
        del raw[draw(st.integers(8, len(raw) - 1)):]
    elif how == 1:
        for _ in range(draw(st.integers(1, 40))):
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
    elif how == 2:
        at = draw(st.integers(0, len(raw) - 1))
        raw[at:at] = draw(st.sampled_from([b"<<" * 5000, b"[" * 5000, b"/Length 999999999", b"stream\n", b"%%EOF",
                                           b"0 0 obj", b"/Filter /FlateDecode", b"\x00" * 64]))
    else:
        raw = bytearray(b"%PDF-1.7\n" + draw(st.binary(max_size=400)))
    return bytes(raw)


PDF_INPUTS = _broken_pdfs()


def check_pdf(raw: bytes) -> None:
    """resolve_target + the statement probe return a scan or raise TargetError, whatever the PDF holds
    (the probe in-process: the fuzzer makes its own PDFs; production runs it in a sandbox)."""
    from agents.bank_parser.target import resolve_target
    from agents.ports.config import AnalysisLimits
    from agents.ports.errors import TargetError
    from tests.doubles.inprocess_statement import InProcessStatementReader

    root = Path(tempfile.mkdtemp(prefix="sandloop-fuzz-"))
    try:
        (root / "t").mkdir()
        (root / "t" / "statement.pdf").write_bytes(raw)
        target = _guard((TargetError,), lambda: resolve_target("t", root))
        if target is not None:
            reader = InProcessStatementReader(AnalysisLimits(analysed_pages=1))
            _guard((TargetError,), lambda: reader.read(target.pdf))
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- the statement probe's summary (issue 23): what a sandbox says a PDF holds ------------

_WORDS = st.lists(st.tuples(st.text(max_size=8), *[st.floats(allow_nan=True)] * 4), max_size=4)
_PAGES = st.fixed_dictionaries({
    "number": st.integers(-2, 5), "width": st.floats(), "height": st.floats(), "text": st.text(max_size=40),
    "tables": st.lists(st.lists(st.lists(st.one_of(st.none(), st.text(max_size=5)), max_size=3), max_size=3),
                       max_size=2),
    "words": _WORDS,
})
_SCANS = st.fixed_dictionaries({
    "page_count": st.integers(-1, 10), "pages": st.lists(_PAGES, max_size=3),
    "texts": st.lists(st.tuples(st.integers(0, 5), st.text(max_size=30)), max_size=4), "scanned": st.booleans(),
})
_SUMMARIES = st.one_of(
    st.builds(lambda d: {"schema": "sandloop.document/1", "status": "ok", "document": d},
              st.one_of(_SCANS, _JSON, st.fixed_dictionaries({"refusal": _JSON}))),
    st.builds(lambda t: {"schema": "sandloop.frame/1", "status": "error", "error_type": t}, _JSON),
)
SUMMARY_INPUTS = st.one_of(st.binary(max_size=512), _JSON.map(_dumps), _SUMMARIES.map(_dumps),
                           _bombs(), _mutated(_SUMMARIES.map(_dumps)))


def check_summary(raw: bytes) -> None:
    """decode_scan returns a scan or raises TargetError with one line, whatever the bytes."""
    from agents.bank_parser.statement_reader import decode_scan
    from agents.ports.config import AnalysisLimits
    from agents.ports.errors import TargetError
    from agents.ports.sandbox import CapturedStream, SandboxLimits, SandboxResult

    empty = CapturedStream(b"", 0)
    result = SandboxResult(0, empty, empty, False, False, 0.0, {"result.json": raw})

    def refusal_line() -> str:
        try:
            decode_scan(Path("s.pdf"), result, SandboxLimits(), AnalysisLimits(), ocr=False)
        except TargetError as exc:
            return str(exc)
        return ""

    line = _guard((), refusal_line)
    if "\n" in line:
        raise ContractBroken(f"a refusal spans lines: {line[:60]!r}")


# --- the holder's stdout: program output, markers, output frames ------------------------

_STDOUT_PIECES = [
    b"\x1esandloop-end 0\x1e", b"\x1esandloop-end 137\x1e", b"\x1esandloop-end 9999\x1e", b"\x1esandloop-ready\x1e",
    b"\x1esandloop-file result.json data 2\x1e{}", b"\x1esandloop-file result.json data 999999999999\x1e",
    b"\x1esandloop-file result.json big 5000\x1e", b"\x1esandloop-file result.json link\x1e",
    b"\x1esandloop-file extra.txt missing\x1e", b"\x1esandloop-file ../x data 1\x1ex", b"\x1esandloop-done\x1e",
    b"\x1esandloop-file result.json data\x1e", b"\x1e" * 300, b"\x1esandloop-file " + b"a" * 500, b"hello\n",
    b"\x00\xff" * 100,
]
HOLDER_INPUTS = st.tuples(
    st.one_of(
        st.binary(max_size=600),
        st.lists(st.one_of(st.sampled_from(_STDOUT_PIECES), st.binary(max_size=40)), max_size=30).map(b"".join),
    ),
    st.lists(st.integers(1, 64), min_size=1, max_size=8),  # chunk sizes, cycled
)
_HOLDER_NAMES = ("result.json", "extra.txt")
_HOLDER_CAP, _HOLDER_LIMIT = 1000, 256


def check_holder_stdout(case: tuple[bytes, list[int]]) -> None:
    """HolderStdout + OutputFrames: never raise, keep every bound, refuse with one-line reasons."""
    from controller.platform.sandbox.outputs import HEADER_MAX, OutputFrames
    from controller.platform.sandbox.session import HolderStdout, StreamCapture

    stream, sizes = case
    capture = StreamCapture(_HOLDER_LIMIT)
    stdout = HolderStdout(capture, OutputFrames(_HOLDER_NAMES, _HOLDER_CAP))
    at, turn = 0, 0
    while at < len(stream):
        size = sizes[turn % len(sizes)]
        _guard((), lambda chunk=stream[at:at + size]: stdout.feed(chunk))
        at, turn = at + size, turn + 1
    _guard((), stdout.flush)
    collected = _guard((), stdout.frames.result)
    if len(capture.buffers["stdout"]) > _HOLDER_LIMIT or len(stdout.frames._header) > HEADER_MAX:
        raise ContractBroken("a bound was exceeded")
    if set(collected.files) - set(_HOLDER_NAMES) or sum(map(len, collected.files.values())) > _HOLDER_CAP:
        raise ContractBroken(f"collected {sorted(collected.files)} past the names or the cap")
    if any("\n" in reason or "\x1e" in reason for reason in collected.refused.values()):
        raise ContractBroken("a refusal reason is not one clean line")


# --- blueprints and what their sandboxed code returns (seed 003) ------------------------

_BLUEPRINT = (PROJECT_ROOT / "data" / "market-scan" / "blueprint.json").read_bytes()
BLUEPRINT_INPUTS = st.one_of(
    st.binary(max_size=512), _JSON.map(_dumps), _bombs(), _mutated(st.just(_BLUEPRINT)),
)


def check_blueprint(raw: bytes) -> None:
    """parse_blueprint returns a Blueprint or raises ConfigError, whose line is one line."""
    from agents.blueprint.loading import parse_blueprint
    from agents.ports.errors import ConfigError

    try:
        _guard((), lambda: parse_blueprint(raw, Path("blueprint.json")))
    except ContractBroken as exc:
        if not isinstance(exc.__cause__, ConfigError):
            raise
        if "\n" in exc.__cause__.one_line():
            raise ContractBroken("a blueprint error is not one line") from exc


_RESULTS = st.one_of(
    _JSON.map(lambda value: _dumps({"ok": True, "value": value})),
    _JSON.map(lambda value: _dumps({"ok": True, "value": {"passed": value, "message": value, "fix": value}})),
    st.text(max_size=80).map(lambda text: _dumps({"ok": False, "error": text})),
)
CALL_RESULT_INPUTS = st.one_of(st.binary(max_size=512), _bombs(), _mutated(_RESULTS), _RESULTS)


class _OneResult:
    """A sandbox double answering every call with ``raw`` as result.json (no code runs)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def run(self, spec: Any) -> Any:
        from agents.ports.sandbox import CapturedStream, SandboxResult

        return SandboxResult(0, CapturedStream(b"", 0), CapturedStream(b"", 0), False, False, 0.1,
                             {"result.json": self.raw})


def check_call_result(raw: bytes) -> None:
    """A tool's or validator's result.json: never an exception; a failure is one line; a verdict or an issue."""
    from agents.blueprint.checks import validator_issue
    from agents.blueprint.model import ValidatorSpec
    from agents.blueprint.sandboxed import Call, call_spec, run_call

    spec = call_spec("img", Call("validator", "v", "def validate(r, d): ...", {}, "# R"), _LIMITS, {})
    result = _guard((), lambda: run_call(_OneResult(raw), spec))
    if "\n" in result.error:
        raise ContractBroken("a call's error is not one line")
    issue = _guard((), lambda: validator_issue(ValidatorSpec(name="v", code="x"), result.ok, result.value,
                                               result.error))
    if issue is not None and "\n" in issue["message"]:
        raise ContractBroken("a validator's issue is not one line")


# --- a scan's parser's stderr: claimed repairs and OCR cost (issue 24) ------------------

_STDERR_PIECES = [
    b"sandloop-repair ", b"sandloop-ocr ", b"\n", b'{"row": 3, "column": "Balance", "before": "1242914", '
    b'"after": "12429.14", "rule": "decimal point"}', b'{"row": 1e400}', b'{"row": -1}', b'{"row": true}',
    b'{"pages": 1, "page_reads": 1, "ocr_seconds": 1e308, "rereads": 0, "reread_seconds": NaN}',
    b'{"rule": "letters", "before": "\\u001b[2J", "after": "\\ud800"}', b"[" * 50, b"\x00\xff", b"x" * 700,
]
STDERR_INPUTS = st.one_of(
    st.binary(max_size=600),
    st.lists(st.one_of(st.sampled_from(_STDERR_PIECES), st.binary(max_size=40), _JSON.map(_dumps)),
             max_size=40).map(b"".join),
)


def check_parser_stderr(raw: bytes) -> None:
    """read_repairs and read_ocr_cost never raise; repairs are bounded, one-line, printable."""
    from agents.bank_parser.repairs import MAX_REPAIRS, OcrCost, read_ocr_cost, read_repairs

    repairs = _guard((), lambda: read_repairs(raw))
    if len(repairs) > MAX_REPAIRS:
        raise ContractBroken(f"{len(repairs)} repairs read")
    for repair in repairs:
        texts = (repair.column, repair.before, repair.after, repair.rule)
        if any(len(t) > 80 or not t.isprintable() for t in texts) or repair.row < 0:
            raise ContractBroken(f"a repair escaped its bounds: {repair!r:.120}")
        repair.describe()
    cost = _guard((), lambda: read_ocr_cost(raw))
    if cost is not None and not isinstance(cost, OcrCost):
        raise ContractBroken("the OCR cost is not an OcrCost")
    if cost is not None:
        cost.describe()


def _limits() -> Any:
    from agents.ports.sandbox import SandboxLimits

    return SandboxLimits()


_LIMITS = _limits()


DECODERS = (
    Decoder("frame_codec", FRAME_INPUTS, check_frame, lambda: check_frame(b"{}")),
    Decoder("holder_stdout", HOLDER_INPUTS, check_holder_stdout, lambda: check_holder_stdout((b"", [1]))),
    Decoder("idris_transcript", IDRIS_INPUTS, check_idris, lambda: check_idris("")),
    Decoder("llm_extract", REPLY_INPUTS, check_reply, lambda: check_reply("")),
    Decoder("target_toml", TOML_INPUTS, check_toml, lambda: check_toml("")),
    Decoder("intake_reply", INTAKE_INPUTS, check_intake_reply, lambda: check_intake_reply("")),
    Decoder("pdf_analysis", PDF_INPUTS, check_pdf, lambda: check_pdf(_sample_pdf()), slow_ok=True),
    Decoder("analysis_summary", SUMMARY_INPUTS, check_summary, lambda: check_summary(b"{}")),
    Decoder("blueprint_json", BLUEPRINT_INPUTS, check_blueprint, lambda: check_blueprint(_BLUEPRINT)),
    Decoder("blueprint_call_result", CALL_RESULT_INPUTS, check_call_result, lambda: check_call_result(b"{}")),
    Decoder("parser_stderr", STDERR_INPUTS, check_parser_stderr, lambda: check_parser_stderr(b"")),
)
