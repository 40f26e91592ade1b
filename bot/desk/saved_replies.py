"""Saved replies' rules (issue 26): which names and `{variables}` a reply may have, the Korean and English
texts, and filling one for a conversation — the player's language picks the text, the conversation and
the staff member fill what they can, and whatever is still missing is refused with the exact line to
type. Storage: `bot.store.saved_replies`; the `/reply` and `/replies` commands: `bot.staff.replies`."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from bot.store import Store, conversation_views
from bot.store.saved_replies import MAX_NAME_CHARS, MAX_TEXT_CHARS, ReplyRecord
from bot.vocabulary.language import detect_language

VARIABLES: dict[str, str] = {
    "player": "플레이어 이름 / the player's name",
    "order": "주문 번호 / an order id",
    "coupon_code": "쿠폰 코드 / a coupon code",
    "amount": "금액 / an amount",
    "item": "상품 / an item",
    "date": "날짜 / a date",
    "staff": "상담원 이름 / the staff member's name",
}
"""Every variable a saved reply may hold; anything else is refused when the reply is saved."""

NAME = re.compile(rf"[0-9a-z가-힣_-]{{1,{MAX_NAME_CHARS}}}")
_VARIABLE = re.compile(r"\{([^{}]*)\}")


class ReplyError(ValueError):
    """A reply that cannot be saved or sent as asked; the message says why in Korean and English."""


@dataclass(frozen=True)
class ReplyTexts:
    """A reply's Korean and English texts (one may be empty)."""

    ko: str
    en: str


def check_name(raw: str) -> str:
    name = raw.strip().lower()
    if not NAME.fullmatch(name):
        raise ReplyError(
            f"이름은 {MAX_NAME_CHARS}자 이하의 영문 소문자·숫자·한글·_·- 만 쓸 수 있습니다 (받은 값 {raw!r}). "
            f"/ A name is up to {MAX_NAME_CHARS} lowercase letters, digits, Hangul, _ or - (got {raw!r})."
        )
    return name


def variables_of(template: str) -> list[str]:
    """The `{variables}` of `template` in order; an unknown one or a stray brace is refused."""
    found = _VARIABLE.findall(template)
    unknown = sorted({v for v in found if v not in VARIABLES})
    if unknown:
        known = ", ".join(f"{{{v}}}" for v in VARIABLES)
        shown = ", ".join(f"{{{v}}}" for v in unknown)
        raise ReplyError(
            f"알 수 없는 변수 {shown} — 쓸 수 있는 변수: {known}. / Unknown variable {shown}; known: {known}."
        )
    if "{" in _VARIABLE.sub("", template) or "}" in _VARIABLE.sub("", template):
        raise ReplyError("짝이 맞지 않는 중괄호가 있습니다. / A brace { or } is not closed.")
    return list(dict.fromkeys(found))


def parse_texts(text: str) -> ReplyTexts:
    """`한국어 || English`, or one text whose script says its language; variables checked."""
    first, sep, second = (part.strip() for part in text.partition("||"))
    if sep:
        texts = ReplyTexts(ko=first, en=second)
    else:
        texts = ReplyTexts(ko=first, en="") if detect_language(first) == "ko" else ReplyTexts("", first)
    return check_texts(texts)


def check_texts(texts: ReplyTexts) -> ReplyTexts:
    ko, en = texts.ko.strip(), texts.en.strip()
    if not ko and not en:
        raise ReplyError("답변 내용이 비어 있습니다. / The reply has no text.")
    for part in (ko, en):
        if len(part) > MAX_TEXT_CHARS:
            raise ReplyError(
                f"답변은 {MAX_TEXT_CHARS:,}자까지입니다. / A reply is at most {MAX_TEXT_CHARS:,} characters."
            )
        variables_of(part)
    return ReplyTexts(ko, en)


def parse_values(raw: str | None) -> dict[str, str]:
    """`order=ORD001 coupon_code="AB 12"` → values; keys must be known variables."""
    values: dict[str, str] = {}
    try:
        words = shlex.split(raw or "")
    except ValueError as exc:
        raise ReplyError(f"값을 읽을 수 없습니다 / cannot read the values: {exc}") from exc
    for word in words:
        key, sep, value = word.partition("=")
        key = key.strip().strip("{}")
        if not sep or key not in VARIABLES or not value.strip():
            raise ReplyError(
                f"값은 이름=값 으로 적어 주세요, 예: order=ORD123 (받은 값 {word!r}). "
                f"/ Give values as name=value, e.g. order=ORD123 (got {word!r})."
            )
        values[key] = value.strip()
    return values


def pick_text(reply: ReplyRecord, locale: str) -> str:
    """The text in the player's language, else the one the reply has."""
    if locale == "ko":
        return reply.text_ko or reply.text_en
    return reply.text_en or reply.text_ko


def fill(reply: ReplyRecord, locale: str, values: dict[str, str]) -> str:
    """The reply in `locale` with its variables filled; a missing value is refused with the line to type."""
    template = pick_text(reply, locale)
    missing = [v for v in variables_of(template) if not values.get(v)]
    if missing:
        example = " ".join(f"{v}=…" for v in missing)
        shown = ", ".join(f"{{{v}}}" for v in missing)
        raise ReplyError(
            f"'{reply.name}'에 {shown} 값이 필요합니다: /reply {reply.name} {example} "
            f"/ '{reply.name}' needs {shown}: /reply {reply.name} {example}"
        )
    return _VARIABLE.sub(lambda m: values[m.group(1)], template)


async def conversation_facts(store: Store, thread_id: str) -> tuple[str, dict[str, str]]:
    """The player's language (their latest message) and the values the conversation knows (`player`)."""
    found = await conversation_views.thread_player(store, thread_id)
    known = {"player": found.name} if found.name else {}
    return detect_language(found.last_words) if found.last_words else "ko", known
