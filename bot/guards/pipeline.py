"""The output guard's half of the guard pipeline: every rule an answer sentence passes, in order, each
named with what it protects and its origin (`bot.guard_rules.GuardRule`). The claim check's rules come
from `bot.guards.claim_check.CLAIM_RULES` (one more rule there is listed here by itself); the fact check's
rule names are the `rule` of each decision it records (`bot.guards.fact_check.Finding`)."""

from __future__ import annotations

from bot.guard_rules import GuardRule
from bot.guards.claim_check import CLAIM_RULES


def _sentence(name: str, protects: str, quirk: str | None = None) -> GuardRule:
    return GuardRule(name, "sentence", protects, quirk)


VOICE_RULES = (
    _sentence("voice.label", "a label before the answer ('답변:', 'Answer:') reaches the player", "voice"),
    _sentence("voice.second_person", "the player is spoken of as 'the player' instead of to", "voice"),
    _sentence(
        "voice.tool_names",
        "a tool's or argument's name (escalate_to_staff, order_id) reaches the player",
        "voice",
    ),
)
FACT_RULES = (
    _sentence(
        "fact.model_note",
        "a note written for the model (a tool's, the engine's, the model's own aside)",
        "model_notes",
    ),
    _sentence(
        "fact.engine_note",
        "the engine's own note to the model, read from the run's tagged notes",
        "model_notes",
    ),
    _sentence("fact.echo", "the player's own message repeated as the answer", "echo"),
    _sentence("fact.repeated", "a fact's sentence said twice in one answer", "echo"),
    _sentence("fact.weekday", "a weekday name that is not its date's"),
    _sentence("fact.status", "an order status the lookup contradicts, or one nothing backs"),
    _sentence("fact.item", "an order given another order's item, or one the model made up"),
    _sentence("fact.order", "an order id no message or result named"),
    _sentence("fact.paraphrased_passage", "a number taken from the wrong sentence of the policy result"),
    _sentence(
        "fact.about_else",
        "a number only sentences about something else state (a coupon's 30 days as a refund window)",
    ),
    _sentence(
        "fact.player_rule", "a rule the player asked to have confirmed, with the player's wrong number"
    ),
    _sentence("fact.passage", "a number the policy passage about the same thing contradicts"),
    _sentence("fact.notice", "a time, date or duration an open incident's notice contradicts"),
    _sentence("fact.coupon_rules", "a coupon cap or amount the coupon rules contradict"),
    _sentence("fact.lookup", "an amount or date the looked-up order contradicts"),
    _sentence("fact.unbacked", "an amount, count, duration, date or id nothing in the conversation backs"),
)
"""The fact check's rules in the order it applies them (a date or duration computed from a window the
evidence states is backed: `bot.guards.dates`)."""
OUTPUT_RULES = (
    _sentence("output.prompt_leak", "a verbatim run of the system prompt"),
    _sentence("output.pii", "another person's phone, e-mail, card or resident number"),
    _sentence("output.mentions", "@everyone / @here and role mentions"),
)

SENTENCE_RULES: tuple[GuardRule, ...] = (
    *(_sentence(r.name, r.protects) for r in CLAIM_RULES),
    *VOICE_RULES,
    *FACT_RULES,
    *OUTPUT_RULES,
)
"""Every sentence rule in the order an answer sentence meets them (`arca-bot guards`)."""
