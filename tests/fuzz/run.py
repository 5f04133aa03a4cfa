"""``make fuzz``: feed every decoder of untrusted bytes generated inputs for a bounded time.

    python -m tests.fuzz.run [--seconds 60] [--seed N] [--only NAME] [--per-input 10]

Hypothesis generates the inputs (:mod:`tests.fuzz.decoders`); each decoder gets an equal
share of ``--seconds``. An input breaks the contract when the decoder raises anything but
its documented error, returns something it must not, or runs longer than ``--per-input``
seconds (six times that for PDFs: a malformed PDF may take seconds, and is the user's input).
Such inputs are counted, their first bytes printed and the whole input saved under
``.cache/fuzz/`` so that it can become a unit test. The last line is ``N passed, M failed``
(inputs); the exit status is 1 when any input failed.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import signal
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

from controller.platform.settings import PROJECT_ROOT
from tests.fuzz.decoders import DECODERS, ContractBroken, Decoder

FAILURES_DIR = PROJECT_ROOT / ".cache" / "fuzz"
BATCH = 50


class _Hung(BaseException):
    """Raised by the interval timer when one input runs past its time (a hang is a failure)."""


@dataclass
class Tally:
    """How one decoder fared."""

    name: str
    tried: int = 0
    failed: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)


def fuzz(decoder: Decoder, seconds: float, start_seed: int, per_input: float) -> Tally:
    """Run ``decoder`` on generated inputs until ``seconds`` have passed."""
    tally = Tally(decoder.name)
    decoder.warmup()  # imports and first-call costs are not the input's time
    per_input = per_input * 6 if decoder.slow_ok else per_input
    deadline = time.monotonic() + seconds
    started = time.monotonic()

    def body(value: Any) -> None:
        if time.monotonic() > deadline:
            return
        tally.tried += 1
        try:
            _with_timer(per_input, lambda: decoder.check(value))
        except (ContractBroken, _Hung) as exc:
            tally.failed += 1
            _keep(decoder.name, value, exc, tally)

    batch = 0
    while time.monotonic() < deadline:
        test = settings(max_examples=BATCH, database=None, deadline=None, phases=[Phase.generate],
                        suppress_health_check=list(HealthCheck))(given(decoder.inputs)(body))
        seed(start_seed + batch)(test)()
        batch += 1
    tally.seconds = time.monotonic() - started
    return tally


def _with_timer(limit: float, call: Any) -> None:
    def ring(signum: int, frame: Any) -> None:
        raise _Hung(f"no answer within {limit:g} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _keep(name: str, value: Any, exc: BaseException, tally: Tally) -> None:
    raw = value if isinstance(value, bytes) else str(value).encode("utf-8", errors="surrogatepass")
    digest = hashlib.sha256(raw).hexdigest()[:16]
    FAILURES_DIR.mkdir(parents=True, exist_ok=True)
    path = FAILURES_DIR / f"{name}-{digest}.bin"
    path.write_bytes(raw)
    if len(tally.examples) < 3:
        tally.examples.append(f"{type(exc).__name__}: {str(exc)[:160]} on {raw[:80]!r} ({len(raw)} bytes, {path})")


def main(argv: list[str] | None = None) -> int:
    """Fuzz every decoder (or ``--only`` one) and print the tallies; exit 1 if any input failed."""
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.run", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="total time, shared by the decoders (60)")
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000, help="first Hypothesis seed")
    parser.add_argument("--only", choices=[d.name for d in DECODERS], help="fuzz one decoder")
    parser.add_argument("--per-input", type=float, default=10.0, help="seconds one input may take (10)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # pandas' and pdfminer's complaints about the inputs are expected
    logging.disable(logging.CRITICAL)
    chosen = [d for d in DECODERS if args.only in (None, d.name)]
    share = args.seconds / len(chosen)
    print(f"==> fuzzing {len(chosen)} decoder(s), {share:.0f} s each, seed {args.seed}", flush=True)
    print(f"{'decoder':<18} {'inputs':>8} {'failed':>7} {'time':>8}", flush=True)
    tallies = []
    for decoder in chosen:
        tally = fuzz(decoder, share, args.seed, args.per_input)
        tallies.append(tally)
        print(f"{tally.name:<18} {tally.tried:>8} {tally.failed:>7} {tally.seconds:>6.1f} s", flush=True)
        for example in tally.examples:
            print(f"    {example}", flush=True)
    tried, failed = sum(t.tried for t in tallies), sum(t.failed for t in tallies)
    print(f"{tried - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
