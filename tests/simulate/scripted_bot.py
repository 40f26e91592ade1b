"""The simulations' scripted bot: the scenario most tests run and the fake model's replies for one turn
(shared by tests/simulate and the game connection's simulation test)."""

from __future__ import annotations

from bot.app import PROJECT_ROOT
from bot.llm.openai_llm import OpenAILLM
from tests.fakes.openai_server import FakeOpenAIServer, reply

SCENARIOS = PROJECT_ROOT / "tests" / "scenarios"
DELAYED = SCENARIOS / "delayed_order_compensation_ko.yaml"


def bot_turn(amount: int, answer: str) -> list[dict]:
    """The bot model's replies for one turn: look up, issue, a final answer, the streamed synthesis."""
    return [
        reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "ORD101"}}]),
        reply(tool_calls=[{"name": "issue_coupon", "arguments": {"order_id": "ORD101", "amount": amount}}]),
        reply(answer),
        reply(answer),
    ]


def model(server: FakeOpenAIServer) -> OpenAILLM:
    return OpenAILLM("fake-model", base_url=server.base_url, api_key="test-key", max_retries=0)
