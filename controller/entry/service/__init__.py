"""sandloop as a service (issue 21): ``python -m controller serve``.

An entry point like the CLI: FastAPI routes over the run store (``controller.platform.store``)
and a pool of workers that run each accepted run as its own ``python -m controller run``
child process, exactly as ``run --all`` does. The platform never imports this package.
"""
