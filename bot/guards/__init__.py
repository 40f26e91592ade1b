"""Input and output guards: message hygiene and injection flags in, claim check, redaction and mentions out."""

from bot.guards.input import InputVerdict, check_input, neutralize_mentions, scan_untrusted
from bot.guards.output import (
    ClaimVerdict,
    OutputGuard,
    OutputVerdict,
    StreamingOutputGuard,
    check_claims,
    redact_pii,
    truthful_sentence,
)

__all__ = [
    "ClaimVerdict",
    "InputVerdict",
    "OutputGuard",
    "OutputVerdict",
    "StreamingOutputGuard",
    "check_claims",
    "check_input",
    "neutralize_mentions",
    "redact_pii",
    "scan_untrusted",
    "truthful_sentence",
]
