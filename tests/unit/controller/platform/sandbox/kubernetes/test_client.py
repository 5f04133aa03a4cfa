"""Without a reachable cluster, SBX_SANDBOX_BACKEND=kubernetes ends in one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.platform.sandbox.kubernetes.client import ClusterUnavailable, connect
from controller.platform.sandbox.kubernetes.config import KubernetesSettings
from controller.platform.settings import PROJECT_ROOT

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def _run_icici(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SBX_", "KUBE"))}
    clean.update({"HOME": str(tmp_path), "SBX_SANDBOX_BACKEND": "kubernetes", "SBX_RUNS_DIR": str(tmp_path / "runs"),
                  "SBX_PARSERS_DIR": str(tmp_path / "parsers"), "PYTHONPATH": str(PROJECT_ROOT), **env})
    return subprocess.run([sys.executable, "-m", "controller", "run", "--target", "icici"], cwd=PROJECT_ROOT,
                          env=clean, capture_output=True, text=True, timeout=120, check=False)


class TestNoCluster:
    def test_no_kubeconfig_at_all_is_one_line_and_exit_2(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
        """No in-cluster config, no ~/.kube/config: one error line naming the way out, exit 2, nothing written."""
        from controller.entry.cli import main

        for key in [k for k in os.environ if k.startswith(("SBX_", "KUBE"))]:
            monkeypatch.delenv(key)
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.setenv("SBX_SANDBOX_BACKEND", "kubernetes")
        monkeypatch.setenv("SBX_RUNS_DIR", str(tmp_path / "runs"))
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("SBX_DATA_DIR", str(PROJECT_ROOT / "data"))
        assert main(["run", "--target", "icici"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: no Kubernetes cluster configured")
        assert not (tmp_path / "runs").exists()

    def test_a_cluster_that_does_not_answer_is_one_line_and_exit_2(self, tmp_path: Path) -> None:
        """End to end, as `make run TARGET=icici` runs it: a kubeconfig pointing at a closed port
        gives one line naming the server, exit 2."""
        (tmp_path / "kubeconfig").write_text(KUBECONFIG)
        done = _run_icici(tmp_path, SBX_KUBERNETES__KUBECONFIG=str(tmp_path / "kubeconfig"),
                          SBX_KUBERNETES__CONFIG="kubeconfig")
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "no Kubernetes API server answers at http://127.0.0.1:9" in done.stderr

    def test_connect_raises_the_typed_error(self, tmp_path: Path) -> None:
        """ClusterUnavailable is an EngineUnavailable (exit 2), not a raw client exception."""
        (tmp_path / "kubeconfig").write_text(KUBECONFIG)
        with pytest.raises(ClusterUnavailable) as raised:
            connect(KubernetesSettings(config="kubeconfig", kubeconfig=tmp_path / "kubeconfig",
                                       request_timeout_seconds=2))
        assert raised.value.exit_code == 2


class TestRenderCommand:
    def test_k8s_render_prints_yaml_and_exits_0(self) -> None:
        """`python -m controller k8s render --part sandbox` prints the ConfigMap and the Pod."""
        from controller.entry.cli import main

        assert main(["k8s", "render", "--part", "sandbox", "--registry", "r.example/t"]) == 0
