"""Ports: what an agent needs from the platform, stated here, implemented by the controller.

An agent imports nothing from ``controller/``. It is handed objects that satisfy these
small interfaces (an :class:`~agents.ports.sandbox.Sandbox` that runs one execution, an
artefact store, an event sink, a provider of declared environments, its typed config) and
returns plain values (:class:`~agents.ports.outcome.RunSummary`). The exception tree
(:mod:`agents.ports.errors`) lives here too, because agents raise it and the controller
maps it to exit codes and problem details. Nothing in this package does I/O on its own
except :func:`~agents.ports.artefacts.write_atomic`.
"""
