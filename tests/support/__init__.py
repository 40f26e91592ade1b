"""Plain helper modules the tests share: no fixtures here (those live in conftest.py files), nothing collected."""
