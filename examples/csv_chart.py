"""A CSV analysis with a chart: give a run a file, let a Python step read it and save a PNG, get the PNG back.

    .venv/bin/python examples/csv_chart.py                 # the embedded model; writes csv_chart_out/step-N/*.png

The same run from the command line (examples/README.md has the whole task text):

    hierplan run --file examples/data/sales.csv --run-id sales "With Python, read data/sales.csv, ..."
    hierplan show sales --artifacts csv_chart_out

What happens: the file is checked by ``load_files`` (what ``hierplan run --file`` does) and copied into a file store
(by sha256, streamed: any size), and its record goes into the run's input as ``files``. The planner, the LLM steps
and the Python steps see a short preview of it (columns and their types, row count, missing values, first rows); a
Python step's program reads it, read-only, at ``./data/sales.csv`` inside the sandbox, and what the program saves
under ``./out/`` goes to the same store, named on the step's result as ``artifacts``. ``save_artifacts`` copies
them out as ``hierplan show RUN --artifacts DIR`` does.
"""

from __future__ import annotations

from pathlib import Path

from hierplan import build_graph, load_chat_model
from hierplan.render.text import step_lines
from hierplan.store import open_file_store
from hierplan.tools.files import load_files, run_artifacts, save_artifacts

HERE = Path(__file__).resolve().parent
CSV = HERE / "data" / "sales.csv"

# Name the file as the sandbox sees it (by its name) and the file to save under out/: small models follow a
# task that says exactly where to read and where to write.
TASK = ("sales.csv has one row per month, region and product, with the units sold and the revenue in euros. "
        "With Python, read data/sales.csv, compute the total revenue and the revenue of each region, and save a "
        "bar chart of the revenue by region as out/revenue_by_region.png. What is the total revenue?")


def main(model=None, csv_path: str | Path = CSV, out_dir: str | Path = "csv_chart_out") -> dict:
    """Run the task on ``csv_path`` with ``model`` (default: the embedded model), print the steps and the
    answer, write the run's saved files under ``out_dir``; the run's final state is returned."""
    if model is None:
        model = load_chat_model()  # the embedded Qwen2.5-Coder-1.5B (or $HIERPLAN_MODEL); any LangChain chat model
    # ":memory:": a temporary store for this process; open_file_store("runs.sqlite") keeps the files beside the
    # runs (with open_checkpointer("runs.sqlite") as the checkpointer, to keep the run)
    store = open_file_store(":memory:")
    graph = build_graph(model, file_store=store)

    # load_files: name, size, sha256, media type and preview of each file, its bytes copied into the store; a
    # missing or too large file is a UsageError here, before any model call.
    files = load_files([csv_path], store)
    state = graph.invoke({"task": TASK, "files": files}, {"configurable": {"thread_id": "csv-chart"}})

    for result in state["results"]:  # each step's output, and the files its program saved under out/
        print("\n".join(step_lines(result)))
    print("\nAnswer:", state["final"])

    # Each artifact is {name, size, sha256, media_type, step_id}; its bytes are in the store (local_path(a, store)).
    # save_artifacts copies them to OUT_DIR/step-N/NAME, as `hierplan show RUN --artifacts OUT_DIR` does.
    if run_artifacts(state):
        for path in save_artifacts(state, str(out_dir), store):
            print("wrote", path)
    else:
        print("no Python step saved a file this time (a small model does not always draw the chart)")
    return state


if __name__ == "__main__":
    main()
