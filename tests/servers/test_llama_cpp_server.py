"""Against llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) on the embedded GGUF: plans constrained
on the server are valid on the first pass, and its errors are one clear line. Opt-in: `make test-servers` builds
the server once and runs these (marker ``servers``, left out of the default run)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from hierplan.config import SamplingConfig
from hierplan.errors import RemoteModelError
from hierplan.models import load_chat_model
from hierplan.models.resolve import embedded_gguf
from hierplan.nodes import prompts
from hierplan.nodes.model_call import call_seed
from hierplan.nodes.planner import example_turns, make_planner
from hierplan.schema import DraftPlan, Plan
from needs import unavailable
from servers import launch

pytestmark = [pytest.mark.servers, pytest.mark.real_model, pytest.mark.slow]

# shared/ lies beside the checkout (in CI too); HIERPLAN_DEV_TASKS points elsewhere.
DEV_TASKS = Path(os.environ.get("HIERPLAN_DEV_TASKS")
                 or Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "gsm8k_dev100.jsonl")
PLAN_TASKS = 5
SEED = 7
SECRET = "sk-test-llama-00112233445566"
SERVER_ONLY_TYPES = ("json_object", "tool_calling")


@pytest.fixture(autouse=True)
def _openai_env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", "HIERPLAN_STRUCTURED",
                 "HIERPLAN_REMOTE_TIMEOUT", "HIERPLAN_REMOTE_REPETITION_PENALTY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def llama_python() -> Path:
    python = launch.llama_python()
    if python is None:
        unavailable("llama.cpp's server is not built: `make test-servers` builds llama-cpp-python[server] once "
                    f"into {launch.DEFAULT_LLAMA_VENV} (or ${launch.LLAMA_VENV_ENV})")
    return python


@pytest.fixture(scope="module")
def server(llama_python, tmp_path_factory):
    running = launch.llama_server(llama_python, embedded_gguf(), tmp_path_factory.mktemp("llama"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def dev_tasks() -> list[str]:
    if not DEV_TASKS.is_file():
        unavailable(f"the dev tasks file {DEV_TASKS} is missing (set HIERPLAN_DEV_TASKS)")
    lines = [line for line in DEV_TASKS.read_text().splitlines() if line.strip()]
    return [json.loads(line)["question"] for line in lines[:PLAN_TASKS]]


def remote(server, **kwargs):
    return load_chat_model(f"openai:{server.model}", base_url=server.base_url, **kwargs)


def planner_messages(task: str) -> list:
    return [SystemMessage(prompts.PLANNER_SYSTEM), *example_turns(),
            HumanMessage(prompts.PLANNER_USER.format(task=task))]


def test_the_probe_finds_a_format_the_server_applies(server):
    method = remote(server).structured_method()
    assert method in SERVER_ONLY_TYPES  # llama.cpp answers json_schema with HTTP 500


@pytest.mark.parametrize("method", SERVER_ONLY_TYPES)
def test_structured_plans_are_valid_on_the_first_pass(server, dev_tasks, method):
    chat = remote(server, structured=method)
    sampling = SamplingConfig(seed=SEED).planner
    structured = chat.with_structured_output(DraftPlan, include_raw=True)
    for task in dev_tasks:
        out = structured.invoke(planner_messages(task), temperature=sampling.temperature, top_p=sampling.top_p,
                                max_tokens=sampling.max_new_tokens, seed=call_seed(SEED, "planner", "structured"))
        assert out["parsing_error"] is None and isinstance(out["parsed"], DraftPlan), (task, out["raw"])
        Plan.model_validate(out["parsed"].model_dump())
        raw = out["raw"]
        assert raw.response_metadata["hierplan_structured"] == method
        assert raw.usage_metadata["output_tokens"] > 20 and raw.usage_metadata["input_tokens"] > 100


def test_the_planner_plans_on_the_server_first_time(server, dev_tasks):
    """The planner node through the model contract: every plan is the server-constrained first attempt."""
    chat = remote(server)
    planner = make_planner(chat, SamplingConfig(seed=SEED))
    for task in dev_tasks:
        out = planner({"task": task})
        assert out["plan_source"] in SERVER_ONLY_TYPES and out["plan_failures"] == [], (task, out)
        Plan.model_validate(out["plan"])
        assert all(c["generated_tokens"] and c["prompt_tokens"] for c in out["calls"])


def test_sampling_fields_reach_the_server(server, monkeypatch):
    monkeypatch.setenv("HIERPLAN_REMOTE_REPETITION_PENALTY", "repeat_penalty")
    chat = remote(server)
    ask = [HumanMessage("Write a poem about the sea.")]
    # The seed is accepted, but llama-cpp-python 0.3.36 does not reproduce a sampled answer from it (two calls
    # with seed 11 at temperature 1 part after about 50 characters), so only acceptance is checked here.
    first = chat.invoke(ask, temperature=1.0, top_p=1.0, max_tokens=24, repetition_penalty=1.1, seed=11)
    assert first.usage_metadata["output_tokens"] == 24  # max_tokens, not max_completion_tokens, is honoured

    # llama-cpp-python 0.3.36 sends no usage in streams (it ignores stream_options): the text still streams.
    chunks = list(chat.stream(ask, temperature=0, max_tokens=12))
    assert len([c for c in chunks if c.content]) >= 2


def test_a_format_the_server_refuses_is_one_line(server):
    chat = remote(server, structured="json_schema")
    with pytest.raises(RemoteModelError) as caught:
        chat.with_structured_output(DraftPlan, include_raw=True).invoke(planner_messages("Add 2 and 3."))
    assert caught.value.status == 500 and "\n" not in str(caught.value)


def test_a_wrong_key_is_one_line_without_the_key(llama_python, tmp_path, monkeypatch):
    server = launch.llama_server(llama_python, embedded_gguf(), tmp_path, api_key="the-right-key")
    try:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        with pytest.raises(RemoteModelError) as caught:
            remote(server).invoke("hi", max_tokens=2)
        assert caught.value.status == 401 and "OPENAI_API_KEY" in str(caught.value)
        assert SECRET not in str(caught.value) and "\n" not in str(caught.value)
        assert remote(server, api_key="the-right-key").invoke("hi", max_tokens=2).usage_metadata["output_tokens"]
    finally:
        server.stop()
