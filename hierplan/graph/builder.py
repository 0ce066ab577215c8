"""The graph, wired top to bottom. Every node that calls a model or changes the answer is here, with its edges:

memory -> classify -> (writing: read_requirements) -> (planner | whole_task_plan) -> tool_choice -> (approval) ->
  scheduler -> (python_step | llm_step | tool_step | replanner)* ->   (with approve_tools a tool's step is tool_step,
  which writes the call, -> approve_tool, which waits for a person, -> tool_step, which calls it)
  a number the checker can check: checker <-> vote -> stated_answer (with ``explain``, or the working or a form
    asked: aggregator) -> answer_check (-> check_instructions, when the task states a form)
  anything else: aggregator -> (numeric: answer_check | writing: check_instructions <-> (reviser | plain_answer))
and, in a graph built with a response_format, the settled answer as that schema: -> structured_answer -> end
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Collection, Literal, Mapping, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import Send

from hierplan.config import RECURSION_LIMIT, SamplingConfig
from hierplan.graph.state import AgentState, InputState, LlmStepsPayload, StepPayload
from hierplan.nodes.aggregator import after_aggregator, make_aggregator
from hierplan.nodes.answer_check import after_answer_check, answer_check
from hierplan.nodes.approval import after_approval, make_approval
from hierplan.nodes.checker import make_checker
from hierplan.nodes.classify import make_classify
from hierplan.nodes.context import file_names, ready_steps
from hierplan.nodes.llm_step import make_llm_step
from hierplan.nodes.memory import memory
from hierplan.nodes.planner import make_planner, whole_task_planner
from hierplan.nodes.read_requirements import make_after_requirements, make_read_requirements
from hierplan.nodes.python_step import CodeRunner, make_python_step, run_alone, sandbox_runner
from hierplan.nodes.replanner import make_replanner, unhandled_failure
from hierplan.nodes.stated_answer import stated_answer
from hierplan.nodes.structured_answer import make_structured_answer
from hierplan.nodes.revise import after_instruction_check, check_instructions, make_plain_answer, make_reviser
from hierplan.nodes.tool_approval import kept_call, make_approve_tool
from hierplan.nodes.tool_choice import after_tool_choice, make_tool_choice
from hierplan.nodes.tool_step import make_tool_step
from hierplan.nodes.vote import after_vote, computed_step, data_question, vote
from hierplan.options import RunOptions, run_options
from hierplan.roles import node_models
from hierplan.rules.kind import NUMERIC, WRITING
from hierplan.rules.plan import planned_by_rule
from hierplan.schema import check_response_format
from hierplan.store.files import FileStore, process_store
from hierplan.tools.registered import check_tools
from hierplan.tracing import callbacks, traced_runner

# "sync" writes each step's checkpoint before the next step starts, which is what makes resume lose nothing.
# LangGraph takes it as an invoke/stream argument; build_graph binds it (Runnable.bind) as the default.
DURABILITY = "sync"

ChatModels = BaseChatModel | Mapping[str, BaseChatModel] | None
"""What build_graph and wire take as ``model``: one chat model, one per role (hierplan.roles), or None."""


def make_after_classify(registered: Collection[str] = ()):
    """The router after classify, for a graph with these registered tools' names."""
    names = tuple(registered)

    def after_classify(state: AgentState) -> Literal["read_requirements", "planner", "whole_task_plan"]:
        """A writing task's requirements are read first; a question one program answers is planned by rule
        (rules.plan rule 1a), any other numeric task by the model."""
        if state["kind"] == WRITING:
            return "read_requirements"
        if planned_by_rule(state["kind"], state["task"], file_names(state), names):
            return "whole_task_plan"
        return "planner"

    return after_classify


def make_dispatch(registered: Collection[str] = ()):
    """The scheduler's router for a graph with these registered tools' names."""
    names = frozenset(registered)

    def dispatch(state: AgentState, runtime: Runtime[RunOptions]
                 ) -> list[Send] | Literal["replanner", "checker", "aggregator"]:
        """A failed step first goes to the replanner (at most max_replans times); then every ready step is sent on
        its way (only the first one when not parallel): a Python step to python_step, a registered tool's step to
        tool_step, LLM (and "none") steps together to llm_step, so they are generated in one batched pass. When
        none is left, a numeric task's computed number goes to the checker and the vote, anything else to the
        aggregator, a number computed in a run that called a registered tool included: the checker solves the
        task from its words alone and cannot know what the tool returned.
        """
        options = run_options(runtime.context)
        if (len(state.get("replans") or []) < options.max_replans and unhandled_failure(state)
                and not data_question(state)):  # a data question's failed program goes to the checker instead
            return "replanner"
        ready = ready_steps(state)
        if not ready:
            used_tools = any(r.get("tool") in names for r in state.get("results") or [])
            # the checker solves the task from its words (and the user's files, for a question about them: a plan
            # the model wrote for them makes a deliverable with parts, which the aggregator writes up); it cannot
            # know what a tool returned
            checkable = (state["kind"] == NUMERIC and not used_tools and computed_step(state) is not None
                         and (not state.get("files") or data_question(state)))
            return "checker" if checkable else "aggregator"
        if not options.parallel:
            ready = ready[:1]
        base = {"task": state["task"], "kind": state["kind"], "plan": state["plan"],
                "results": state.get("results") or [], **({"files": state["files"]} if state.get("files") else {}),
                **({"conversation": state["conversation"]} if state.get("conversation") else {})}
        sends, llm = [], []
        for step in ready:
            if step["tool"] == "python":
                sends.append(Send("python_step", StepPayload(**base, step=step)))
            elif step["tool"] in ("llm", "none"):
                llm.append(step)
            elif step["tool"] in names:
                sends.append(_tool_send(state, StepPayload(**base, step=step)))
            else:
                raise ValueError(f"unknown tool {step['tool']!r} in step {step['id']}")
        if llm:
            sends.append(Send("llm_step", LlmStepsPayload(**base, steps=llm)))
        return sends

    return dispatch


dispatch = make_dispatch()


def _tool_send(state: AgentState, payload: StepPayload) -> Send:
    """A registered tool's step: to tool_step, which writes the call's arguments and calls it (with approve_tools
    it only writes them, kept in ``tool_calls``); a kept call that waits for a person's decision to approve_tool;
    one a person approved or edited back to tool_step, which calls it as decided."""
    call = kept_call(state.get("tool_calls"), payload["step"])
    decision = call.get("decision") if call is not None else None
    if call is not None and decision is None:
        return Send("approve_tool", StepPayload(**payload, call=call))
    if decision in ("approved", "edited"):
        return Send("tool_step", StepPayload(**payload, call=call))
    # none kept, or a rejected one whose step runs again (a revision of the same step): written anew
    return Send("tool_step", payload)


def revise_or_structure(state: AgentState) -> Literal["reviser", "plain_answer", "structured_answer"]:
    """check_instructions' router in a graph with a response_format: where the answer would end the run
    (after_instruction_check), it goes on to be written as the schema."""
    route = after_instruction_check(state)
    return "structured_answer" if route == END else route


def form_or_structure(state: AgentState) -> Literal["check_instructions", "structured_answer"]:
    """answer_check's router in a graph with a response_format: where the answer would end the run
    (after_answer_check), it goes on to be written as the schema."""
    return "check_instructions" if after_answer_check(state) == "check_instructions" else "structured_answer"


def scheduler(state: AgentState) -> AgentState:
    """A join point: parallel steps land here once per superstep, and dispatch runs once after them."""
    return {}


def wire(model: ChatModels, *, sampling: SamplingConfig | None = None, run_code: CodeRunner | None = None,
         tools: Sequence[BaseTool] = (), file_store: FileStore | None = None,
         response_format: Any = None) -> StateGraph:
    """The uncompiled graph. Nodes hold their role's model (``model``: one chat model, or one per role as
    ``build_graph`` takes them; hierplan.roles) and the registered tools, and only call them when they run;
    per-run options arrive as the run's context (RunOptions). The Python steps and the checker read the run's
    files from ``file_store`` and keep what a step saves there (default: this process's temporary store); their
    programs run in the sandbox over it unless ``run_code`` is given. With ``response_format`` the settled answer
    goes on to structured_answer, which writes it as that schema; without it the graph ends where the answer does."""
    base = sampling or SamplingConfig()
    file_store = file_store or process_store()
    # every sandbox run is a tool run of its node's, for whatever tracer the run has (hierplan.tracing)
    runner = traced_runner(run_code or sandbox_runner(file_store))
    tools = check_tools(tools)
    names = [t.name for t in tools]
    of = node_models(model)  # each node gets its role's model (hierplan.roles.NODES)
    graph = StateGraph(AgentState, input_schema=InputState, context_schema=RunOptions)
    graph.add_node("memory", memory)
    graph.add_node("classify", make_classify(bool(tools)))
    graph.add_node("read_requirements", make_read_requirements(of["read_requirements"], base))
    graph.add_node("planner", make_planner(of["planner"], base, tools))
    graph.add_node("whole_task_plan", whole_task_planner)
    graph.add_node("tool_choice", make_tool_choice({t.name: t.description or "" for t in tools}))
    graph.add_node("approval", make_approval(tools))
    graph.add_node("scheduler", scheduler)
    graph.add_node("python_step", make_python_step(of["python_step"], base, runner, file_store))
    graph.add_node("llm_step", make_llm_step(of["llm_step"], base))
    graph.add_node("tool_step", make_tool_step(of["tool_step"], base, tools))
    graph.add_node("approve_tool", make_approve_tool(tools))
    graph.add_node("replanner", make_replanner(of["replanner"], base, tools))
    graph.add_node("checker", make_checker(of["checker"], base,
                                           lambda code, files: run_alone(code, runner, files, file_store)))
    graph.add_node("vote", vote)
    graph.add_node("stated_answer", stated_answer)
    graph.add_node("aggregator", make_aggregator(of["aggregator"], base))
    graph.add_node("answer_check", answer_check)
    graph.add_node("check_instructions", check_instructions)
    graph.add_node("reviser", make_reviser(of["reviser"], base))
    graph.add_node("plain_answer", make_plain_answer(of["plain_answer"], base))
    settled = END  # where a run goes once its answer is settled
    if response_format is not None:
        graph.add_node("structured_answer", make_structured_answer(of["structured_answer"], base, response_format))
        settled = "structured_answer"

    graph.add_edge(START, "memory")
    graph.add_edge("memory", "classify")
    graph.add_conditional_edges("classify", make_after_classify(names),
                                ["read_requirements", "planner", "whole_task_plan"])
    graph.add_conditional_edges("read_requirements", make_after_requirements(tuple(names)),
                                ["planner", "whole_task_plan"])
    graph.add_edge("planner", "tool_choice")
    graph.add_edge("whole_task_plan", "tool_choice")
    graph.add_conditional_edges("tool_choice", after_tool_choice, ["approval", "scheduler"])
    graph.add_conditional_edges("approval", after_approval, ["scheduler", END])
    graph.add_conditional_edges("scheduler", make_dispatch(names),
                                ["python_step", "llm_step", "tool_step", "approve_tool", "replanner", "checker",
                                 "aggregator"])
    graph.add_edge("python_step", "scheduler")
    graph.add_edge("llm_step", "scheduler")
    graph.add_edge("tool_step", "scheduler")
    graph.add_edge("approve_tool", "scheduler")
    graph.add_edge("replanner", "tool_choice")
    graph.add_edge("checker", "vote")
    graph.add_conditional_edges("vote", after_vote, ["checker", "stated_answer", "aggregator"])
    graph.add_edge("stated_answer", "answer_check")
    graph.add_conditional_edges("aggregator", after_aggregator, ["answer_check", "check_instructions"])
    graph.add_conditional_edges("answer_check", after_answer_check if response_format is None else form_or_structure,
                                ["check_instructions", settled])
    if response_format is None:
        graph.add_conditional_edges("check_instructions", after_instruction_check, ["reviser", "plain_answer", END])
    else:
        graph.add_conditional_edges("check_instructions", revise_or_structure,
                                    ["reviser", "plain_answer", "structured_answer"])
        graph.add_edge("structured_answer", END)
    graph.add_edge("reviser", "check_instructions")
    graph.add_edge("plain_answer", "check_instructions")
    return graph


def build_graph(model: ChatModels, checkpointer: BaseCheckpointSaver | None | Literal[False] = None, *,
                options: RunOptions | None = None, sampling: SamplingConfig | None = None,
                run_code: CodeRunner | None = None, tools: Sequence[BaseTool] = (), file_store: FileStore | None = None,
                tracing: Any = None, response_format: Any = None, mcp_servers: Mapping[str, Any] | None = None,
                store: BaseStore | None = None,
                **overrides: Any) -> Any:
    """Compile the agent: the one way every entry point (Python, CLI, web page, server, eval) gets it.

    ``model``: any LangChain chat model (None only for a graph that runs no node: drawing, reading state), or
    one per role: a mapping of ``"planner"``, ``"executor"``, ``"aggregator"`` (hierplan.roles says which nodes
    each serves) and ``"default"`` (the roles not named) to chat models, e.g. ``{"default": small, "planner":
    big}``. An unknown role is a ValueError, anything but a BaseChatModel a TypeError.
    ``checkpointer``: any LangGraph checkpointer; None gives an in-memory one, so ``graph.invoke(None,
    same_config)`` resumes within this process (``hierplan.open_checkpointer(path)`` gives a SQLite file that
    survives it); False compiles without one, for a LangGraph Server, which brings its own.
    ``store``: the LangGraph store (any ``BaseStore``) of the user's long-term memories, which the memory node
    writes ("Remember that ...") and recalls in every later run, whatever its thread
    (``hierplan.store.open_memory_store(db)``: SQLite or Postgres, surviving the process; LangGraph's
    ``InMemoryStore()`` for one process). None, as LangGraph's compile takes it: none, so nothing is remembered
    and one run's task never reaches another's prompts (an evaluation's tasks stay apart); with
    ``checkpointer=False`` a LangGraph Server gives the graph its own.
    ``options`` (RunOptions, with ``overrides`` of its fields such as ``approve=True``): the run's context
    unless the caller passes ``context=`` to invoke/stream. ``sampling``: each node's base sampling.
    ``tools``: LangChain tools (any BaseTool, a function decorated with ``@tool``, MCP tools from
    ``hierplan.tools.mcp.load_tools``) a plan step may name as its tool: the planner is shown each one's name
    and description, and the tool_step node fills a named tool's arguments and calls it (docs/usage.md).
    ``mcp_servers``: MCP servers whose tools are added to ``tools``, as the servers file holds them
    (``{"mcpServers": {"NAME": {"command": ..., "args": [...]} | {"url": ...}}}``), loaded through
    hierplan.tools.mcp (one session per server, open for the rest of the process; ``load_tools(path)`` as a
    context manager ends them sooner); a bad configuration or a server that does not answer is a UsageError.
    ``approve=True`` stops after planning until ``graph.invoke(Command(resume={"action": "approve" | "edit" |
    "reject", ...}), config)``; ``approve_tools=True`` stops before each registered tool's call (its step, tool
    and arguments) until ``Command(resume={"action": "approve" | "reject"})`` or ``{"action": "edit",
    "arguments": {...}}``.
    ``file_store``: where the run's files (``load_files(paths, file_store)``) and what its Python steps save are
    kept by sha256 (``hierplan.store.open_file_store(db)``: beside a SQLite file, in a Postgres database); default
    a temporary folder of this process, which a resume in another process does not find.
    ``tracing``: OpenTelemetry spans for each run, node, model call and tool or sandbox call (hierplan.tracing,
    docs/usage.md "Tracing"): None, on when the standard OTEL_* variables ask for it (an OTLP endpoint); False,
    off; True, on (the application's global tracer provider where it set one, else one from the variables); an
    OpenTelemetry TracerProvider, into it. LangSmith needs nothing here: LangChain reads LANGSMITH_TRACING.
    ``response_format``: a pydantic class, or a JSON Schema (a dict) of an object: once the answer is settled, the
    structured_answer node has the aggregator's model write it as that schema (under the grammar where the model
    takes one), validated, asked again once when it does not validate; the final state's ``structured_response``
    holds it as a JSON-safe dict (``Model.model_validate(out["structured_response"])`` gives the pydantic object),
    and ``structured_check`` the attempts (``error``: one line when none validated; the run still ends, with
    ``final``). A schema that is not one is a ValueError here (hierplan.schema.check_response_format).
    """
    options = replace(options or RunOptions(), **overrides)
    if mcp_servers is not None:
        from hierplan.tools.mcp import load_servers

        served = load_servers(dict(mcp_servers))
        try:
            tools = check_tools([*tools, *served])
        except BaseException:
            served.close()
            raise
    graph = wire(model, sampling=sampling, run_code=run_code, tools=tools, file_store=file_store,
                 response_format=None if response_format is None else check_response_format(response_format))
    if checkpointer is False:
        compiled = graph.compile(name="hierplan", store=store)
    else:
        compiled = graph.compile(checkpointer=checkpointer if checkpointer is not None else InMemorySaver(),
                                 name="hierplan", store=store)
    # bind: invoke/stream/batch get durability="sync" and these options unless the caller passes their own; the
    # binding forwards get_state, update_state, get_graph and the rest to the compiled graph.
    # the tracer goes into the compiled graph's own config (not the binding), so LangGraph Server, which runs the
    # compiled graph, traces too; a caller's callbacks are added to it, not replaced
    tracers = callbacks(tracing) if model is not None else []  # a graph without a model runs nothing to trace
    config = {"recursion_limit": RECURSION_LIMIT, **({"callbacks": tracers} if tracers else {})}
    return compiled.with_config(config).bind(durability=DURABILITY, context=options)
