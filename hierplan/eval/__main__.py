"""``python -m hierplan.eval DIR``: (re)write DIR/summary.md from DIR/results.jsonl."""

from hierplan.eval.report import main

raise SystemExit(main())
