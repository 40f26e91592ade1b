"""The shared vocabulary at the bottom layer: the conversation's language and the bilingual sentences
players read. Imports nothing from the rest of the bot, so every layer may use it."""

from bot.vocabulary.catalogue import Text, say
from bot.vocabulary.language import HANGUL, HANGUL_RANGE, Locale, detect_language, has_hangul

__all__ = ["HANGUL", "HANGUL_RANGE", "Locale", "Text", "detect_language", "has_hangul", "say"]
