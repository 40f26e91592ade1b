"""The LLM layer: protocol and results, the OpenAI-compatible adapter, the scripted and function models,
the registry."""

from bot.llm.base import LLM, PURPOSES, LLMError, LLMResult, ToolCall, Usage, api_message
from bot.llm.function import FunctionLLM, ModelRequest, around, forward, forward_stream
from bot.llm.hooks import LLMObserver
from bot.llm.openai_llm import OpenAILLM
from bot.llm.registry import ModelRegistry
from bot.llm.scripted import ScriptedLLM, ScriptedRequest, ScriptExhausted, ScriptViolation, validate_history

__all__ = [
    "LLM",
    "PURPOSES",
    "FunctionLLM",
    "LLMError",
    "LLMObserver",
    "LLMResult",
    "ModelRegistry",
    "ModelRequest",
    "OpenAILLM",
    "ScriptExhausted",
    "ScriptViolation",
    "ScriptedLLM",
    "ScriptedRequest",
    "ToolCall",
    "Usage",
    "api_message",
    "around",
    "forward",
    "forward_stream",
    "validate_history",
]
