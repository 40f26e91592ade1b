"""Fakes at the network edge (loopback only): an OpenAI-compatible server."""
