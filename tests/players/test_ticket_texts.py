"""What a ticket thread is called (issue 26): the player and a short topic from the first message, with no
mention, link or markdown that could ping, mislead or break the name; within Discord's 100 characters."""

from __future__ import annotations

from bot.desk.ticket_texts import NAME_LIMIT, redirect_to_open, ticket_name, ticket_topic


def test_the_topic_drops_mentions_links_and_markdown() -> None:
    topic = ticket_topic(
        "@everyone <@123> <@&456> <#789> **결제** ~~오류~~ `코드` [여기](https://x.example/a) 확인"
    )
    assert topic == "결제 오류 코드 여기 확인"


def test_a_long_first_message_is_cut_at_a_word_boundary() -> None:
    topic = ticket_topic("아이템 " * 30)
    assert topic.endswith("…") and len(topic) <= 41 and "  " not in topic
    assert topic[:-1].split() == ["아이템"] * len(topic[:-1].split())


def test_the_name_carries_the_player_and_fits_discord() -> None:
    assert ticket_name("루나", "결제 오류", "ko") == "루나 · 결제 오류"
    assert ticket_name("**<@1>**", "", "ko") == "플레이어 · 문의"
    assert ticket_name("Kai", "", "en") == "Kai · question"
    assert len(ticket_name("가" * 200, "나" * 200, "ko")) <= NAME_LIMIT


def test_the_pointer_links_the_open_thread_in_the_players_language() -> None:
    assert redirect_to_open("ko", 55).startswith("이미 열린 상담이 있어요. <#55>")
    assert "You already have an open ticket: <#55>" in redirect_to_open("en", 55)
