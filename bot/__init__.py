"""Arca Support Bot: Discord customer-support and game-ops bot for Arca Online."""

__version__ = "0.1.0"
