"""The guards as one pipeline's parts: each rule's name, what it protects, and its origin — a core rule,
or a quirk of a model family (small models' habits) that can be switched per model.

Declared at the bottom layer so the engine's call checks (`bot.engine.call_checks`) and the output
guard's sentence rules (`bot.guards.pipeline`) describe themselves the same way, and `arca-bot guards`
lists both. A quirk's mode comes from the model's `quirks` (`[models.NAME]` in arca.toml) or
`ARCA_QUIRKS`: `enforce` (default), `observe` (log what it would have done, do nothing) or `off`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

ENFORCE, OBSERVE, OFF = "enforce", "observe", "off"
QUIRK_MODES = (ENFORCE, OBSERVE, OFF)
CORE = "core"

QUIRKS: dict[str, str] = {
    "repairs": "a call's unambiguous mistakes mended (a 'functions.' prefix, arguments as a JSON string)",
    "example_values": "a tool description's example id or a placeholder ('ORD…') not used as a value",
    "unasked": "no coupon for a player who asked about a rule, not for compensation",
    "withdrawals": "no side effect after the player took the request back mid-run",
    "voice": "talk about 'the player' said to them; tool and argument names in the player's words",
    "model_notes": "text written for the model (tool notes, engine notes, the model's asides) never delivered",
    "echo": "the player's own words, or a fact's sentence said again, not delivered as the answer",
}
"""Each switchable quirk and what its rules do. Seen with small models (Qwen2.5-Coder-1.5B class, live
sittings 2026-12-02..04); a strong model rarely trips them, and a studio may turn them off for it."""
QUIRK_FAMILY = "small models (Qwen2.5 1.5B class)"


@dataclass(frozen=True)
class GuardRule:
    """One named check of the pipeline."""

    name: str
    """Dotted, by stage: `call.example_value`, `claim.run_or_ledger`, `fact.unbacked`, `voice.second_person`."""
    stage: str
    """`call` (before a tool runs, in the engine) or `sentence` (each answer sentence, in the output guard)."""
    protects: str
    """What goes wrong without it, in one line."""
    quirk: str | None = None
    """The quirk it belongs to (a key of `QUIRKS`), or None for a core rule, which is always on."""

    @property
    def origin(self) -> str:
        return CORE if self.quirk is None else f"quirk of {QUIRK_FAMILY} ({self.quirk})"


@dataclass(frozen=True)
class Quirks:
    """The mode of each quirk for one model (`enforce` unless set)."""

    modes: Mapping[str, str] = field(default_factory=dict)
    default: str = ENFORCE

    def mode(self, quirk: str | None) -> str:
        """A core rule (None) is always enforced."""
        if quirk is None:
            return ENFORCE
        return self.modes.get(quirk, self.default)

    def acts(self, quirk: str | None, what: str) -> bool:
        """Whether a quirk's rule may act; observing, log what it would have done instead."""
        mode = self.mode(quirk)
        if mode == OBSERVE:
            log.info("quirk %s observing: would have %s", quirk, what)
        return mode == ENFORCE

    @classmethod
    def parse(cls, spec: str | Mapping[str, str] | None) -> Quirks:
        """`"observe"` (every quirk), `"voice=off,example_values=observe"`, or a mapping (`all` sets the
        default). Unknown names or modes raise ValueError with the valid ones."""
        if not spec:
            return cls()
        if isinstance(spec, str):
            items: dict[str, str] = {}
            for part in (p.strip() for p in spec.split(",") if p.strip()):
                name, _, mode = part.partition("=")
                items.update({"all": name.strip()} if not mode else {name.strip(): mode.strip()})
            spec = items
        modes = {str(k).strip().lower(): str(v).strip().lower() for k, v in spec.items()}
        for name, mode in modes.items():
            if name != "all" and name not in QUIRKS:
                raise ValueError(f"unknown quirk {name!r}; known: all, {', '.join(QUIRKS)}")
            if mode not in QUIRK_MODES:
                raise ValueError(f"quirk {name!r}: mode {mode!r} is not one of {', '.join(QUIRK_MODES)}")
        default = modes.pop("all", ENFORCE)
        return cls(modes, default)

    def merged(self, other: Quirks) -> Quirks:
        """`other` on top of these (the env var over the model's table)."""
        if not other.modes and other.default == ENFORCE:
            return self
        return Quirks(
            {**self.modes, **other.modes}, other.default if other.default != ENFORCE else self.default
        )


RULE_WORDS: dict[str, tuple[str, str]] = {
    "call.repairs": ("도구 호출 형식 교정", "Tool call mended"),
    "call.example_value": ("예시 값으로 호출 차단", "Example value refused"),
    "call.unasked": ("요청 없는 쿠폰 발급 차단", "Unasked coupon refused"),
    "call.unread_message": ("새 메시지 확인 전 실행 보류", "Waited for the new message"),
    "call.withdrawal": ("취소된 요청 실행 차단", "Withdrawn request refused"),
    "call.repetition": ("같은 실패 호출 반복 차단", "Repeated failing call stopped"),
    "call.tool_rules": ("도구 자체 규칙", "The tool's own rules"),
    "claim.daily_count": ("하루 발급 횟수 주장 확인", "Daily coupon count claim"),
    "claim.run_or_ledger": ("쿠폰 발급 주장 확인", "Coupon issued claim"),
    "mailbox_arrival": ("우편함 도착 주장 확인", "Mailbox arrival claim"),
    "voice.label": ("답변 앞 꼬리표 제거", "Label before the answer"),
    "voice.second_person": ("'플레이어'를 3인칭으로 지칭", "Player spoken of, not to"),
    "voice.tool_names": ("도구 이름 노출", "Tool name in the answer"),
    "fact.model_note": ("모델용 메모 노출", "Note meant for the model"),
    "fact.engine_note": ("엔진 메모 노출", "Engine note to the model"),
    "fact.echo": ("플레이어 말 되풀이", "Player's words repeated"),
    "fact.repeated": ("같은 문장 반복", "Sentence said twice"),
    "fact.weekday": ("날짜와 맞지 않는 요일", "Weekday not the date's"),
    "fact.status": ("조회와 다른 주문 상태", "Order status not backed"),
    "fact.item": ("다른 주문의 상품", "Another order's item"),
    "fact.order": ("언급된 적 없는 주문 번호", "Order id never named"),
    "fact.paraphrased_passage": ("정책의 다른 문장에서 가져온 숫자", "Number from the wrong policy sentence"),
    "fact.about_else": ("다른 항목에 대한 숫자", "Number about something else"),
    "fact.player_rule": ("플레이어가 말한 틀린 숫자", "Player's wrong number confirmed"),
    "fact.passage": ("정책과 다른 숫자", "Number the policy contradicts"),
    "fact.notice": ("장애 공지와 다른 시간·날짜", "Time or date the incident notice contradicts"),
    "fact.coupon_rules": ("쿠폰 규칙과 다른 금액·한도", "Amount the coupon rules contradict"),
    "fact.lookup": ("조회한 주문과 다른 금액·날짜", "Amount or date the order contradicts"),
    "fact.unbacked": ("근거 없는 금액·날짜·숫자", "Unbacked amount, date or number"),
    "output.prompt_leak": ("내부 지침 노출", "System prompt leak"),
    "output.pii": ("다른 사람의 개인정보", "Another person's personal data"),
    "output.mentions": ("전체 멘션", "Mass mention"),
}
"""Each rule's name as staff read it (Korean, English), beside its key (`fact.unbacked`), which stays
behind a tooltip: kept in one table so the names read as one vocabulary; a test holds it to every rule
`arca-bot guards` lists (and `mailbox_arrival`, the claim check's rule for "it is in your mailbox")."""

GUARD_ACTIONS: dict[str, tuple[str, str]] = {
    "guard.fact_withheld": ("사실 확인: 문장 교체", "Fact check: sentence withheld"),
    "guard.fact_unbacked": ("사실 확인: 근거 없음(관찰)", "Fact check: unbacked (observed)"),
    "guard.claim_replaced": ("주장 확인: 문장 교체", "Claim check: sentence replaced"),
}
"""The guards' audit actions as staff read them (the key stays behind a tooltip)."""


def rule_words(rule: str | None, lang: str) -> str:
    """The rule's name in the staff member's language; an unknown key is shown as it is."""
    if not rule:
        return ""
    words = RULE_WORDS.get(rule)
    if words is None:
        return rule
    return words[0] if lang == "ko" else words[1]


def action_words(action: str, lang: str) -> str:
    """A guard's audit action in the staff member's language; any other action as it is."""
    words = GUARD_ACTIONS.get(action)
    if words is None:
        return action
    return words[0] if lang == "ko" else words[1]


def rule_of(detail: str | None) -> str | None:
    """The rule an audit row's JSON detail names (the guards write `{"rule": …}`), if any."""
    if not detail or '"rule"' not in detail:
        return None
    try:
        rule = json.loads(detail).get("rule")
    except (ValueError, AttributeError):
        return None
    return rule if isinstance(rule, str) else None
