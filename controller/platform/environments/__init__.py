"""Declared runtime environments: a submission's or target's packages, resolved, built, cached.

``declared`` reads what a folder asks for (requirements.txt, pyproject.toml); ``resolution``
pins it with uv, optionally as of a date; ``wheels`` downloads the pinned wheels on the host;
``image`` builds an environment image on top of the python-parser image, tagged by the hash
of the resolved set; ``provision`` ties these together with a cache; ``judge`` compares a
result under the environment's own pandas in a second, separate sandbox execution.
See docs/environments.md.
"""
