"""The bot speaks to the player, not about them (issue 28): third-person talk about the player in an
English answer is said to them instead, or dropped when it cannot be; the model's comments on its own
wording never reach the player."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from bot.guards.output import FactContext, OutputGuard
from bot.guards.voice import to_the_player, tool_names_said, without_own_label
from bot.vocabulary.model_notes import is_model_note
from tools.base import Actor, ToolContext, ToolResult, tool
from tools.ops_readonly import coupon_totals, order_stats
from tools.registry import build_registry

LUNA = Actor(discord_id="9001", player_id="P100")

SEEN_LIVE = (
    "The order is currently in delivery delayed status, with no coupon issued yet. The player can ask for a "
    'refund from the staff to get compensation.\n\nNote: In this context, "refund" is used as a polite form '
    'of "refund", which refers to receiving money or compensation for something that was previously owed or '
    "denied."
)


@pytest.mark.parametrize(
    ("about", "to"),
    [
        ("The player can ask for a refund from the staff.", "You can ask for a refund from the staff."),
        ("The player's order ORD101 is delayed.", "Your order ORD101 is delayed."),
        ("The user is eligible for a coupon.", "You are eligible for a coupon."),
        ("The customer has 3 coupons left today.", "You have 3 coupons left today."),
        ("A coupon was issued to the player.", "A coupon was issued to you."),
        ("If the player needs help, staff can help the player.", "If you need help, staff can help you."),
        (  # seen live 2026-12-02: the bot narrating its own reply
            "The assistant replied directly to you, stating that the most reward boxes you can get after "
            "maintenance is 3.",
            "The most reward boxes you can get after maintenance is 3.",
        ),
        ("The assistant said that the player's order is delayed.", "Your order is delayed."),
        ("The bot has confirmed: your coupon was issued.", "Your coupon was issued."),
        (  # seen live 2026-12-02
            "The player received a 5,000 KRW coupon for the order ORD301.",
            "You received a 5,000 KRW coupon for the order ORD301.",
        ),
    ],
)
def test_third_person_talk_is_said_to_the_player(about: str, to: str) -> None:
    assert to_the_player(about) == to


def test_what_is_not_about_the_player_is_left_alone() -> None:
    for sentence in (
        "The assistant will connect you with staff.",  # no narration of a reply: left as written
        "The assistant replied that.",
        "You can ask for a refund within 7 days.",
        "Please contact the customer service team.",
        "Each player can receive up to 3 coupons a day.",
        "플레이어 1명이 하루에 받을 수 있는 보상 쿠폰은 최대 3장입니다.",
    ):
        assert to_the_player(sentence) is None, sentence


def test_talk_about_the_player_that_cannot_be_rewritten_whole_is_left_as_written() -> None:
    assert to_the_player("Staff will review what the player wrote.") == "Staff will review what you wrote."
    assert to_the_player("Staff will review the player soon.") is None
    assert to_the_player("You are the customer-support assistant of Arca Online.") is None


def test_the_models_comment_on_its_own_wording_is_a_note_to_the_model() -> None:
    assert is_model_note('Note: In this context, "refund" is used as a polite form of "refund".')
    assert is_model_note("Note: I have used the search_policy tool to find this.")
    assert is_model_note("The assistant's draft answer: Each player can receive up to 3 coupons per day.")
    assert not is_model_note("Note: coupons expire 30 days after they are issued.")


def test_the_models_description_of_its_own_reply_is_a_note_to_the_model() -> None:
    """Seen live (2026-12-03), after an English order-status answer."""
    seen = (
        "This reply directly addresses your question about the status of their order ORD301.",
        "It provides factual information that the assistant found through calling `lookup_order` and "
        "includes all relevant details from the result.",
        "이 답변은 주문 조회 결과를 기반으로 작성되었습니다.",
    )
    assert all(is_model_note(s) for s in seen)
    for players in (
        "This answer is for your order ORD301: it is delayed.",
        "The reply from staff usually comes within 4 hours.",
        "이 답변이 도움이 되었으면 좋겠습니다.",
    ):
        assert not is_model_note(players), players


async def test_the_live_answer_speaks_to_the_player_and_drops_the_comment(store) -> None:
    facts = FactContext(player_texts=("ORD301 is late, can I get a coupon?",), mode="enforce", run_id="r1")
    guard = OutputGuard(store=store, actor=LUNA, thread_id="test:voice", locale="en", facts=facts)
    v = await guard.check(SEEN_LIVE, outcomes=[])
    assert "You can ask for a refund from the staff to get compensation." in v.text, v.text
    assert "the player" not in v.text.lower() and "Note:" not in v.text and "polite form" not in v.text


ALL_TOOLS = [*build_registry(), order_stats, coupon_totals]
PLAYER_WORDS = {t.name: t.player_name for t in ALL_TOOLS if t.player_name is not None}


@pytest.mark.parametrize(
    ("named", "said"),
    [
        # seen live (2026-12-04, Qwen2.5-Coder-1.5B): the particle 에 after a tool's name
        ("궁금한 점은 escalate_to_staff에 문의해 주세요.", "궁금한 점은 운영진에 문의해 주세요."),
        # the particle is chosen again for the new word: 를 → 를 after a vowel, 가 → 이 after a consonant
        ("lookup_order를 통해 확인했어요.", "주문 조회를 통해 확인했어요."),
        ("list_my_orders가 비어 있어요.", "주문 목록이 비어 있어요."),
        ("search_policy로 찾아봤어요.", "정책 검색으로 찾아봤어요."),
        ("`lookup_order`로는 찾을 수 없어요.", "주문 조회로는 찾을 수 없어요."),
        ("Please contact the escalate_to_staff tool for help.", "Please contact our staff for help."),
        ("lookup_order shows the status of your order.", "Order lookup shows the status of your order."),
    ],
)
def test_a_tool_named_to_the_player_is_said_in_their_words(named: str, said: str) -> None:
    assert tool_names_said(named, PLAYER_WORDS) == said


def test_every_tool_a_player_can_reach_has_words_for_the_player() -> None:
    reachable = [t.name for t in ALL_TOOLS if not t.staff_only]
    assert reachable and all(name in PLAYER_WORDS for name in reachable), reachable


def test_words_that_only_contain_a_tool_name_are_left_alone() -> None:
    assert tool_names_said("my_lookup_order_test is a file name.", PLAYER_WORDS) is None
    assert tool_names_said("주문 번호를 알려 주세요.", PLAYER_WORDS) is None


async def test_the_live_answer_names_no_tool_and_keeps_its_point(store) -> None:
    facts = FactContext(player_texts=("증명 문제 하나만 풀어줄 수 있어?",), mode="enforce", run_id="r2")
    guard = OutputGuard(
        store=store, actor=LUNA, thread_id="test:voice", locale="ko", facts=facts, tools=ALL_TOOLS
    )
    v = await guard.check(
        "그런 문제는 도와드리기 어려워요. 게임 관련 문의는 escalate_to_staff에 문의해 주세요. "
        "escalate_to_staff로 넘기세요.",
        outcomes=[],
    )
    assert "게임 관련 문의는 운영진에 문의해 주세요." in v.text, v.text
    assert "escalate_to_staff" not in v.text and "넘기세요" not in v.text  # the note to the model is dropped


@pytest.mark.parametrize(
    ("written", "said", "locale"),
    [
        # seen live (2026-12-04, Qwen2.5-Coder-1.5B): an argument's name, not a tool's, reached the player
        ("오류가 발생했습니다. order_id를 다시 확인해주세요.", "주문 번호를 다시 확인해주세요.", "ko"),
        ("Please check your order_id and try again.", "Please check your order number and try again.", "en"),
        ("incident_id가 없어요.", "장애 번호가 없어요.", "ko"),
    ],
)
async def test_an_arguments_name_is_said_in_the_players_words(store, written, said, locale) -> None:
    facts = FactContext(player_texts=("주문이 안 와요",), mode="enforce", run_id="r4")
    guard = OutputGuard(
        store=store, actor=LUNA, thread_id="test:voice", locale=locale, facts=facts, tools=ALL_TOOLS
    )
    v = await guard.check(written, outcomes=[])
    assert said in v.text and "_id" not in v.text, v.text


@pytest.mark.parametrize(
    ("about", "to"),
    [
        # seen live (2026-12-04, Qwen2.5-Coder-1.5B), after a refused lookup
        (
            "죄송합니다, 플레이어가 작성한 주문 번호를 입력해 주세요.",
            "죄송합니다, 작성하신 주문 번호를 입력해 주세요.",
        ),
        ("플레이어가 보낸 주문 번호를 제대로 입력해주세요.", "보내신 주문 번호를 제대로 입력해주세요."),
        ("플레이어의 주문을 찾을 수 없습니다.", "주문을 찾을 수 없습니다."),
        ("플레이어님께서 알려 주신 주문 번호로 확인했어요.", "알려 주신 주문 번호로 확인했어요."),
        ("플레이어가 원하는 금액은 한도를 넘어요.", "원하시는 금액은 한도를 넘어요."),
        ("플레이어가 알려 준 주문 번호로 확인했어요.", "알려 주신 주문 번호로 확인했어요."),
    ],
)
def test_a_korean_sentence_about_the_player_is_said_to_them(about: str, to: str) -> None:
    assert to_the_player(about) == to


@pytest.mark.parametrize(
    "sentence",
    [
        "상담 봇은 다른 플레이어의 주문이나 개인정보를 알려 주지 않습니다.",  # someone else
        "왕복 배송비 6,000원을 플레이어가 부담합니다.",  # a statement, not a modifier
        "플레이어 1명이 하루에 받을 수 있는 보상 쿠폰은 최대 3장입니다.",
        "그 플레이어가 보낸 선물은 돌려받을 수 없어요.",
    ],
)
def test_a_korean_sentence_about_other_players_or_the_rule_is_left_alone(sentence: str) -> None:
    assert to_the_player(sentence) is None


def test_no_korean_policy_sentence_is_rewritten() -> None:
    """The policies speak of players in their own voice; an answer quoting them keeps their words."""
    policies = Path(__file__).resolve().parents[2] / "policies"
    sentences = [
        line.strip()
        for path in sorted(policies.glob("*.md"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if "플레이어" in line
    ]
    assert len(sentences) >= 8
    assert [s for s in sentences if to_the_player(s) is not None] == []


async def test_the_live_korean_answer_speaks_to_the_player(store) -> None:
    facts = FactContext(player_texts=("택배사 보상 받을 수 있나요?",), mode="enforce", run_id="r5")
    guard = OutputGuard(
        store=store, actor=LUNA, thread_id="test:voice", locale="ko", facts=facts, tools=ALL_TOOLS
    )
    v = await guard.check(
        "죄송합니다, order_id를 찾을 수 없습니다. 플레이어가 작성한 order_id를 입력해 주세요.", outcomes=[]
    )
    assert "작성하신 주문 번호를 입력해 주세요." in v.text and "플레이어" not in v.text, v.text


class _OrderArgs(BaseModel):
    order_id: str


def test_argument_words_must_name_an_argument_of_the_tool() -> None:
    with pytest.raises(TypeError, match="orderid"):

        @tool(argument_words={"orderid": PLAYER_WORDS["lookup_order"]})
        async def misspelt(args: _OrderArgs, ctx: ToolContext) -> ToolResult:
            """A tool."""
            return ToolResult.error("unused")


# seen live (2026-12-04, Qwen2.5-Coder-1.5B) on a courier question: a labelled answer, a line written for
# the player, and the model's judgement of its own draft
LABELLED_LIVE = (
    "원하시면 운영진(사람 상담원)에게 바로 연결해 드릴게요.\n답변:\n죄송합니다, 그 택배는 저희가 확인할 수 없어요.\n"
    "플레이어:오류가 발생했습니다. 주문 번호를 다시 확인해주세요.\n\n"
    "이렇게 답변하면 플레이어에게 더 명확하고 도움이 될 것입니다."
)


async def test_the_answers_label_goes_and_the_models_dialogue_and_self_review_are_dropped(store) -> None:
    facts = FactContext(player_texts=("택배사 보상 받을 수 있나요?",), mode="enforce", run_id="r3")
    guard = OutputGuard(
        store=store, actor=LUNA, thread_id="test:voice", locale="ko", facts=facts, tools=ALL_TOOLS
    )
    v = await guard.check(LABELLED_LIVE, outcomes=[])
    assert "죄송합니다, 그 택배는 저희가 확인할 수 없어요." in v.text, v.text
    assert "답변:" not in v.text and "플레이어:" not in v.text and "이렇게 답변하면" not in v.text, v.text


@pytest.mark.parametrize(
    "sentence",
    ["답변: 보상 쿠폰은 하루 3장까지예요.", "**Answer:** You can get 3 a day.", "Reply: 3 a day."],
)
def test_a_labelled_answer_keeps_its_words(sentence: str) -> None:
    unlabelled = without_own_label(sentence)
    assert unlabelled is not None and ":" not in unlabelled and "3" in unlabelled


def test_a_player_sentence_with_a_colon_is_no_label_or_note() -> None:
    for players in ("주문 번호: ORD101 맞나요?", "Answers take up to 4 hours: staff reply by e-mail."):
        assert without_own_label(players) is None and not is_model_note(players), players
