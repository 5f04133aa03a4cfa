"""The console's routes, one module per page (or group of forms)."""

from __future__ import annotations

from fastapi import APIRouter

from controller.entry.console.routes import (
    attempt,
    blueprints,
    check,
    compare,
    live,
    run,
    runs,
    sign_in,
    subjects,
    submit,
    targets,
)

ROUTERS: tuple[APIRouter, ...] = (sign_in.router, runs.router, run.router, attempt.router, live.router, submit.router,
                                  blueprints.router, check.router, targets.router, compare.router, subjects.router)
