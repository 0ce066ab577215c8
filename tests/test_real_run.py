"""End to end on the embedded model: what only a real model shows (a real plan, batching, token counts)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from langchain_core.messages import HumanMessage

from hierplan import SamplingConfig, build_graph, load_chat_model, open_checkpointer
from hierplan.nodes.model_call import invoke_batch
from hierplan.schema import Plan

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="module")
def embedded():
    return load_chat_model()


def short_sampling() -> SamplingConfig:
    """Real planner budget; short step and final answers so the test stays quick on 2 cores."""
    base = SamplingConfig(seed=3)
    return replace(base, llm_step=replace(base.llm_step, max_new_tokens=24),
                   code=replace(base.code, max_new_tokens=64),
                   aggregator=replace(base.aggregator, max_new_tokens=32))


def test_a_short_real_run_completes_and_is_checkpointed(embedded, tmp_path):
    saver = open_checkpointer(str(tmp_path / "runs.sqlite"))
    graph = build_graph(model=embedded, checkpointer=saver, sampling=short_sampling(), max_repairs=0)
    config = {"configurable": {"thread_id": "real-1"}}
    out = graph.invoke({"task": "A pen costs 3 dollars. How much do 7 pens cost?"}, config)

    assert out["plan_source"] == "constrained"
    ids = [s["id"] for s in out["plan"]["steps"]]
    if any(r.get("applied") for r in out.get("replans") or []):
        # A revision numbers its steps after every earlier id (revise_steps), so the plan may pass id 8.
        assert ids == sorted(set(ids))
    else:
        Plan.model_validate(out["plan"])  # the planner's plan, unrevised: a valid Plan
    assert [r["step_id"] for r in out["results"] if r["step_id"] in ids] == ids
    assert out["final"].strip()
    for result in out["results"]:
        for call in result["calls"]:
            assert call["generated_tokens"] > 0 and call["prompt_tokens"] > 0
        if result["tool"] == "python":
            assert result["attempts"], "a python step ran its code through the sandbox"
    planner_calls = [c for c in out["calls"] if c["node"] == "planner"]
    assert len(planner_calls) == 1 and planner_calls[0]["generated_tokens"] <= 700
    saved = saver.get_tuple(config).checkpoint["channel_values"]
    assert saved["final"] == out["final"]


def test_ready_llm_prompts_go_through_one_generate_call(embedded, monkeypatch):
    model = embedded.llm.pipeline.model
    calls = []
    real_forward = model.forward

    def counting_forward(*args, **kwargs):
        calls.append(tuple(kwargs["input_ids"].shape))
        return real_forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", counting_forward)
    sampling = replace(SamplingConfig().llm_step, max_new_tokens=6, temperature=0.0)
    questions = ["Name a colour.", "Name a fruit.", "Name a country."]
    answers = invoke_batch(embedded, [[HumanMessage(q)] for q in questions], sampling, node="llm_step")
    assert calls[0][0] == 3 and calls[0][1] > 1  # one prefill of all three prompts
    assert all(width == 1 for _, width in calls[1:]) and 1 <= len(calls) <= 6  # then decode steps of them
    assert len(answers) == 3 and all(text.strip() for text, _ in answers)
    assert all(call.batch == 3 and 0 < call.generated_tokens <= 6 for _, call in answers)
