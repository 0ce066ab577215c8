"""The llama.cpp engine and its chat model, on the embedded 135M GGUF (real weights: marked)."""

from __future__ import annotations

import functools
import operator
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from types import SimpleNamespace

import pytest
import xllamacpp
from langchain_core.messages import HumanMessage, SystemMessage

from hierplan.models import load_chat_model
from hierplan.models.llamacpp.chat import ChatLlamaCpp
from hierplan.models.llamacpp import engine as engine_module
from hierplan.models.llamacpp.engine import EngineError, concurrency, cpu_only
from hierplan.schema import DraftPlan

pytestmark = pytest.mark.real_model

ASK = [SystemMessage("You are a helpful assistant."), HumanMessage("Name three colours.")]


@pytest.fixture(scope="module")
def chat():
    return load_chat_model("smollm2-135m")


def test_one_engine_per_process(chat):
    again = load_chat_model("smollm2-135m", max_new_tokens=64)
    assert again.engine is chat.engine and again.max_tokens == 64
    info = chat.metadata["hierplan_model"]
    assert (info["engine"], info["quantization"], info["device"]) == ("llama.cpp", "Q4_1", "cpu")
    assert chat.engine.address.startswith("127.0.0.1:") or "127.0.0.1" in chat.engine.address


def test_greedy_is_deterministic_and_counts_tokens(chat):
    first = chat.invoke(ASK, temperature=0, max_tokens=24)
    second = chat.invoke(ASK, temperature=0, max_tokens=24)
    assert first.content and first.content == second.content
    usage = first.usage_metadata
    assert usage["input_tokens"] > 10 and 0 < usage["output_tokens"] <= 24
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_max_tokens_ends_with_length(chat):
    message = chat.invoke([HumanMessage("Write a long story about a dragon.")], temperature=0, max_tokens=5)
    assert message.usage_metadata["output_tokens"] == 5
    assert message.response_metadata["finish_reason"] == "length"


def test_min_tokens_equal_to_max_tokens_fixes_the_length(chat):
    message = chat.invoke(ASK, temperature=0, max_tokens=40, min_tokens=40)
    assert message.usage_metadata["output_tokens"] == 40
    with pytest.raises(TypeError, match="only equal to max_tokens"):
        chat.invoke(ASK, max_tokens=40, min_tokens=10)


def test_a_seed_reproduces_a_sample(chat):
    draws = [chat.invoke(ASK, temperature=1.2, top_p=1.0, max_tokens=24, seed=seed).content for seed in (5, 5, 6, 7)]
    assert draws[0] == draws[1]
    assert len(set(draws)) > 1


def test_stream_gives_the_text_of_invoke(chat):
    chunks = list(chat.stream(ASK, temperature=0, max_tokens=24))
    whole = chat.invoke(ASK, temperature=0, max_tokens=24)
    assert len(chunks) > 3 and "".join(c.content for c in chunks) == whole.content
    merged = functools.reduce(operator.add, chunks)
    assert merged.usage_metadata["output_tokens"] == whole.usage_metadata["output_tokens"]


def test_batch_answers_each_input(chat):
    asks = [[HumanMessage(f"Repeat the word {word}.")] for word in ("apple", "river", "stone")]
    answers = chat.batch(asks, temperature=0, max_tokens=12)
    assert [a.content for a in answers] == [chat.invoke(ask, temperature=0, max_tokens=12).content for ask in asks]


def test_structured_output_is_constrained_by_the_grammar(chat):
    runnable = chat.with_structured_output(DraftPlan, include_raw=True)
    out = runnable.invoke([HumanMessage("Plan how to bake bread. Answer with a JSON plan.")],
                          temperature=0.2, max_tokens=1500, seed=3)
    assert out["raw"].response_metadata["hierplan_structured"] == "grammar"
    assert out["parsing_error"] is None and isinstance(out["parsed"], DraftPlan)
    assert [s.id for s in out["parsed"].steps] == list(range(1, len(out["parsed"].steps) + 1))


def test_the_plan_schema_is_fitted_to_each_calls_max_tokens(chat):
    """llama.cpp cannot close the JSON when max_tokens runs out: a plan schema allowing more steps than fit
    would be cut off, invalid. The schema goes per call, fitted to that call's budget, as to a server."""
    from hierplan.models.remote.structured import server_schema

    sent = []

    class Recorder:
        def chat(self, request):
            sent.append(request)
            return chat.engine.chat(request)

    recorded = ChatLlamaCpp(engine=Recorder())
    runnable = recorded.with_structured_output(DraftPlan, include_raw=True)
    for budget in (650, 3000):
        runnable.invoke([HumanMessage("Plan how to bake bread. Answer with a JSON plan.")], temperature=0,
                        max_tokens=budget)
    small, large = (r["response_format"]["json_schema"]["schema"] for r in sent)
    assert small == server_schema(DraftPlan, budget=650) and large == server_schema(DraftPlan, budget=3000)
    assert len(small["properties"]["steps"]["anyOf"]) < len(large["properties"]["steps"]["anyOf"])


def test_a_refused_request_is_an_engine_error(chat):
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "no-such-type"}}}
    with pytest.raises(EngineError, match="llama.cpp failed a request"):
        chat.invoke(ASK, response_format=bad, max_tokens=8)
    assert chat.invoke(ASK, temperature=0, max_tokens=4).content  # the engine still serves


def test_on_a_cpu_requests_take_turns_and_find_their_prompt_cached(chat):
    # Side by side, each request would land on its own slot and prefill the whole prompt (cached 0).
    if not cpu_only(xllamacpp.get_device_info()):
        pytest.skip("llama.cpp sees a GPU: requests run side by side there")
    assert chat.engine.concurrent == 1
    prompt = [SystemMessage(f"You are assistant {uuid.uuid4()}. " + "Answer in one word. " * 40),
              HumanMessage("Name a colour.")]
    replies = chat.batch([prompt, prompt], temperature=0, max_tokens=4)  # sent at once
    later = max(replies, key=lambda m: m.response_metadata["cached_tokens"] or 0)
    assert later.response_metadata["cached_tokens"] >= later.usage_metadata["input_tokens"] - 8


def test_requests_run_side_by_side_only_with_a_gpu_or_when_asked(monkeypatch):
    cpu = {"name": "CPU", "type": SimpleNamespace(name="GGML_BACKEND_DEVICE_TYPE_CPU")}
    gpu = {"name": "CUDA0", "type": SimpleNamespace(name="GGML_BACKEND_DEVICE_TYPE_GPU")}
    amx = {"name": "AMX", "type": SimpleNamespace(name="GGML_BACKEND_DEVICE_TYPE_ACCEL")}
    assert cpu_only([cpu]) and cpu_only([cpu, amx]) and not cpu_only([cpu, gpu])
    assert (concurrency(4, None, [cpu, amx]), concurrency(4, None, [cpu, gpu])) == (1, 4)
    assert (concurrency(4, 3, [cpu]), concurrency(4, 9, [cpu]), concurrency(4, 0, [cpu, gpu])) == (3, 4, 1)
    seen = {}
    monkeypatch.setattr(engine_module, "LlamaCppEngine", lambda path, **kw: seen.update(kw))
    monkeypatch.setenv(engine_module.CONCURRENT_ENV, "3")
    engine_module._load_engine("model.gguf")
    assert seen["concurrent"] == 3


def test_unknown_call_options_are_refused(chat):
    with pytest.raises(TypeError, match="does not take"):
        chat.invoke(ASK, grammar="start: 'x'")


class FlakyEngine:
    """The real engine, failing its first request for the final answer (streamed or not) as llama.cpp fails one."""

    def __init__(self, engine):
        self.engine, self.failed = engine, False
        self.path, self.threads, self.slots = engine.path, engine.threads, engine.slots

    def _maybe_fail(self, request):
        from hierplan.nodes import prompts

        system = request["messages"][0]["content"]
        if not self.failed and system in (prompts.AGGREGATOR_SYSTEM, prompts.AGGREGATOR_WRITING_SYSTEM,
                                             prompts.PLAIN_SYSTEM):  # a piece's draft is asked plainly
            self.failed = True
            raise EngineError("llama.cpp failed a request (500 server_error): simulated")

    def chat(self, request):
        self._maybe_fail(request)
        return self.engine.chat(request)

    def stream(self, request, on_chunk):
        self._maybe_fail(request)
        return self.engine.stream(request, on_chunk)


def test_an_engine_failure_mid_run_fails_it_and_resume_continues(chat):
    from langgraph.checkpoint.memory import InMemorySaver

    from hierplan.config import SamplingConfig
    from hierplan.graph.builder import build_graph

    flaky = ChatLlamaCpp(engine=FlakyEngine(chat.engine), model_id="flaky", max_tokens=96)
    graph = build_graph(flaky, InMemorySaver(), sampling=SamplingConfig(seed=1).with_overrides(max_new_tokens=96),
                        max_replans=0)
    config = {"configurable": {"thread_id": "flaky"}, "recursion_limit": 64}
    with pytest.raises(EngineError):  # streamed, as a watched run's answer is
        for _ in graph.stream({"task": "Write two short tips for staying focused."}, config, stream_mode="messages"):
            pass
    assert flaky.engine.failed
    stopped = graph.get_state(config).values
    assert stopped["plan"] and len(stopped["results"]) == len(stopped["plan"]["steps"]) and not stopped.get("final")
    out = graph.invoke(None, config)
    assert out["final"] and out["results"] == stopped["results"]  # only the answer was written again


def test_nothing_outlives_a_killed_process(tmp_path):
    script = textwrap.dedent("""
        import sys
        from hierplan.models import load_chat_model
        chat = load_chat_model("smollm2-135m")
        print(chat.engine.address, flush=True)
        chat.invoke("hello", max_tokens=2)
        print("ready", flush=True)
        sys.stdin.read()
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        address = child.stdout.readline().strip()
        assert child.stdout.readline().strip() == "ready"
        host, port = address.removeprefix("http://").rsplit(":", 1)
        assert host == "127.0.0.1"
        socket.create_connection((host, int(port)), timeout=5).close()  # listening, on loopback only
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        deadline = time.monotonic() + 5
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
            except OSError:
                break
            assert time.monotonic() < deadline, "the engine's listener outlived its process"
            time.sleep(0.1)
        left = subprocess.run(["pgrep", "-s", str(child.pid)], capture_output=True, text=True).stdout.split()
        assert left == [], f"processes left in the killed process's session: {left}"
    finally:
        if child.poll() is None:
            child.kill()


def test_a_draft_model_decodes_the_same_greedy_text(chat):
    # speculative decoding (off by default, bench/speculative.py): the 135M model drafts for itself here, so
    # every drafted token is accepted and the greedy text must not change
    from hierplan.models.llamacpp.engine import LlamaCppEngine

    drafted = LlamaCppEngine(chat.engine.path, slots=1, draft=chat.engine.path)
    request = {"messages": [{"role": "user", "content": "Count from one to ten in words."}], "max_tokens": 32,
               "temperature": 0}
    with_draft = drafted.chat(request)
    assert with_draft["timings"]["draft_n"] > 0 and with_draft["timings"]["draft_n_accepted"] > 0
    assert with_draft["choices"][0]["message"]["content"] == chat.engine.chat(request)["choices"][0]["message"]["content"]


def test_the_model_doorway_streams_a_batch_labelled_by_step(chat):
    from helpers import doorway_streams

    tokens = doorway_streams(chat)
    assert sum(1 for e in tokens if e["step_id"] == 1) > 2  # token by token
