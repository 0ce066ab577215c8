"""Every per-run option, declared once: ``RunOptions`` is the graph's ``context_schema`` (nodes read it as
``runtime.context``), the runs table's record of a run, and what the CLI's flags and the server's
``configurable`` checks are derived from (``hierplan.app``).

No secret is ever an option: a remote server's key comes only from ``OPENAI_API_KEY`` (read by the model
loader), so a run's stored options hold none. Importing this module imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, Mapping

from hierplan.config import (FILE_MAX_BYTES, FILES_MAX_BYTES, MAX_CODE_REPAIRS, MAX_FILE_ENV, MAX_FILES_ENV,
                             MAX_REPLANS, MiB, SamplingConfig)
from hierplan.roles import option_name

Engine = Literal["auto", "llama.cpp", "transformers"]
Device = Literal["cpu", "cuda"]
Quantize = Literal["4bit", "none"]

# Keys older runs stored under other names (a flag's name rather than the option's); read, never written.
LEGACY_FLAGS = {"no_constrain": "constrain", "sequential": "parallel"}


def _opt(help: str, *, flag: str | None = None, load: bool = False, host: bool = False,
         **extra: Any) -> dict[str, Any]:
    """Field metadata: ``help`` for --help, ``flag`` the CLI flag where it is not --<name> (a negative flag
    for a boolean that defaults to True), ``load``: the option chooses the model (a new model to load),
    ``host``: only the command line sets it, never the web page's form or a server's client (it starts programs,
    or sizes what a run may take of the machine)."""
    return {"help": help, "flag": flag, "load": load, "host": host, **extra}


@dataclass(frozen=True)
class RunOptions:
    """The options of one run. None means "the default" (of the model loader, or of hierplan.config)."""

    model: str | None = field(default=None, metadata=_opt(
        "an embedded model's short name (`hierplan models`), a .gguf file, a model folder or a HF model id "
        "(default: $HIERPLAN_MODEL or the embedded qwen2.5-coder-1.5b)", load=True))
    """Which model: short name, .gguf path, folder, HF id or ``openai:NAME``."""
    planner_model: str | None = field(default=None, metadata=_opt(
        "the planner's and the replanner's model, anything --model takes (default: --model)", load=True,
        metavar="MODEL"))
    """The planner role's model (hierplan.roles); None: ``model``'s. Loaded with the same engine, device and
    base URL options."""
    executor_model: str | None = field(default=None, metadata=_opt(
        "the steps' and the checker's model, anything --model takes (default: --model)", load=True,
        metavar="MODEL"))
    """The executor role's model (the steps, a tool's arguments, the checker); None: ``model``'s."""
    aggregator_model: str | None = field(default=None, metadata=_opt(
        "the model of the aggregator, the reviser and a --schema answer, anything --model takes (default: "
        "--model)", load=True, metavar="MODEL"))
    """The aggregator role's model (the answer, its rewrites, and the answer as a response_format); None:
    ``model``'s."""
    base_url: str | None = field(default=None, metadata=_opt(
        "an OpenAI-compatible server (vLLM, llama.cpp, Ollama, TGI), e.g. http://gpu-box:8000/v1; its key "
        "comes from $OPENAI_API_KEY only", load=True, metavar="URL"))
    """An OpenAI-compatible server to use instead of a local engine."""
    engine: Engine | None = field(default=None, metadata=_opt(
        "default auto: llama.cpp for a GGUF on the CPU, else transformers ($HIERPLAN_ENGINE)", load=True))
    """The local engine."""
    device: Device | None = field(default=None, metadata=_opt(
        "transformers engine: default cuda when available, else cpu", load=True))
    """transformers engine: where the model runs."""
    quantize: Quantize | None = field(default=None, metadata=_opt(
        "transformers engine on CUDA: default 4bit (nf4 through bitsandbytes); none: float weights", load=True))
    """transformers engine on CUDA: weight quantization."""
    max_new_tokens: int | None = field(default=None, metadata=_opt(
        "cap on generated tokens per model call", load=True, metavar="N", min=1))
    """Caps every node's generated tokens (None: each node's own budget, hierplan.config)."""
    temperature: float | None = field(default=None, metadata=_opt(
        "override every node's temperature (0 = greedy)", min=0))
    """Overrides every node's temperature (None: each node's own)."""
    seed: int | None = field(default=None, metadata=_opt("make the run reproducible"))
    """Run seed; each model call derives its own from it (hierplan.nodes.model_call.call_seed)."""
    constrain: bool = field(default=True, metadata=_opt(
        "plan without the JSON grammar constraint", flag="--no-constrain"))
    """Plan under a grammar or a server-side JSON schema (False: plain text, parsed)."""
    parallel: bool = field(default=True, metadata=_opt(
        "run one step at a time (default: ready steps in parallel, LLM steps batched)", flag="--sequential"))
    """Run ready steps together (False: one at a time)."""
    max_replans: int = field(default=MAX_REPLANS, metadata=_opt(
        f"revisions of the plan after failed steps (default {MAX_REPLANS}; 0: never)", metavar="N", min=0))
    """How often a failed step makes the replanner revise the unfinished steps."""
    max_repairs: int = field(default=MAX_CODE_REPAIRS, metadata=_opt(
        f"repairs of a failing Python step's program (default {MAX_CODE_REPAIRS}; 0: none)", metavar="N", min=0))
    """How often a failing program is shown to the model to repair."""
    explain: bool = field(default=False, metadata=_opt(
        "a numeric answer the programs' vote decided is written by the model, in prose (default: stated from "
        "the voted number without a model call)"))
    """A numeric run whose programs' vote decided its number: True, the aggregator model writes the answer; False,
    the stated_answer node states the voted number (no model call)."""
    user: str | None = field(default=None, metadata=_opt(
        "whose long-term memories the run recalls and keeps (\"Remember that ...\"; default: local)",
        metavar="NAME"))
    """Whose memories the memory node reads and writes in the graph's store (None: config.DEFAULT_MEMORY_USER)."""
    split_writing: bool = field(default=False, metadata=_opt(
        "let the planner split a piece of writing with parts (a plan, an itinerary, a proposal) into steps "
        "(default: one piece, which the final answer writes)"))
    """A writing task that names a deliverable with parts, with no files or tools: True, the planner decides its
    steps; False, one piece, planned by rule (rules.plan rule 1b)."""
    approve: bool = field(default=False, metadata=_opt("stop after planning until the plan is approved"))
    """Stop after planning until a person approves, edits or rejects the plan."""
    approve_tools: bool = field(default=False, metadata=_opt(
        "stop before each registered tool's call until its arguments are approved, edited or rejected"))
    """Stop before each call of a registered tool (an MCP server's, build_graph's ``tools``) until a person
    approves it, edits its arguments or rejects it (the step then fails: "rejected by the user")."""
    mcp: str | None = field(default=None, metadata=_opt(
        'a JSON file of MCP servers ({"mcpServers": {"NAME": {"command": ..., "args": [...]}}}) whose tools plan '
        "steps may call (needs hierplan[mcp])", host=True, metavar="FILE"))
    """The MCP servers' configuration file (its absolute path, as the run service records it)."""
    mcp_servers: str | None = field(default=None, metadata=_opt(
        "only these servers of the --mcp file, by name, comma-separated (default: all of them)",
        metavar="NAMES"))
    """Which of ``mcp``'s servers a run uses, by name (comma-separated); None: all. The web page's form and a
    server's client may set it: they choose among the servers the host configured, never name a program."""
    max_file_mb: int | None = field(default=None, metadata=_opt(
        f"the largest file --file (or the web page) may attach, in MiB (default ${MAX_FILE_ENV}, else "
        f"{FILE_MAX_BYTES // MiB})", host=True, metavar="MIB", min=1))
    """A run's limit per input file (hierplan.tools.files.file_limits); None: $HIERPLAN_MAX_FILE_MB, else
    config.FILE_MAX_BYTES. Only the command line sets it: it decides how much of the machine's disk a run takes."""
    max_files_mb: int | None = field(default=None, metadata=_opt(
        f"the files of one run together, in MiB (default ${MAX_FILES_ENV}, else {FILES_MAX_BYTES // MiB})",
        host=True, metavar="MIB", min=1))
    """A run's limit on its input files together; None: $HIERPLAN_MAX_FILES_MB, else config.FILES_MAX_BYTES."""

    def file_limits(self) -> tuple[int, int]:
        """(bytes per file, bytes together) for this run's input files (hierplan.tools.files.file_limits)."""
        from hierplan.tools.files import file_limits

        return file_limits(self.max_file_mb, self.max_files_mb)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> "RunOptions":
        """From a stored or given mapping: unknown keys are ignored, None means the default, and the keys older
        runs stored (``no_constrain``, ``sequential``) are read as the options they negate."""
        values = dict(values or {})
        for old, new in LEGACY_FLAGS.items():
            if old in values and new not in values:
                flag = values.pop(old)
                if flag is not None:
                    values[new] = not flag
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names and v is not None})

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, every key present (what a run records)."""
        return asdict(self)

    def merged(self, overrides: Mapping[str, Any]) -> "RunOptions":
        """These options with those given in ``overrides`` applied (None, or a key not given: keep this one's)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        names = {LEGACY_FLAGS.get(k, k) for k in given}
        parsed = RunOptions.from_dict(given)
        return replace(self, **{n: getattr(parsed, n) for n in names if n in {f.name for f in fields(self)}})

    def load_options(self) -> dict[str, Any]:
        """The options that choose the models, those given (the roles' models included)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.metadata.get("load") and getattr(self, f.name) is not None}

    def role_model(self, role: str) -> str | None:
        """The model a role's option names (hierplan.roles), else ``model`` (None: the loader's default)."""
        return getattr(self, option_name(role)) or self.model

    def sampling(self, base: SamplingConfig | None = None) -> SamplingConfig:
        """Each node's sampling: ``base`` (hierplan.config's defaults) under this run's overrides."""
        return (base or SamplingConfig()).with_overrides(temperature=self.temperature,
                                                         max_new_tokens=self.max_new_tokens, seed=self.seed)


def option_fields() -> tuple:
    """The dataclass fields of RunOptions, in declaration order (the --help order)."""
    return fields(RunOptions)


def run_options(context: RunOptions | Mapping[str, Any] | None) -> RunOptions:
    """A node's ``runtime.context`` as RunOptions: as given, from a mapping (a server passes JSON), or the
    defaults when the caller passed none."""
    if isinstance(context, RunOptions):
        return context
    return RunOptions.from_dict(context)
