"""Writing pictures for `hierplan show RUN --png/--svg/--mermaid` and `hierplan graph --png/--svg`."""

from __future__ import annotations

import sys
from pathlib import Path

from hierplan.errors import HierplanError, UsageError


class DrawingError(HierplanError):
    """pygraphviz (with the Graphviz it bundles) cannot load or render on this machine."""


def write_pictures(picture, *, png: str | None = None, svg: str | None = None) -> None:
    """Render every asked-for file before writing any; a failure is one DrawingError or UsageError line."""
    from hierplan.render.picture import GraphvizUnavailable, font_warning

    rendered = []
    for fmt, path in (("png", png), ("svg", svg)):
        if path:
            try:
                rendered.append((path, picture.render(fmt)))
            except GraphvizUnavailable as exc:
                raise DrawingError(str(exc)) from exc
    if png and (warning := font_warning()):
        print(f"hierplan: warning: {warning}", file=sys.stderr)
    for path, data in rendered:
        try:
            Path(path).write_bytes(data)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
        print(f"wrote {path}", file=sys.stderr)


def show_run_picture(db: str, run_id: str, *, mermaid: bool, png: str | None, svg: str | None) -> int:
    """The run's plan as a picture: files written first, then the Mermaid text on stdout if asked for."""
    from hierplan.app.runs import past_states, run_state
    from hierplan.render.picture import shorten
    from hierplan.render.run_picture import run_picture

    record, values = run_state(db, run_id)
    picture = run_picture(values, history=past_states(db, record.id), run_status=record.status,
                          title=f"run {record.id} ({record.status}): {shorten(record.task, 70)}")
    write_pictures(picture, png=png, svg=svg)
    if mermaid:
        print(picture.mermaid(), end="")
    return 0
