#!/usr/bin/env bash
# make k8s-smoke: deploy sandloop to the cluster of the current kubectl context, run the ICICI
# Job, check that it passed, then delete everything it created. Needs kubectl and a cluster
# (kind, k3s, a cloud cluster) that can pull the images: `make k8s-images REGISTRY=...` first,
# or `kind load docker-image` them with REGISTRY empty. Without kubectl or a reachable cluster
# it says so and exits 77 (skipped): a smoke test that did not run is never a pass.
set -euo pipefail
REGISTRY="${1:-}"
PY="${PY:-.venv/bin/python}"
if ! command -v kubectl >/dev/null 2>&1; then
  echo "k8s-smoke SKIPPED: kubectl is not installed (this is not a pass)" >&2; exit 77
fi
if ! kubectl version --request-timeout=5s >/dev/null 2>&1; then
  echo "k8s-smoke SKIPPED: no cluster answers for context '$(kubectl config current-context 2>/dev/null || echo none)' (this is not a pass)" >&2
  exit 77
fi
manifests=$(mktemp)
cleanup() {
  kubectl delete -f "$manifests" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  rm -f "$manifests"
}
trap cleanup EXIT
"$PY" -m controller k8s render --part deploy ${REGISTRY:+--registry "$REGISTRY"} > "$manifests"
# Only the ICICI Job: the Indexed Job is for real target lists, and the service's Deployment
# needs a database, its Secret and a token (and would take 2 CPUs of a small kind node).
"$PY" - "$manifests" <<'PYEOF'
import sys, yaml
path = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(path))
        if d and d["metadata"]["name"] != "sandloop-run-targets" and d["kind"] not in ("Deployment", "PodDisruptionBudget")]
for doc in docs:  # a smoke cluster is one node (kind, k3s), often without a ReadWriteMany class
    if doc["kind"] == "PersistentVolumeClaim":
        doc["spec"]["accessModes"] = ["ReadWriteOnce"]
open(path, "w").write(yaml.safe_dump_all(docs, sort_keys=False))
PYEOF
kubectl apply -f "$manifests"
echo "==> waiting for job/sandloop-run-icici (up to 15 min)"
if kubectl -n sandloop wait --for=condition=complete --timeout=900s job/sandloop-run-icici; then
  kubectl -n sandloop logs job/sandloop-run-icici --tail=20
  left=$(kubectl -n sandloop-sandboxes get pods,configmaps -l org.sandloop.managed=1 -o name | wc -l)
  if [ "$left" -ne 0 ]; then echo "k8s-smoke FAILED: $left sandbox object(s) left behind" >&2; exit 1; fi
  echo "k8s-smoke PASSED: the ICICI Job completed and no sandbox Pod or ConfigMap is left"
else
  kubectl -n sandloop logs job/sandloop-run-icici --tail=50 || true
  kubectl -n sandloop-sandboxes get pods -o wide || true
  echo "k8s-smoke FAILED: job/sandloop-run-icici did not complete" >&2; exit 1
fi
