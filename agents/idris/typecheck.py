"""Check a module with ``idris2 --check`` in the idris2 sandbox, and classify the outcome.

The sandbox gets exactly one input, the module's source, and runs the image's entrypoint
``check-module <Module.Name> /work/in/<Name>.idr``, which stages the file where Idris2
expects it (``Domains/<Name>.idr`` under a scratch source directory) and runs
``idris2 --no-color --check Domains/<Name>.idr`` with stderr folded into stdout, so the
transcript keeps Idris2's own order. The network is off, as in every sandbox.

Outcomes: ``passed`` (exit 0 and no error block), ``errors`` (error blocks), ``timeout``,
``oom``, ``crashed`` (a non-zero exit without any error block). An entrypoint that
refuses its arguments (exit 125) or an image without a runnable idris2 (126/127) is the
environment's fault, not the module's: :class:`SandboxError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.idris.coder import CheckOutcome
from agents.idris.diagnostics import Diagnostic, Transcript, parse_transcript, summarize
from agents.ports.errors import SandboxError
from agents.ports.sandbox import (
    INPUT_DIR,
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
    naming_limits,
)
from agents.untrusted_text import one_line

IMAGE_NAME = "idris2"
ENTRYPOINT = "/opt/sandloop/check-module"
#: Exit statuses that mean the image, not the module, is broken.
ENTRYPOINT_REFUSED = 125
NOT_RUNNABLE = (126, 127)


@dataclass(frozen=True)
class CheckResult:
    """One check: the raw sandbox result, the transcript, its parse and a verdict."""

    sandbox: SandboxResult
    outcome: CheckOutcome
    transcript: str
    parsed: Transcript
    message: str

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The error diagnostics (what a fix works from)."""
        return self.parsed.errors


def module_file(module: str) -> str:
    """The input file name for ``Domains.X``: ``X.idr``."""
    return module.rsplit(".", 1)[-1] + ".idr"


def check_spec(image: str, module: str, source: str, limits: SandboxLimits, labels: dict[str, str]) -> SandboxSpec:
    """The sandbox spec checking ``source`` as ``module``: the module is the only input."""
    name = module_file(module)
    return SandboxSpec(
        image=image,
        command=(ENTRYPOINT, module, f"{INPUT_DIR}/{name}"),
        inputs={name: source.encode("utf-8")},
        limits=limits,
        labels=labels,
        env={"NO_COLOR": "1"},
    )


def run_check(sandbox: Sandbox, spec: SandboxSpec) -> CheckResult:
    """Run the check and classify it.

    Raises:
        SandboxError: the engine failed, or the image's entrypoint or idris2 could not run.
    """
    result = sandbox.run(spec)
    transcript = result.stdout.text + (("\n" + result.stderr.text) if result.stderr.data else "")
    check = _classify(result, spec, transcript)
    message = naming_limits(check.message, result, spec.limits, named={"timeout": "time", "oom": "memory"}.get(
        check.outcome))
    return CheckResult(check.sandbox, check.outcome, check.transcript, check.parsed, one_line(message, 500))


def _classify(result: SandboxResult, spec: SandboxSpec, transcript: str) -> CheckResult:
    try:
        parsed = parse_transcript(transcript)
    except Exception as exc:  # noqa: BLE001 - a reader bug on hostile text fails the check, not the run
        return CheckResult(result, "crashed", transcript, Transcript(transcript, (), ()),
                           f"the transcript could not be read ({type(exc).__name__})")
    if result.timed_out:
        return CheckResult(result, "timeout", transcript, parsed,
                           f"idris2 --check was killed at the {spec.limits.timeout_seconds:g} s timeout")
    if result.oom_killed:
        return CheckResult(result, "oom", transcript, parsed,
                           f"idris2 --check was killed at the {spec.limits.memory_mb} MiB memory limit")
    _refuse_broken_image(result, spec)
    if parsed.errors:
        count = len(parsed.errors)
        return CheckResult(result, "errors", transcript, parsed,
                           f"{count} error(s): {summarize(parsed.errors, limit=1).splitlines()[0]}")
    if result.exit_code == 0:
        return CheckResult(result, "passed", transcript, parsed, "idris2 --check: no errors")
    tail = " | ".join(transcript.strip().splitlines()[-3:]) or "no output"
    message = f"idris2 exited {result.exit_code} with no error block: {tail}"
    return CheckResult(result, "crashed", transcript, parsed, message)


def _refuse_broken_image(result: SandboxResult, spec: SandboxSpec) -> None:
    if result.exit_code == ENTRYPOINT_REFUSED:
        raise SandboxError("the idris2 image's entrypoint refused to run "
                           f"({one_line(result.stderr.text.strip(), 300)})",
                           hint=f"rebuild the image {spec.image}")
    if result.exit_code in NOT_RUNNABLE:
        raise SandboxError(f"idris2 could not be started in {spec.image} (exit {result.exit_code})",
                           hint="rebuild the idris2 image: make images")
