"""ReActAgent tool loop: two phases, dual mode, JSON-mode parsing, native concurrency, fallbacks, events."""

from __future__ import annotations

import json

import pytest

from bot.engine import ReActAgent, event_adapter
from bot.engine.observations import observation_text
from bot.engine.prompts import LOOP_REFORMAT_REQUEST
from bot.llm import LLMError, ModelRequest, ScriptedLLM, around, validate_history
from bot.llm.base import LLMResult, ToolCall
from tests.support.context import make_ctx
from tests.support.engine import MODES, queued, run_scripted
from tools.base import ToolResult

LOOKUP = {"tool": "lookup_order", "args": {"order_id": "ORD001"}}


def synthesis_down(request: ModelRequest) -> None:
    if request.purpose == "synthesis":
        raise LLMError("synthesis endpoint down")


# ---- rule 1: two phases ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_tool_loop_uses_non_streaming_chat_and_answer_is_a_separate_stream(tools, mode):
    run = await run_scripted([LOOKUP, {"final": "draft"}, {"answer": "지연된 주문입니다."}], tools, mode=mode)
    loop = [r for r in run.llm.requests if r.purpose == "loop"]
    synth = [r for r in run.llm.requests if r.purpose == "synthesis"]
    assert len(loop) == 2 and not any(r.stream for r in loop)
    assert len(synth) == 1 and synth[0].stream
    assert run.result.answer == "draft"
    assert run.answer == "지연된 주문입니다."


@pytest.mark.parametrize("mode", MODES)
async def test_synthesis_prompt_cuts_each_tool_result_to_2000_chars(tools, mode):
    run = await run_scripted([{"tool": "big", "args": {}}, {"final": "done"}], tools, mode=mode)
    full = run.result.tool_outcomes[0].observation
    assert "BIGEND" in full and len(full) > 5_000
    assert any("BIGEND" in (m.get("content") or "") for m in run.result.messages)  # the loop saw it all
    synth = next(r for r in run.llm.requests if r.purpose == "synthesis")
    prompt = synth.messages[-1]["content"]
    assert "BIGSTART" in prompt and "BIGEND" not in prompt
    assert len(prompt) < 2_000 + 1_500


@pytest.mark.parametrize("mode", MODES)
async def test_synthesis_failure_yields_the_loops_last_answer(tools, mode):
    llm = around(
        ScriptedLLM([LOOKUP, {"final": "주문 ORD001은 배송 지연 상태입니다."}], mode=mode), synthesis_down
    )
    run = await run_scripted([], tools, llm=llm)
    assert run.answer == "주문 ORD001은 배송 지연 상태입니다."
    statuses = [(e.channel, e.status) for e in run.events if e.type == "answer"]
    assert statuses == [("step", "start"), ("answer", "start"), ("answer", "delta"), ("answer", "done")]


async def test_synthesis_prompt_forbids_meta_commentary_and_matches_the_question_language(tools):
    ko = await run_scripted([{"final": "x"}], tools, query="쿠폰 받을 수 있나요?")
    en = await run_scripted([{"final": "x"}], tools, query="Can I get a coupon?")
    ko_system = next(r for r in ko.llm.requests if r.purpose == "synthesis").messages[0]["content"]
    en_system = next(r for r in en.llm.requests if r.purpose == "synthesis").messages[0]["content"]
    assert "Reply in Korean" in ko_system and "Reply in English" in en_system
    assert "도구 출력을 기반으로" in ko_system and "Markdown" in ko_system


# ---- rule 2: mode selection -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("use_native", "tool_call", "native"), [(True, True, True), (False, True, False), (True, False, False)]
)
async def test_native_mode_only_when_asked_and_the_model_declares_tool_calls(
    tools, use_native, tool_call, native
):
    llm = ScriptedLLM([LOOKUP, {"final": "ok"}], abilities={"tool_call": tool_call})
    run = await run_scripted([], tools, llm=llm, use_native_tools=use_native)
    assert run.agent.native_mode is native
    first = run.llm.requests[0]
    system = first.messages[0]["content"]
    if native:
        assert first.tools and "lookup_order" in [t["function"]["name"] for t in first.tools]
        assert '"action": "tool_call"' not in system
    else:
        assert first.tools is None
        assert '"action": "tool_call"' in system and "- lookup_order:" in system
    assert run.result.codes == ["OK"] and run.result.mode == ("native" if native else "json")


# ---- rule 3: JSON mode ----------------------------------------------------------------------------


async def test_json_mode_runs_one_tool_per_iteration_with_observations_as_user_messages(tools):
    two = {"tools": [LOOKUP, {"tool": "echo", "args": {"text": "hi"}}]}
    run = await run_scripted([two, {"final": "ok"}], tools, mode="json")
    assert run.result.iterations == 3
    assert [o.iteration for o in run.result.tool_outcomes] == [1, 2]
    observations = [
        m["content"]
        for m in run.result.messages
        if m["role"] == "user" and m["content"].startswith("Observation from")
    ]
    assert observations[0].startswith("Observation from lookup_order: [OK]")
    assert observations[1].startswith("Observation from echo: [OK] echo hi")


async def test_json_mode_unparseable_reply_gets_reformat_request_and_loop_goes_on(tools):
    run = await run_scripted([{"raw": "음… 주문을 볼게요"}, LOOKUP, {"final": "ok"}], tools, mode="json")
    assert run.result.stopped_reason == "final_answer" and run.result.answer == "ok"
    contents = [m.get("content") for m in run.result.messages]
    i = contents.index("음… 주문을 볼게요")
    assert run.result.messages[i]["role"] == "assistant" and contents[i + 1].startswith(LOOP_REFORMAT_REQUEST)
    assert run.result.iterations == 3


async def test_json_mode_reformat_request_names_the_exact_parse_error_and_a_valid_object(tools):
    broken = '{"action": "final_answer", "answer": "하루 최대 5장" "reasoning": "x"}'
    run = await run_scripted([{"raw": broken}, {"final": "ok"}], tools, mode="json", synthesize=False)
    request = run.llm.requests[1].messages[-1]["content"]
    assert "Parse error: Expecting ',' delimiter: line 1 column" in request
    example = request.split("A valid reply looks like this: ", 1)[1]
    assert json.loads(example)["action"] == "final_answer" and "Korean" in example


async def test_json_mode_reformat_example_is_the_call_the_question_requires(grounded_tools):
    run = await run_scripted(
        [
            {"raw": "ORD101은 배송 중이에요"},
            {"tool": "lookup_order", "args": {"order_id": "ORD101"}},
            {"final": "ok"},
        ],
        grounded_tools,
        mode="json",
        query="ORD101 주문 지금 어떤 상태예요?",
        synthesize=False,
    )
    request = run.llm.requests[1].messages[-1]["content"]
    example = json.loads(request.split("A valid reply looks like this: ", 1)[1])
    assert example == {"action": "tool_call", "tool": "lookup_order", "args": {"order_id": "ORD101"}}


async def test_json_mode_reformat_retry_counts_against_max_iterations(tools):
    run = await run_scripted(
        [{"raw": "nope"}, LOOKUP], tools, mode="json", max_iterations=2, synthesize=False
    )
    assert run.result.stopped_reason == "max_iterations" and run.result.iterations == 2
    assert run.llm.unused_steps == []


async def test_json_mode_second_consecutive_parse_failure_ends_in_an_honest_fallback_not_the_raw_text(tools):
    run = await run_scripted(
        [LOOKUP, {"raw": "보상 쿠폰은 하루 최대 5장"}, {"raw": "하루에 최대 5 장까지 받을 수 있습니다."}],
        tools,
        mode="json",
    )
    assert run.result.stopped_reason == "parse_failure"
    assert "5" not in run.answer and "최대" not in run.answer
    assert "lookup_order" in run.answer and "운영진" in run.answer  # what ran, and a person
    assert not [r for r in run.llm.requests if r.purpose == "synthesis"]  # no answer made up from the trace
    assert all("5 장" not in (m.get("content") or "") for m in run.result.messages)


async def test_json_mode_uses_reasoning_content_when_json_reasoning_is_empty(tools):
    steps = [
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}, "reasoning_content": "R1: 먼저 주문 조회"},
        {
            "tool": "echo",
            "args": {"text": "x"},
            "reasoning": "json reasoning wins",
            "reasoning_content": "ignored",
        },
        {"final": "ok"},
    ]
    run = await run_scripted(steps, tools, mode="json", synthesize=False)
    thoughts = [e.reasoning for e in run.events if e.type == "thinking" and e.status == "done"]
    assert thoughts[:2] == ["R1: 먼저 주문 조회", "json reasoning wins"]


# ---- rule 4: native mode ---------------------------------------------------------------------------


async def test_native_calls_of_one_response_run_concurrently(tools):
    # wait_a only finishes once wait_b has started and vice versa: run one after the other, both time out.
    run = await run_scripted([{"tools": [{"tool": "wait_a"}, {"tool": "wait_b"}]}, {"final": "ok"}], tools)
    assert run.result.codes == ["OK", "OK"]


async def test_native_side_effect_tools_run_one_at_a_time_in_order(tools, probe):
    calls = [
        {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 1000}},
        LOOKUP,
        {"tool": "issue_coupon", "args": {"order_id": "ORD002", "amount": 2000}},
        {"tool": "issue_coupon", "args": {"order_id": "ORD003", "amount": 3000}},
    ]
    run = await run_scripted([{"tools": calls}, {"final": "ok"}], tools, query="ORD001, ORD002, ORD003 보상")
    assert probe.side_effect_overlap is False
    issued = [c for c in probe.calls if c.startswith("issue_coupon")]
    assert issued == ["issue_coupon:ORD001:1000", "issue_coupon:ORD002:2000", "issue_coupon:ORD003:3000"]
    assert run.result.tools_called == ["issue_coupon", "lookup_order", "issue_coupon", "issue_coupon"]


async def test_native_all_tool_messages_follow_their_assistant_message_before_any_other(tools):
    from bot.engine import InterruptQueue

    queue = InterruptQueue()
    llm = ScriptedLLM([{"tools": [LOOKUP, {"tool": "echo", "args": {"text": "x"}}]}, {"final": "ok"}])
    agent = ReActAgent(llm, tools)

    def on_event(event):
        if event.type == "iteration" and event.status == "done" and event.tool_name == "lookup_order":
            queue.put("빨리 부탁해요")

    result = await agent.run("q", make_ctx(), interrupts=queue, on_event=on_event)
    roles = [m["role"] for m in result.messages]
    i = next(k for k, m in enumerate(result.messages) if m.get("tool_calls"))
    assert roles[i + 1 : i + 4] == ["tool", "tool", "user"]
    assert result.messages[i + 3]["content"].startswith("[USER INTERRUPT]")
    assert (
        validate_history(
            [
                {k: v for k, v in m.items() if k in ("role", "content", "tool_calls", "tool_call_id")}
                for m in result.messages
            ]
        )
        == []
    )


async def test_native_response_without_tool_calls_is_the_final_answer(tools):
    run = await run_scripted([{"final": "바로 답합니다"}], tools, synthesize=False)
    assert (run.result.answer, run.result.iterations, run.result.tool_outcomes) == ("바로 답합니다", 1, [])


async def test_native_mode_rewrites_tool_call_ids_a_server_reuses(tools):
    same = ToolCall("call_0", "lookup_order", '{"order_id": "ORD001"}')
    llm = queued([LLMResult(tool_calls=[same]), LLMResult(tool_calls=[same]), "done"])
    result = await ReActAgent(llm, tools).run("q", make_ctx())
    ids = [o.call_id for o in result.tool_outcomes]
    assert ids[0] == "call_0" and ids[1] != "call_0"
    assert (
        validate_history(
            [
                {k: v for k, v in m.items() if k in ("role", "content", "tool_calls", "tool_call_id")}
                for m in llm.requests[-1].messages
            ]
        )
        == []
    )


# ---- rule 9: max iterations --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_max_iterations_answer_summarises_which_tools_ran_and_how_they_ended(tools, mode):
    steps = [
        LOOKUP,
        {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 30000}},
        {"tool": "boom"},
    ]
    run = await run_scripted(steps, tools, mode=mode, max_iterations=3, synthesize=False)
    assert run.result.stopped_reason == "max_iterations" and run.result.iterations == 3
    answer = run.result.answer
    assert "3회" in answer
    assert "lookup_order: 성공 (OK)" in answer
    assert "issue_coupon: 실패 (AMOUNT_OVER_LIMIT)" in answer and "boom: 실패 (ERROR)" in answer


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        (
            "ko",
            [
                "- search_policy: 성공 (OK), 여러 번",
                "- lookup_order: 실패 (ERROR), 여러 번",
                "- lookup_order: 성공 (OK)",
            ],
        ),
        (
            "en",
            [
                "- search_policy: ok (OK), more than once",
                "- lookup_order: failed (ERROR), more than once",
                "- lookup_order: ok (OK)",
            ],
        ),
    ],
)
async def test_the_summary_of_what_ran_says_a_repeated_call_once(store, locale, expected):
    """Seen live (2026-12-04): a small model's refused lookups and repeated searches made a stop notice of
    nine lines. Each kind of call and how it ended is one line, in the order first made. A repeat is said in
    words: a count ("3회") was withheld by the fact check as a number nothing backed, and the player read
    the honest line in the middle of the list."""
    from bot.engine.fallbacks import tools_summary
    from bot.engine.results import ToolOutcome
    from bot.guards.output import FactContext, OutputGuard

    def made(name: str, result: ToolResult) -> ToolOutcome:
        return ToolOutcome("c", name, {}, result, "", 0.0, 1)

    ok, refused = ToolResult(ok=True, code="OK", message="found"), ToolResult.error("Not run: a placeholder")
    order = [
        ("search_policy", ok),
        ("lookup_order", refused),
        ("search_policy", ok),
        ("lookup_order", refused),
    ]
    order += [("lookup_order", ok), ("lookup_order", refused)]
    summary = tools_summary(make_ctx(locale=locale), [made(n, r) for n, r in order])
    assert summary.splitlines() == expected
    facts = FactContext(player_texts=("환불 기간이 며칠이에요?",), mode="enforce", run_id="r")
    guard = OutputGuard(store=store, actor=make_ctx().actor, thread_id="t", locale=locale, facts=facts)
    checked = await guard.check(summary, outcomes=[])
    assert [line.split(": ")[1] for line in checked.text.splitlines()] == [e.split(": ")[1] for e in expected]


# ---- rule 10: failures become observations ---------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_tool_becomes_an_error_observation_and_the_loop_goes_on(tools, mode):
    run = await run_scripted([{"tool": "refund_everything", "args": {}}, {"final": "ok"}], tools, mode=mode)
    outcome = run.result.tool_outcomes[0]
    assert outcome.result.code == "ERROR" and "does not exist" in outcome.observation
    assert run.result.stopped_reason == "final_answer"


@pytest.mark.parametrize("mode", MODES)
async def test_tool_exception_becomes_an_error_observation(tools, mode):
    run = await run_scripted([{"tool": "boom"}, {"final": "ok"}], tools, mode=mode, synthesize=False)
    done = next(e for e in run.events if e.type == "iteration" and e.status == "done")
    assert done.code == "ERROR" and "RuntimeError" in done.error and done.observation.startswith("[ERROR]")


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_arguments_observation_names_the_field_and_expected_type(tools, mode):
    bad = {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": "lots"}}
    run = await run_scripted([bad, {"final": "ok"}], tools, mode=mode, synthesize=False)
    observation = run.result.tool_outcomes[0].observation
    assert "'amount'" in observation and "integer" in observation


@pytest.mark.parametrize("mode", MODES)
async def test_llm_error_in_the_loop_ends_the_run_with_a_clear_answer_and_valid_history(tools, mode, memory):
    llm = ScriptedLLM([LOOKUP, {"error": "HTTP 500 from endpoint"}], mode=mode)
    agent = ReActAgent(llm, tools)
    result = await agent.run("ORD001?", make_ctx(), memory=memory)
    assert result.stopped_reason == "llm_error" and "HTTP 500" in result.error
    assert "다시 시도" in result.answer and "lookup_order" in result.answer
    assert (
        validate_history(
            [
                {k: v for k, v in m.items() if not k.startswith("_") and k != "pinned"}
                for m in await memory.load("test:thread")
            ]
        )
        == []
    )
    streamed = "".join([d async for d in agent.stream_answer(result)])
    assert streamed == result.answer
    assert llm.calls["synthesis"] == 0


@pytest.mark.parametrize("mode", MODES)
async def test_large_html_artifact_is_replaced_by_a_short_note_in_the_observation(tools, mode):
    run = await run_scripted([{"tool": "report"}, {"final": "ok"}], tools, mode=mode, synthesize=False)
    observation = run.result.tool_outcomes[0].observation
    assert observation.startswith(
        "[OK] [Artifact generated: report.html] The content is rendered as a preview in the UI"
    )
    assert not any("<html>" in (m.get("content") or "") for m in run.result.messages)


def test_artifact_named_in_result_data_replaces_the_message():
    result = ToolResult(True, "OK", "# Report\n" + "x" * 100, data={"artifact": {"name": "orders.md"}})
    assert observation_text("export", result).startswith("[OK] [Artifact generated: orders.md]")
    plain = ToolResult(False, "AMOUNT_OVER_LIMIT", "1회 한도는 20,000원입니다")
    assert observation_text("issue_coupon", plain) == "[AMOUNT_OVER_LIMIT] 1회 한도는 20,000원입니다"


# ---- rule 11: events ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_events_come_in_order_with_the_seed_payload_fields(tools, mode):
    run = await run_scripted([LOOKUP, {"final": "draft"}, {"answer": "최종"}], tools, mode=mode)
    sequence = [(e.type, getattr(e, "status", None)) for e in run.events]
    assert sequence == [
        ("thinking", "start"),
        ("thinking", "done"),
        ("iteration", "start"),
        ("iteration", "done"),
        ("thinking", "start"),
        ("thinking", "done"),
        ("answer", "start"),
        ("done", None),
        ("answer", "start"),
        *[("answer", "delta")] * (len(sequence) - 10),
        ("answer", "done"),
    ]
    start, done = run.events[2], run.events[3]
    assert (start.iteration, start.tool_name, start.tool_args) == (1, "lookup_order", {"order_id": "ORD001"})
    assert done.call_id == start.call_id and done.code == "OK" and done.error is None
    assert done.observation.startswith("[OK] 주문 ORD001") and done.iter_elapsed >= 0
    finished = run.events[7]
    assert (finished.answer, finished.iterations, finished.stopped_reason) == ("draft", 2, "final_answer")
    assert set(finished.usage) >= {"prompt_tokens", "completion_tokens"} and finished.elapsed >= 0
    for event in run.events:
        assert event_adapter.validate_python(event.model_dump()) == event


# ---- rules 12, 13 ------------------------------------------------------------------------------------


async def test_one_llm_instance_serves_every_call_of_a_run(tools):
    llm = ScriptedLLM([LOOKUP, {"final": "ok"}])
    run = await run_scripted([], tools, llm=llm, tool_selection_threshold=3)
    assert run.agent.llm is llm
    assert set(llm.calls) == {"select_tools", "loop", "synthesis"}


@pytest.mark.parametrize("mode", MODES)
async def test_tool_call_ids_are_unique_within_a_thread_across_runs(tools, mode, memory):
    ids = []
    for _ in range(2):
        llm = ScriptedLLM([LOOKUP, {"tools": [LOOKUP, LOOKUP]}, {"final": "ok"}], mode=mode)
        # The same run id twice: ids (and so idempotency keys) must still differ.
        result = await ReActAgent(llm, tools).run("q", make_ctx(run_id="same"), memory=memory)
        assert llm.violations == []
        ids += [o.call_id for o in result.tool_outcomes]
    assert len(ids) == 6 and len(set(ids)) == 6


async def test_stop_request_ends_the_loop_at_the_next_safe_point(tools):
    from bot.engine import InterruptQueue

    queue = InterruptQueue()
    llm = ScriptedLLM([LOOKUP, {"final": "never"}])

    def on_event(event):
        if event.type == "iteration" and event.status == "done":
            queue.request_stop()

    result = await ReActAgent(llm, tools).run("q", make_ctx(), interrupts=queue, on_event=on_event)
    assert result.stopped_reason == "cancelled" and llm.unused_steps == [1]


@pytest.mark.parametrize("mode", MODES)
async def test_the_host_paces_each_model_reply_before_the_engine_acts_on_it(tools, mode):
    llm = ScriptedLLM([LOOKUP, LOOKUP | {"args": {"order_id": "ORD002"}}, {"final": "done"}], mode=mode)
    seen: list[int] = []

    async def pace() -> None:  # the host's turn budget; here it records how far the run had got
        seen.append(len(llm.requests))

    run = await run_scripted([], tools, llm=llm, pace=pace)
    loop_calls = [r for r in llm.requests if r.purpose == "loop"]
    assert len(seen) == len(loop_calls) == 3  # once per reply of the tool loop …
    assert seen == [1, 2, 3]  # … after that reply arrived, before the next call was made
    assert [o.name for o in run.result.tool_outcomes] == ["lookup_order", "lookup_order"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_finished_run_is_freed_by_reference_counting_not_left_to_the_cyclic_collector(
    tools, memory, mode
):
    import gc

    from bot.engine.agent import AgentRun

    steps = [
        LOOKUP,
        {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 5000}},
        {"final": "ok"},
    ]
    gc.collect()
    gc.disable()  # what is still alive after the run, only the cyclic collector would free
    try:
        agent = ReActAgent(ScriptedLLM(steps, mode=mode), tools)
        result = await agent.run("ORD001 배송이 늦어요", make_ctx(), memory=memory)
        answer = "".join([d async for d in agent.stream_answer(result)])
        assert result.answer == "ok" and answer
        del agent, result
        alive = [o for o in gc.get_objects() if isinstance(o, AgentRun)]
    finally:
        gc.enable()
    # A run that is its own reference cycle keeps its whole graph (messages, outcomes, the model, the
    # channel's renderer) until a full collection, which a burst of runs then pays with the loop stopped.
    assert alive == []


async def test_json_mode_reads_the_openai_function_call_shape_as_a_tool_call(tools, probe):
    shape = '{"name": "lookup_order", "arguments": {"order_id": "ORD001"}}'
    run = await run_scripted([{"raw": shape}, {"final": "ok"}], tools, mode="json", synthesize=False)
    assert probe.calls == ["lookup_order:ORD001"] and run.result.stopped_reason == "final_answer"
