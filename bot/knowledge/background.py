"""General-purpose sentences that are about no game policy: the background the abstain decision
compares a query with.

A question about a policy is closer to some policy passage than to any of these; small talk and
general questions are closer to one of these than to any passage. They describe everyday life, not
any policy folder, so they carry over to any corpus given to `arca-bot index --policies DIR`. The
topics of the held-out and second-corpus off-topic queries (weather, films, pets, health, stocks,
homework, travel times, greetings, poems) are deliberately absent, so those sets still measure it.
"""

from __future__ import annotations

BACKGROUND = (
    # Korean
    "오늘 기분이 어때요?",
    "고마워요, 좋은 하루 되세요.",
    "잘 자요, 내일 봐요.",
    "저녁 메뉴로 뭘 먹으면 좋을지 모르겠어요.",
    "맛있는 라면 끓이는 법을 알려 주세요.",
    "재미있는 농담 하나 해 줘.",
    "요즘 인기 있는 노래를 추천해 주세요.",
    "주말에 친구들과 놀러 갈 곳을 찾고 있어요.",
    "영어 단어를 빨리 외우는 방법이 있을까요?",
    "자바스크립트로 정렬 함수를 작성해 줘.",
    "운동을 꾸준히 하는 방법이 궁금해요.",
    "이번 월드컵 우승 팀이 어디예요?",
    "환율이 요즘 얼마예요?",
    "생일 선물로 뭘 사면 좋을까요?",
    # English
    "how are you doing today?",
    "thanks a lot, have a great day",
    "good night, see you tomorrow",
    "what should I cook for dinner tonight?",
    "give me a recipe for chocolate cookies",
    "tell me something funny",
    "can you recommend some new music?",
    "where should I go on vacation this summer?",
    "how do I learn a new language quickly?",
    "write a python function that sorts a list",
    "how can I stay motivated to exercise?",
    "who won the last football championship?",
    "what is the exchange rate of the dollar?",
    "what should I buy my friend for her birthday?",
)
