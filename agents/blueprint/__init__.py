"""The blueprint agent (seed 003): a blueprint → a workflow of manager, researcher, writer and QA."""
