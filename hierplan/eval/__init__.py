"""Evaluation harness: run the agent over JSONL tasks (GSM8K form) and report accuracy and costs.

Light at import time: no torch/transformers; the model is passed in by the caller.
"""

from __future__ import annotations

from hierplan.eval.harness import evaluate_task, run_eval
from hierplan.eval.metrics import task_metrics
from hierplan.eval.report import summarize, write_summary
from hierplan.eval.scoring import last_number, numbers_equal, parse_number, score, score_text
from hierplan.eval.tasks import EvalTask, load_tasks, parse_gsm8k_answer

__all__ = ["EvalTask", "evaluate_task", "last_number", "load_tasks", "numbers_equal", "parse_gsm8k_answer",
           "parse_number", "run_eval", "score", "score_text", "summarize", "task_metrics", "write_summary"]
