"""The intake agent (seed 002): stateless roles over a persistent graph memory."""
