"""General-purpose sentences that are about no game policy: the background the abstain decision
compares a query with.

A question about a policy is closer to some policy passage than to any of these; small talk and
general questions are closer to one of these than to any passage. They describe everyday life, not
any policy folder, so they carry over to any corpus given to `arca-bot index --policies DIR`. The
topics of the held-out and second-corpus off-topic queries (weather, films, pets, health, stocks,
homework, travel times, greetings, poems) and of the tuning set's third off-topic batch (transit,
moving house, dramas, rent, travel plans, PC parts, phones, books, cars, guitar, wifi, time zones) are
deliberately absent, so those sets still measure it. Many topics (44 of the 72 sentences were added
with the third batch) make the nearest everyday sentence a fairer yardstick than a few.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np

from bot.knowledge.fitted import FittedParts, fingerprint
from bot.vocabulary.language import has_hangul

BACKGROUND_KO = (
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
    "베란다에서 키우는 화분에 물은 얼마나 자주 줘야 하나요?",
    "뜨개질로 목도리 뜨는 법을 배우고 싶어요.",
    "수채화 그림을 처음 시작하려면 뭐가 필요해요?",
    "바다낚시 하기 좋은 계절이 언제예요?",
    "사진을 잘 찍으려면 조리개를 어떻게 맞춰요?",
    "흰 옷에 묻은 김치 얼룩은 어떻게 지워요?",
    "핸드드립 커피를 맛있게 내리는 방법",
    "결혼식 축의금은 보통 얼마 내요?",
    "운전면허 필기시험은 어떻게 준비해요?",
    "연말정산 서류는 언제까지 내야 해요?",
    "피부가 건조할 때 어떤 크림을 발라야 할까요?",
    "아기가 밤에 자꾸 깨서 울어요.",
    "여자친구랑 싸웠는데 어떻게 화해하죠?",
    "피라미드는 누가 어떻게 만들었어요?",
    "태양계에서 가장 큰 행성은 뭐예요?",
    "엑셀에서 두 열을 합치는 함수가 뭐예요?",
    "프린터가 종이를 못 집어요.",
    "분리수거할 때 페트병은 어떻게 버려요?",
    "에어컨에서 물이 떨어지는데 왜 그래요?",
    "인생의 의미가 뭐라고 생각해?",
    "'되'와 '돼'는 언제 구분해서 써요?",
    "거미 다리는 몇 개예요?",
    "야구 규칙 중에 인필드 플라이가 뭐예요?",
    "상사에게 보낼 정중한 이메일을 써 줘.",
)
"""The Korean sentences: the yardstick of a query against Korean-only passages."""

BACKGROUND_EN = (
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
    "how often should I water my houseplants?",
    "how do I knit a scarf for beginners?",
    "what paint should I use for a watercolor landscape?",
    "what is the best bait for sea fishing?",
    "how do I take sharper photos with my camera?",
    "how do I get a coffee stain out of a white shirt?",
    "how much should I spend on a wedding gift?",
    "tips for passing my driving test",
    "when is the deadline to file my taxes?",
    "my baby keeps waking up at night",
    "my girlfriend is mad at me, what should I do?",
    "who built the pyramids?",
    "what is the biggest planet in the solar system?",
    "which excel formula adds two columns together?",
    "my printer keeps jamming",
    "how do I recycle plastic bottles?",
    "why is my air conditioner leaking water?",
    "what is the meaning of life?",
    "explain the rules of basketball",
    "help me write a polite email to my boss",
)
"""The English sentences."""

BACKGROUND = BACKGROUND_KO + BACKGROUND_EN

_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


LANGUAGES = ("ko", "en")


@lru_cache(maxsize=4096)
def text_languages(text: str) -> frozenset[str]:
    """The languages a passage is written in: `ko` when it has Hangul, `en` when it has at least a few
    English words (a Korean body with a `> EN:` summary line is both). Cached: a search asks it of the
    same few passages' texts again and again."""
    languages = set()
    if has_hangul(text):
        languages.add("ko")
    if len(_LATIN_WORD.findall(text)) >= 4 or not languages:
        languages.add("en")
    return frozenset(languages)


def background_rows(languages: frozenset[str]) -> list[int]:
    """Positions in `BACKGROUND` of the sentences in `languages` (all of them when none is known)."""
    korean = range(len(BACKGROUND_KO))
    english = range(len(BACKGROUND_KO), len(BACKGROUND))
    rows = [*(korean if "ko" in languages else ()), *(english if "en" in languages else ())]
    return rows or list(range(len(BACKGROUND)))


def background_fingerprint(embedder_name: str) -> str:
    """What a model's stored background vectors were made from (bot/knowledge/fitted.py)."""
    return fingerprint("background passages", embedder_name, "\n".join(BACKGROUND))


def background_vectors(embedder: Any, parts: FittedParts) -> np.ndarray:
    """`embedder`'s passage vectors of `BACKGROUND`, in its order: stored with the index once made."""
    part = parts.get(
        f"background:{embedder.name}",
        background_fingerprint(embedder.name),
        lambda: {"vectors": np.asarray(embedder.embed_passages(list(BACKGROUND)), dtype=np.float32)},
    )
    return np.asarray(part["vectors"], dtype=np.float32)
