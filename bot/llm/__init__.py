"""The LLM layer: protocol and results, the OpenAI-compatible adapter, the scripted model, the registry."""

from bot.llm.base import LLM, PURPOSES, LLMError, LLMResult, ToolCall, Usage, api_message
from bot.llm.openai_llm import OpenAILLM
from bot.llm.registry import ModelRegistry
from bot.llm.scripted import ScriptedLLM, ScriptedRequest, ScriptExhausted, ScriptViolation, validate_history

__all__ = [
    "LLM",
    "PURPOSES",
    "LLMError",
    "LLMResult",
    "ModelRegistry",
    "OpenAILLM",
    "ScriptExhausted",
    "ScriptViolation",
    "ScriptedLLM",
    "ScriptedRequest",
    "ToolCall",
    "Usage",
    "api_message",
    "validate_history",
]
