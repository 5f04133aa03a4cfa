"""The Idris2 domain-model agent (seed 004): document → Domains.<Project> → idris2 --check → fix.

See docs/idris.md.
"""
