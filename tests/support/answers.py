"""Long answers for the streaming tests: one sentence stating the fact, then plain sentences, each said
once. An answer that says its fact sentence again loses the repeat to the fact check (a model's stutter),
so a long answer built by repeating a sentence would not reach the player whole."""

from __future__ import annotations

PLAIN_KO = (
    "기다리게 해 드려 죄송합니다.",
    "진행 상황은 이 대화에서 다시 알려 드릴게요.",
    "앱의 주문 내역에서도 같은 내용을 보실 수 있어요.",
    "더 궁금한 점이 있으면 편하게 말씀해 주세요.",
    "다른 주문도 같은 방법으로 확인해 드릴 수 있어요.",
    "답변이 도움이 되었으면 좋겠습니다.",
    "필요하시면 운영진 연결도 도와 드릴게요.",
    "언제든 다시 문의해 주세요.",
    "확인해 주셔서 감사합니다.",
    "즐거운 모험 되세요.",
)


def long_answer(fact: str, sentences: int) -> str:
    """`fact`, then plain sentences up to `sentences` in all, separated by spaces, each said once."""
    if not 1 <= sentences <= len(PLAIN_KO) + 1:
        raise ValueError(f"1 to {len(PLAIN_KO) + 1} sentences, not {sentences}")
    return " ".join((fact, *PLAIN_KO[: sentences - 1]))
