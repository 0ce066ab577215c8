"""The options of every command that runs the graph, in one place: declared here (model, sampling, run
behaviour, database) and turned here into a loaded model, ``build_graph`` arguments and a run store.

`run`, `demo`, `resume`, `fork` and `eval` use it; so can any other command (``serve``): call
``add_model_options(parser)``, then ``model_options(args)`` for the JSON-safe dict a run records, and
``load_model(options)`` / ``graph_kwargs(options)`` (or ``build(options, checkpointer)``) to get the graph.
``options`` is that dict (or any mapping with the same keys, e.g. a LangGraph assistant's ``configurable``).

No secret is ever an option: a remote server's key comes only from ``OPENAI_API_KEY`` (read by the model
loader), so the dict a run stores in the runs table holds none.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping
from urllib.parse import urlsplit

from hierplan.errors import UsageError

# What a run records (runs table) and what `resume`/`fork` may override. Order is the --help order.
MODEL_KEYS = ("model", "base_url", "engine", "device", "quantize", "max_new_tokens", "temperature", "seed",
              "no_constrain", "sequential", "max_replans")
# The keys that choose the model (what ``load_model`` reads); the others shape the graph.
LOAD_KEYS = ("model", "base_url", "engine", "device", "quantize", "max_new_tokens")
DEFAULT_CONCURRENCY = 1


RUN_DB_HELP = ("run database: a SQLite file PATH or a postgresql:// URL (default: $HIERPLAN_DB or runs.sqlite "
               "in the state directory; ':memory:' for none)")


def add_common_options(p: argparse.ArgumentParser, db_help: str = RUN_DB_HELP) -> None:
    """--db and --debug, on every command."""
    p.add_argument("--db", metavar="PATH|URL", help=db_help)
    p.add_argument("--debug", action="store_true", help="show tracebacks")


def add_model_options(p: argparse.ArgumentParser) -> None:
    """The model, sampling and run-behaviour options (every key of MODEL_KEYS)."""
    g = p.add_argument_group("model and sampling")
    g.add_argument("--model", help="an embedded model's short name (`hierplan models`), a .gguf file, a model "
                                   "folder or a HF model id (default: $HIERPLAN_MODEL or the embedded "
                                   "qwen2.5-coder-1.5b)")
    g.add_argument("--base-url", metavar="URL",
                   help="an OpenAI-compatible server (vLLM, llama.cpp, Ollama, TGI), e.g. http://gpu-box:8000/v1; "
                        "its key comes from $OPENAI_API_KEY only")
    g.add_argument("--engine", choices=["auto", "llama.cpp", "transformers"],
                   help="default auto: llama.cpp for a GGUF on the CPU, else transformers ($HIERPLAN_ENGINE)")
    g.add_argument("--device", choices=["cpu", "cuda"],
                   help="transformers engine: default cuda when available, else cpu")
    g.add_argument("--quantize", choices=["4bit", "none"],
                   help="transformers engine on CUDA: default 4bit (nf4 through bitsandbytes); none: float weights")
    g.add_argument("--max-new-tokens", type=int, metavar="N", help="cap on generated tokens per model call")
    g.add_argument("--temperature", type=float, help="override every node's temperature (0 = greedy)")
    g.add_argument("--seed", type=int, help="make the run reproducible")
    g.add_argument("--no-constrain", action="store_true", help="plan without the JSON grammar constraint")
    g.add_argument("--sequential", action="store_true",
                   help="run one step at a time (default: ready steps in parallel, LLM steps batched)")
    g.add_argument("--max-replans", type=int, metavar="N",
                   help="revisions of the plan after failed steps (default 1; 0: never)")


def add_concurrency_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"run N tasks at once, sharing the one model (default {DEFAULT_CONCURRENCY})")


def check_concurrency(n: int) -> int:
    if n < 1:
        raise UsageError(f"--concurrency must be at least 1, got {n}")
    return n


def check_base_url(url: str | None) -> str | None:
    """An http(s) URL without a password in it: the URL is stored with the run, a key must not be."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError("--base-url must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1")
    if parts.password is not None:
        raise UsageError("--base-url must not hold a password (it is stored with the run); "
                         "put the key in OPENAI_API_KEY")
    return url


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options as given on the command line (None / False where not given), JSON-safe."""
    options = {k: getattr(args, k) for k in MODEL_KEYS}
    check_base_url(options["base_url"])
    if options["max_replans"] is not None and options["max_replans"] < 0:
        raise UsageError(f"--max-replans must be 0 or more, got {options['max_replans']}")
    return options


def overridden_options(started_with: Mapping[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Options given now override what the run started with (e.g. a different --model). Flags left off (False)
    and options not given (None) keep the run's; 0 is a value (``--max-replans 0``, ``--temperature 0``)."""
    return {**started_with, **given_options(args)}


def given_options(args: argparse.Namespace) -> dict[str, Any]:
    """``model_options`` less those not given: None, or False for a flag left off."""
    return {k: v for k, v in model_options(args).items() if v is not None and v is not False}


def db_path(args: argparse.Namespace) -> str:
    """The run database: --db, else $HIERPLAN_DB, else runs.sqlite in the state directory."""
    from hierplan.config import default_db_path

    return args.db or default_db_path()


def open_store(args: argparse.Namespace):
    """(database path, RunStore) for --db."""
    from hierplan.store import RunStore

    db = db_path(args)
    return db, RunStore.open(db)


def load_model(options: Mapping[str, Any]):
    """The chat model the options name (its LOAD_KEYS); ``base_url`` is passed on only when given."""
    import hierplan.models  # looked up at call time: tests replace hierplan.models.load_chat_model

    kwargs: dict[str, Any] = {k: options[k] for k in ("engine", "device", "quantize") if options.get(k)}
    if options.get("max_new_tokens"):
        kwargs["max_new_tokens"] = options["max_new_tokens"]
    if options.get("base_url"):
        kwargs["base_url"] = check_base_url(options["base_url"])
    return hierplan.models.load_chat_model(options.get("model"), **kwargs)


def sampling(options: Mapping[str, Any]):
    from hierplan.config import SamplingConfig

    return SamplingConfig().with_overrides(temperature=options.get("temperature"),
                                           max_new_tokens=options.get("max_new_tokens"),
                                           seed=options.get("seed"))


def graph_kwargs(options: Mapping[str, Any]) -> dict[str, Any]:
    """``build_graph`` keyword arguments (all but the model and checkpointer)."""
    kwargs: dict[str, Any] = {"sampling": sampling(options), "constrain": not options.get("no_constrain"),
                              "parallel": not options.get("sequential"), "approve": bool(options.get("approve"))}
    if options.get("max_replans") is not None:  # 0 is a value: never replan
        kwargs["max_replans"] = options["max_replans"]
    return kwargs


def build(options: Mapping[str, Any], checkpointer=None, model=None) -> Any:
    """The compiled graph for these options (loading the model unless one is given)."""
    from hierplan.graph.builder import build_graph

    return build_graph(model if model is not None else load_model(options), checkpointer, **graph_kwargs(options))
