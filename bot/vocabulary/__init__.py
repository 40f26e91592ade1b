"""The shared vocabulary at the bottom layer: the conversation's language, the bilingual sentences
players read and the thread ids. Imports nothing from the rest of the bot, so every layer may use it."""

from bot.vocabulary.catalogue import Text, say
from bot.vocabulary.interrupt import INTERRUPT_PREFIX
from bot.vocabulary.language import HANGUL, HANGUL_RANGE, Locale, detect_language, has_hangul
from bot.vocabulary.thread_id import ThreadId, ThreadKind

__all__ = [
    "HANGUL",
    "HANGUL_RANGE",
    "INTERRUPT_PREFIX",
    "Locale",
    "Text",
    "ThreadId",
    "ThreadKind",
    "detect_language",
    "has_hangul",
    "say",
]
