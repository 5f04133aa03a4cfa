"""The Kubernetes sandbox backend: one Pod per execution in a sandbox namespace (docs/kubernetes.md).

Modules: ``config`` (the ``SBX_KUBERNETES__*`` settings), ``podspec`` (the Pod and its input
ConfigMap, pure), ``frame`` (the collector's log frame, decoded as untrusted bytes),
``status`` (a Pod's status to an outcome, pure), ``backend`` (the API conversation),
``reaper`` (leftovers by label), ``client`` (connect and check access), ``services`` (what
one CLI invocation uses).
"""
