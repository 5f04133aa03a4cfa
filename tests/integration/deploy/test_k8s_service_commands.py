"""The Kubernetes service's commands and settings, run on this host against a real PostgreSQL
(no API server exists here): the environment the rendered Pods get from the two ConfigMaps and
the DSN Secret, the Deployment's exact command, and the token Job's.

What it shows: the Deployment alone refuses to listen (no token yet: exit 2, one line); the
token Job's command stores a token in PostgreSQL; then the Deployment's command serves on its
port, its startup/liveness and readiness probe paths answer 200 (store ok; on the Kubernetes
backend neither the engine nor the images are asked here), the API wants the token, and
SIGTERM ends it, exit 0, within the Pod's terminationGracePeriodSeconds. What it cannot show:
anything the kubelet, the API server or a CNI would do."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from controller.entry.k8s_render import deploy_objects, token_objects
from controller.platform.settings import PROJECT_ROOT, Settings
from tests.integration.service.harness import free_port, wait_for

#: (variable, Secret) → key of every required secret the service's Pod reads.
SECRETS = {("SBX_SERVICE__POSTGRES_DSN", "sandloop-postgres"): "dsn",
           ("SBX_STATE_DSN", "sandloop-postgres"): "state-dsn"}


def _object(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def _pod_env(objects: list[dict[str, Any]], container: dict[str, Any], dsn: str, tmp: Path) -> dict[str, str]:
    """The container's environment as the kubelet would build it (envFrom, then env), the Secret's
    DSNs filled in; the in-image paths moved under ``tmp`` (this host has no /sandloop)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SBX_")}
    for source in container["envFrom"]:
        env.update(_object(objects, "ConfigMap", source["configMapRef"]["name"])["data"])
    for item in container["env"]:
        ref = item["valueFrom"]
        if "secretKeyRef" in ref and not ref["secretKeyRef"].get("optional"):
            assert (item["name"], ref["secretKeyRef"]["name"]) in SECRETS, item
            assert ref["secretKeyRef"]["key"] == SECRETS[(item["name"], ref["secretKeyRef"]["name"])]
            env[item["name"]] = dsn  # here one role for both; docs/kubernetes.md makes the checkpoints' a narrower one
        elif "fieldRef" in ref:
            env[item["name"]] = "sandloop-service-7d9f8-abcde"
    env.update(SBX_RUNS_DIR=str(tmp / "runs"), SBX_PARSERS_DIR=str(tmp / "parsers"), SBX_CACHE_DIR=str(tmp / "cache"),
               SBX_DATA_DIR=str(PROJECT_ROOT / "data"), HOME=str(tmp))
    return env


def _command(container: dict[str, Any], port: int) -> list[str]:
    """The container's command with this interpreter for python3 and a free port for the fixed one."""
    command = [sys.executable if part == "python3" else part for part in container["command"]]
    if "--port" in command:
        command[command.index("--port") + 1] = str(port)
    return command


def test_the_deployment_and_token_job_commands_against_postgres(tmp_path: Path, postgres_dsn: str) -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    objects = deploy_objects(settings)
    pod = _object(objects, "Deployment", "sandloop-service")["spec"]["template"]["spec"]
    (service,) = pod["containers"]
    env = _pod_env(objects, service, postgres_dsn, tmp_path)
    assert env["SBX_SERVICE__STORE"] == "postgres" and env["SBX_SANDBOX_BACKEND"] == "kubernetes"
    port = free_port()

    refused = subprocess.run(_command(service, port), env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=120, check=False)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("error: refusing to listen on 0.0.0.0 without a token")

    (job,) = token_objects(settings)
    (tokens,) = job["spec"]["template"]["spec"]["containers"]
    made = subprocess.run(_command(tokens, port), env=_pod_env(objects, tokens, postgres_dsn, tmp_path),
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    token, note = made.stdout.splitlines()
    assert token.startswith("sbx_") and "added to the PostgreSQL store" in note

    log = (tmp_path / "service.log").open("w")
    proc = subprocess.Popen(_command(service, port), env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: proc.poll() is not None or _status(url + service["startupProbe"]["httpGet"]["path"]) == 200,
                 "the service's startup probe", 120)
        assert proc.poll() is None, (tmp_path / "service.log").read_text()[-2000:]
        ready = httpx.get(url + service["readinessProbe"]["httpGet"]["path"], timeout=10)
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {"store": "ok", "engine": "ok", "images": "ok", "accepting": "ok"}
        assert _status(url + service["livenessProbe"]["httpGet"]["path"]) == 200
        assert httpx.get(f"{url}/v1/runs", timeout=10).status_code == 401
        assert httpx.get(f"{url}/v1/runs", headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code == 200
    finally:
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=pod["terminationGracePeriodSeconds"])
    assert code == 0 and time.monotonic() - started < pod["terminationGracePeriodSeconds"]


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.TransportError:
        return 0
