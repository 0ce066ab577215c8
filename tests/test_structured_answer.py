"""build_graph(response_format=...) and `hierplan run --schema`: the settled answer written as the caller's schema
by the structured_answer node, under the grammar where the model takes one, validated, asked again once, and a
failure recorded, never raised."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from fakes import FakeExecution, ScriptedChatModel, StructuredScriptedChatModel, scripted_runner
from hierplan import build_graph
from hierplan.cli.main import main
from hierplan.nodes import prompts

CONFIG = {"configurable": {"thread_id": "s1"}}
PRICE_TASK = "A pen costs $3. How much do 7 pens cost?"
PRICE = {"type": "object", "title": "Price",
         "properties": {"total": {"type": "number", "minimum": 0},
                        "currency": {"type": "string", "enum": ["USD", "EUR"]}},
         "required": ["total", "currency"]}
HAIKU_TASK = "Write a haiku about tea."
HAIKU = "steam over the cup\nleaves unfold in quiet heat\nthe kettle goes still"


class Poem(BaseModel):
    title: str = Field(max_length=40)
    lines: list[str] = Field(min_length=3, max_length=3)
    mood: str = Field(pattern="^(calm|sad|happy)$")


def price_run(replies, *, model_cls=StructuredScriptedChatModel, response_format=PRICE, **options):
    """A numeric task that asks one thing: one program, the checker's, the stated answer, then structured_answer."""
    model = model_cls(script={"python_step": ["print(7 * 3)"], "python_check": ["print(21)"],
                              "structured_answer": list(replies)})
    runner = scripted_runner([FakeExecution(True, "21\n"), FakeExecution(True, "21\n")])
    graph = build_graph(model, run_code=runner, response_format=response_format, **options)
    return model, graph, graph.invoke({"task": PRICE_TASK}, CONFIG)


def test_the_answer_as_a_json_schema_is_stored_under_the_grammar():
    model, graph, out = price_run(['{"total": 21, "currency": "USD"}'])
    assert out["structured_response"] == {"total": 21, "currency": "USD"}
    assert out["structured_check"] == {"ok": True, "schema": "Price", "attempts": 1, "errors": [],
                                       "method": "grammar", "error": None}
    assert "21" in out["final"]  # the text answer stays what it was
    [call] = [c for c in model.calls if c["node"] == "structured_answer"]
    # constrained to the schema itself (the class's JSON schema is the user's), greedy, shown the settled answer
    assert call["kwargs"]["response_format"].model_json_schema() == PRICE
    assert call["kwargs"]["temperature"] == 0.0
    assert json.dumps(PRICE) in call["messages"][0].content
    assert out["final"] in call["messages"][1].content and PRICE_TASK in call["messages"][1].content
    assert [c["node"] for c in out["calls"]][-1] == "structured_answer"
    assert graph.get_state(CONFIG).next == ()


def test_a_reply_that_does_not_validate_is_shown_its_error_and_asked_for_again():
    model, _, out = price_run(['{"total": "21 dollars", "currency": "USD"}', '{"total": 21, "currency": "USD"}'])
    assert out["structured_response"] == {"total": 21, "currency": "USD"}
    check = out["structured_check"]
    assert check["ok"] and check["attempts"] == 2
    assert check["errors"] == ["total: '21 dollars' is not of type 'number'"]
    retry = [c for c in model.calls if c["node"] == "structured_answer"][1]["messages"]
    assert retry[-2].content == '{"total": "21 dollars", "currency": "USD"}'
    assert retry[-1].content == prompts.STRUCTURED_RETRY.format(error=check["errors"][0])


def test_two_replies_that_do_not_validate_are_a_recorded_failure_and_the_run_ends_with_its_text_answer():
    model, graph, out = price_run(['{"total": -21, "currency": "USD"}', '{"total": 21, "currency": "dollars"}'])
    assert "structured_response" not in out
    check = out["structured_check"]
    assert not check["ok"] and check["attempts"] == 2
    assert check["errors"] == ["total: -21 is less than the minimum of 0",
                               "currency: 'dollars' is not one of ['USD', 'EUR']"]
    assert check["error"] == ("no reply fit the schema Price in 2 attempts; the last: "
                              "currency: 'dollars' is not one of ['USD', 'EUR']")
    assert "\n" not in check["error"]
    assert "21" in out["final"] and graph.get_state(CONFIG).next == ()
    assert model.count("structured_answer") == 2


def test_a_model_without_structured_output_answers_in_text_which_is_parsed():
    model, _, out = price_run(['Here it is:\n```json\n{"total": 21, "currency": "USD"}\n```'],
                              model_cls=ScriptedChatModel)
    assert out["structured_response"] == {"total": 21, "currency": "USD"}
    assert out["structured_check"]["method"] is None
    [call] = [c for c in model.calls if c["node"] == "structured_answer"]
    assert "response_format" not in call["kwargs"]


def test_no_json_at_all_is_one_line_too():
    _, _, out = price_run(["twenty-one dollars", "21 USD"], model_cls=ScriptedChatModel)
    assert out["structured_check"]["errors"] == ["no JSON object found in the model's reply"] * 2


def test_constrain_off_asks_in_text():
    model, _, out = price_run(['{"total": 21, "currency": "USD"}'], constrain=False)
    assert out["structured_response"] == {"total": 21, "currency": "USD"}
    assert out["structured_check"]["method"] is None


def test_a_writing_answer_as_a_pydantic_class_after_the_instruction_check():
    model = StructuredScriptedChatModel(script={
        "aggregator": [HAIKU],
        "structured_answer": ['{"title": "Tea", "lines": ["steam over the cup"], "mood": "calm"}',
                              json.dumps({"title": "Tea", "lines": HAIKU.splitlines(), "mood": "calm"})]})
    graph = build_graph(model, response_format=Poem)
    out = graph.invoke({"task": HAIKU_TASK}, CONFIG)
    assert out["final"] == HAIKU and out["instruction_check"]["ok"]
    assert Poem.model_validate(out["structured_response"]) == Poem(title="Tea", lines=HAIKU.splitlines(), mood="calm")
    assert out["structured_check"]["schema"] == "Poem"
    assert out["structured_check"]["errors"] == ["lines: List should have at least 3 items after validation, not 1"]
    nodes = [c["node"] for c in model.calls]
    assert nodes.index("aggregator") < nodes.index("structured_answer")


def test_the_aggregator_roles_model_writes_it():
    writer = StructuredScriptedChatModel(script={"structured_answer": ['{"total": 21, "currency": "USD"}']})
    worker = ScriptedChatModel(script={"python_step": ["print(21)"], "python_check": ["print(21)"]})
    runner = scripted_runner([FakeExecution(True, "21\n"), FakeExecution(True, "21\n")])
    graph = build_graph({"default": worker, "aggregator": writer}, run_code=runner, response_format=PRICE)
    assert graph.invoke({"task": PRICE_TASK}, CONFIG)["structured_response"] == {"total": 21, "currency": "USD"}
    assert writer.count("structured_answer") == 1 and worker.count("structured_answer") == 0


def test_a_rejected_plan_ends_without_a_structured_answer():
    from langgraph.types import Command

    model = StructuredScriptedChatModel()
    graph = build_graph(model, response_format=PRICE, approve=True,
                        run_code=scripted_runner([]))
    graph.invoke({"task": PRICE_TASK}, CONFIG)
    out = graph.invoke(Command(resume={"action": "reject"}), CONFIG)
    assert "structured_check" not in out and model.count("structured_answer") == 0


@pytest.mark.parametrize("bad, message", [
    ({"type": "array", "items": {"type": "number"}}, 'a JSON object ("type": "object" at its root), got "array"'),
    ({"type": "object", "properties": {"n": {"type": "numbr"}}}, "not a valid JSON Schema at properties/n/type"),
    ({"properties": {"n": {"type": "number"}}}, "got null"),
])
def test_a_schema_that_is_not_one_is_refused_when_the_graph_is_built(bad, message):
    with pytest.raises(ValueError, match="schema") as err:
        build_graph(None, checkpointer=False, response_format=bad)
    assert message in str(err.value)
    with pytest.raises(TypeError, match="pydantic class or a JSON Schema"):
        build_graph(None, checkpointer=False, response_format="Price")


def test_the_llamacpp_model_is_asked_for_the_schema_made_strict_and_its_reply_validated():
    """The embedded engine's path with a stand-in engine: the request carries the schema as llama.cpp's
    json_schema response_format (the grammar), every property required; the reply is validated as any other."""
    from hierplan.models.llamacpp.chat import ChatLlamaCpp

    requests = []

    class Engine:
        def chat(self, request):
            requests.append(request)
            reply = '{"total": 21, "currency": "USD"}' if "response_format" in request else "print(21)"
            return {"choices": [{"message": {"content": reply}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 7}}

        def stream(self, request, on_chunk):
            raise AssertionError("not streamed in this run")

    runner = scripted_runner([FakeExecution(True, "21\n"), FakeExecution(True, "21\n")])
    graph = build_graph(ChatLlamaCpp(engine=Engine()), run_code=runner, response_format=PRICE)
    out = graph.invoke({"task": PRICE_TASK}, CONFIG)
    assert out["structured_response"] == {"total": 21, "currency": "USD"}
    assert out["structured_check"]["method"] == "grammar"
    [asked] = [r for r in requests if "response_format" in r]
    sent = asked["response_format"]["json_schema"]
    assert sent["name"] == "Price" and asked["temperature"] == 0.0 and asked["max_tokens"] == 600
    assert sent["schema"]["required"] == ["total", "currency"] and sent["schema"]["additionalProperties"] is False
    assert sent["schema"]["properties"]["currency"]["enum"] == ["USD", "EUR"]


# --- the command line --------------------------------------------------------------------------------------------

@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "cli.sqlite")


def write(tmp_path, text, name="schema.json"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, message", [
    (None, "no such file"),
    ('{"type": "object",', "is not JSON: Expecting property name enclosed in double quotes (line 1, column 19)"),
    ('["total"]', "must be a pydantic class or a JSON Schema (a dict), got list"),
    ('{"type": "object", "required": "total"}', "not a valid JSON Schema at required"),
    ('{"type": "string"}', 'a JSON object ("type": "object" at its root)'),
])
def test_a_bad_schema_file_is_one_line_before_any_model_loads(models, db, tmp_path, capsys, text, message):
    path = str(tmp_path / "missing.json") if text is None else write(tmp_path, text)
    assert main(["run", PRICE_TASK, "--schema", path, "--db", db]) == 2
    err = capsys.readouterr().err
    assert f"schema file {path}" in err and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert models[1] == []  # no model was loaded
    assert main(["runs", "--json", "--db", db]) == 0 and json.loads(capsys.readouterr().out) == []


PROGRAMS = {"python_step": ["print(7 * 3)"], "python_check": ["print(21)"]}


def test_run_schema_prints_the_structured_answer_and_show_json_has_it(models, db, tmp_path, capsys):
    models[0].append({**PROGRAMS, "structured_answer": ['{"total": 21, "currency": "USD"}']})
    assert main(["run", PRICE_TASK, "--schema", write(tmp_path, json.dumps(PRICE)), "--db", db,
                 "--run-id", "s1"]) == 0
    out = capsys.readouterr().out
    assert out.index("Final answer") < out.index("Structured answer") < out.index('"total": 21')
    assert "Structured answer: valid against Price" in out
    assert main(["show", "s1", "--json", "--db", db]) == 0
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["structured_response"] == {"total": 21, "currency": "USD"}
    assert state["structured_check"]["ok"] is True
    assert main(["show", "s1", "--db", db]) == 0
    assert "Structured answer: valid against Price" in capsys.readouterr().out


def test_run_schema_json_events_and_a_failure_shown_in_one_line(models, db, tmp_path, capsys):
    models[0].append({**PROGRAMS, "structured_answer": ["{}", "{}"]})
    assert main(["run", PRICE_TASK, "--schema", write(tmp_path, json.dumps(PRICE)), "--json", "--db", db,
                 "--run-id", "s2"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    [event] = [e for e in events if e["event"] == "structured_response"]
    assert event["structured_response"] is None and event["check"]["ok"] is False
    assert events[-1]["event"] == "run_finished" and events[-1]["status"] == "done"
    assert main(["show", "s2", "--db", db]) == 0
    assert ("Structured answer: none (no reply fit the schema Price in 2 attempts; the last: 'total' is a "
            "required property)") in " ".join(capsys.readouterr().out.split())


def test_a_resumed_run_keeps_its_schema_though_the_file_changed(models, db, tmp_path, capsys):
    path = write(tmp_path, json.dumps(PRICE))
    models[0].append({**PROGRAMS, "structured_answer": [RuntimeError("the model server went away")]})
    assert main(["run", PRICE_TASK, "--schema", path, "--db", db, "--run-id", "s3"]) == 1
    assert "the model server went away" in capsys.readouterr().err
    write(tmp_path, "not JSON any more")
    models[0].append({"structured_answer": ['{"total": 21, "currency": "EUR"}']})
    assert main(["resume", "s3", "--db", db]) == 0
    assert "Structured answer: valid against Price" in capsys.readouterr().out
    assert main(["show", "s3", "--json", "--db", db]) == 0
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["structured_response"] == {"total": 21, "currency": "EUR"}
    assert [c["node"] for c in models[1][1].calls] == ["structured_answer"]  # nothing before it ran again


def test_a_run_without_schema_has_none(models, db, capsys):
    models[0].append(dict(PROGRAMS))
    assert main(["run", PRICE_TASK, "--db", db, "--run-id", "s4"]) == 0
    assert "Structured answer" not in capsys.readouterr().out
    assert main(["show", "s4", "--json", "--db", db]) == 0
    assert "structured_response" not in json.loads(capsys.readouterr().out)["state"]


# --- LangGraph Server's factory ----------------------------------------------------------------------------------

def test_the_server_factory_takes_a_response_format_from_the_configurable_or_context(monkeypatch):
    from hierplan.server import factory

    monkeypatch.setattr(factory, "_models", {})
    monkeypatch.setattr(factory, "_graphs", {})
    monkeypatch.delenv(factory.DEFAULTS_ENV, raising=False)
    assert factory.response_format_from({"configurable": {"response_format": PRICE}}) == PRICE
    assert factory.response_format_from({"configurable": {}}, {"response_format": PRICE}) == PRICE
    assert factory.response_format_from({"configurable": {"thread_id": "t"}}) is None
    with pytest.raises(factory.OptionError, match="response_format: .*JSON object") as err:
        factory.response_format_from({"configurable": {"response_format": {"type": "array"}}})
    assert isinstance(err.value, ValueError)  # shown to the client

    loads = []

    def load(options):
        loads.append(options)
        return StructuredScriptedChatModel(script={**PROGRAMS, "structured_answer": ['{"total": 21, "currency": "USD"}']})

    with_schema = factory.graph_for(factory.RunOptions(), load, PRICE)
    without = factory.graph_for(factory.RunOptions(), load)
    assert "structured_answer" in with_schema.nodes and "structured_answer" not in without.nodes
    assert len(loads) == 1  # one model, two graphs
    reading = factory.graph_for(factory.RunOptions(), None, PRICE)
    assert "structured_answer" in reading.get_graph().nodes
