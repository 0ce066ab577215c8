"""Ending free text that loops (hierplan/models/repeated_lines.py): which texts count as a loop, the row's
stop, and which nodes ask for it."""

from __future__ import annotations

from typing import ClassVar

from hierplan.config import REPEATED_LINE_LIMIT
from hierplan.models.repeated_lines import looping
from hierplan.models.rows import Row, record

LINE = "There are 35 girls with short hair."


def test_one_line_written_a_third_time_in_a_row_is_a_loop():
    assert not looping(["Some answer first.", LINE, LINE], 3)
    assert looping(["Some answer first.", LINE, LINE, LINE], 3)


def test_a_cycle_of_lines_that_differ_only_in_numbers_is_a_loop():
    cycle = []
    for n in range(2, 5):
        cycle += [f"Step {n}: Implement a single planner agent.", "Expected output: one planner agent."]
    assert looping(cycle[:-1], 3)  # "Step 4" is "Step 2" and "Step 3" again, with only old lines between
    assert not looping(cycle[:-2], 3)  # every line twice so far


def test_a_refrain_between_new_verses_goes_on():
    chorus = ["Ship it, ship it, ship it this week", "the routes and the stock in sync"]
    song = chorus + ["first verse about the routing agent"] + chorus + ["second verse about the inventory"] + chorus
    assert not looping(song, 3)
    assert looping(song + chorus, 3)  # once nothing new comes between two returns, it is a loop


def test_short_lines_are_not_counted():
    assert not looping(["---", "---", "---", "- [ ]", "- [ ]", "- [ ]"], 3)
    assert not looping(["", "", ""], 3)


def test_a_row_ends_with_finish_repetition_when_its_stop_test_says_so():
    row = Row(ids=[1], max_new_tokens=50, stop_when=lambda generated: len(generated) == 4)
    for token in range(10):
        record(row, token, stop_ids={99})
        if row.finish:
            break
    assert row.finish == "repetition" and row.generated == [0, 1, 2, 3]
    row = Row(ids=[1], max_new_tokens=50, min_new_tokens=6, stop_when=lambda generated: True)
    for token in range(10):
        record(row, token, stop_ids={99})
        if row.finish:
            break
    assert row.finish == "repetition" and len(row.generated) == 6  # min_new_tokens first (equal-length benches)


def test_free_text_nodes_ask_a_model_that_can_stop_loops_and_no_other():
    from hierplan.graph.builder import build_graph
    from tests.fakes import ScriptedChatModel, plan_json

    class Stopping(ScriptedChatModel):
        stops_repeated_lines: ClassVar[bool] = True

    for model, expected in ((Stopping(), REPEATED_LINE_LIMIT), (ScriptedChatModel(), None)):
        model.script = {"planner": [plan_json(["llm", "python", "llm"])], "python_step": ["```python\nprint(2)\n```"]}
        build_graph(model).invoke({"task": "Write something and print 2."}, {"configurable": {"thread_id": "t"}})
        asked = {c["node"]: c["kwargs"].get("stop_repeated_lines") for c in model.calls}
        assert asked == {"planner": None, "llm_step": expected, "python_step": None, "aggregator": expected}


def test_the_finish_reason_is_recorded_on_the_call_and_shown_with_the_step():
    import io

    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    from hierplan.cli.output import HumanReporter
    from hierplan.config import SamplingConfig
    from hierplan.nodes.llm_step import make_llm_step
    from tests.fakes import ScriptedChatModel

    class Looping(ScriptedChatModel):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            message = AIMessage(f"{LINE}\n" * 3, response_metadata={"finish_reason": "repetition"})
            return ChatResult(generations=[ChatGeneration(message=message)])

    step = {"id": 1, "title": "Count", "instruction": "Count them.", "tool": "llm", "expected_output": "a number"}
    plan = {"goal": "g", "assumptions": [], "steps": [step]}
    result = make_llm_step(Looping(), SamplingConfig())({"task": "t", "plan": plan, "results": [],
                                                         "steps": [step]})["results"][0]
    assert [c["finish_reason"] for c in result["calls"]] == ["repetition"]
    out = io.StringIO()
    reporter = HumanReporter(out)
    reporter.update("llm_step", {"results": [result]})
    reporter.close()
    assert "ended where it began to repeat itself" in out.getvalue()


def test_a_phrase_repeated_back_to_back_inside_one_line_is_a_loop():
    from hierplan.models.repeated_lines import MIN_PERIOD_TOKENS, repeated_tail

    phrase = list(range(100, 100 + 11))
    start = [1, 2, 3, 4, 5]
    assert not repeated_tail(start + phrase * 2, 3)
    assert repeated_tail(start + phrase * 3, 3)
    assert not repeated_tail(start + phrase * 3 + [7], 3)  # the next token breaks the cycle (until it is one)
    short = list(range(MIN_PERIOD_TOKENS - 1))
    assert not repeated_tail(start + short * 3, 3)  # "no, no, no": too short to be a loop
    assert repeated_tail(start + short * 6, 3)  # ... until it has gone on long enough: two copies make a run
    assert not repeated_tail(list(range(60)), 3)
