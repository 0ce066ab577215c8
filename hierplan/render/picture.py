"""A picture of a graph (the agent's, or one run's plan): boxes with a status colour and arrows, written as
Mermaid text (renders in GitHub Markdown) or rendered to PNG/SVG through pygraphviz.

pygraphviz's manylinux wheel (>= 2.0.4) bundles Graphviz itself (cgraph, gvc, cairo, pango), so rendering
needs no system package; it comes with the ``pictures`` extra and is imported only when a PNG or SVG is asked
for.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("png", "svg")
LABEL_CHARS = 48
PNG_DPI = "120"  # Graphviz's default 72 blurs 11-point labels
# Where the fontconfig inside the Linux wheels looks for its configuration (and so for the machine's fonts).
FONTCONFIG_DEFAULT = "/etc/fonts/fonts.conf"

# status -> (fill, stroke, text) colours; the same in Mermaid and Graphviz.
COLOURS = {
    "done": ("#d3f9d8", "#2b8a3e", "#1b4332"),
    "failed": ("#ffe3e3", "#c92a2a", "#7f1d1d"),
    "running": ("#d0ebff", "#1c7ed6", "#0b3d91"),
    "waiting": ("#fff3bf", "#f08c00", "#5c3d00"),
    "pending": ("#f1f3f5", "#868e96", "#343a40"),
    "replaced": ("#f8f9fa", "#adb5bd", "#868e96"),
    "node": ("#e7f5ff", "#4dabf7", "#102a43"),
    "terminal": ("#f1f3f5", "#495057", "#212529"),
}
DASHED = {"replaced"}


class GraphvizUnavailable(Exception):
    """pygraphviz (and the Graphviz it bundles) cannot be loaded or cannot render here."""


@dataclass
class Node:
    id: str
    lines: list[str]
    status: str = "node"
    round: bool = False
    """A stadium (Mermaid) / ellipse (Graphviz) instead of a box: for start, end, approval and answer."""


@dataclass
class Edge:
    source: str
    target: str
    kind: str = "solid"
    """solid, dotted (a conditional edge; a replaced step's dependency) or thick (a replan)."""
    label: str | None = None


@dataclass
class Picture:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    title: str | None = None
    """Shown above a rendered PNG/SVG; Mermaid text has none (the Markdown around it can say it)."""

    def mermaid(self) -> str:
        return to_mermaid(self)

    def render(self, fmt: str) -> bytes:
        return render(self, fmt)


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- Mermaid

# Mermaid entity codes: a quoted label may hold anything but '"'; '#' starts an entity and '<' '>' would be HTML.
_MERMAID_ESCAPES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "`": "#96;", "&": "#amp;"}


def mermaid_text(text: str) -> str:
    return "".join(_MERMAID_ESCAPES.get(c, c) for c in text)


def to_mermaid(picture: Picture) -> str:
    out = ["flowchart TD"]
    for node in picture.nodes:
        label = "<br/>".join(mermaid_text(line) for line in node.lines)
        opening, closing = ('(["', '"])') if node.round else ('["', '"]')
        out.append(f"    {node.id}{opening}{label}{closing}:::{node.status}")
    arrows = {"solid": "-->", "dotted": "-.->", "thick": "==>"}
    for edge in picture.edges:
        label = f"|{mermaid_text(edge.label)}|" if edge.label else ""
        out.append(f"    {edge.source} {arrows[edge.kind]}{label} {edge.target}")
    for status in sorted({n.status for n in picture.nodes}):
        fill, stroke, text = COLOURS[status]
        dash = ",stroke-dasharray:5 5" if status in DASHED else ""
        out.append(f"    classDef {status} fill:{fill},stroke:{stroke},color:{text}{dash}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- PNG / SVG through pygraphviz


def _pygraphviz():
    if importlib.util.find_spec("pygraphviz") is None:
        raise GraphvizUnavailable("PNG/SVG pictures need pygraphviz (which bundles Graphviz), which is not "
                                  "installed: pip install 'hierplan[pictures]'")
    try:
        import pygraphviz
    except (ImportError, OSError) as exc:  # OSError: a bundled shared library that will not load
        raise GraphvizUnavailable(
            f"cannot draw PNG/SVG: pygraphviz (which bundles Graphviz) failed to load ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())}); reinstall it: pip install --force-reinstall 'pygraphviz>=2.0.4'"
        ) from exc
    return pygraphviz


def to_agraph(picture: Picture) -> Any:
    """The picture as a pygraphviz AGraph (dot layout, top to bottom)."""
    agraph = _pygraphviz().AGraph(directed=True, strict=False)
    agraph.graph_attr.update(rankdir="TB", fontname="DejaVu Sans,Helvetica,Arial,sans-serif", fontsize="13",
                             nodesep="0.35", ranksep="0.45", pad="0.2")
    if picture.title:
        agraph.graph_attr.update(label=picture.title, labelloc="t")
    agraph.node_attr.update(fontname="DejaVu Sans,Helvetica,Arial,sans-serif", fontsize="11", margin="0.15,0.07")
    agraph.edge_attr.update(color="#495057", fontname="DejaVu Sans,Helvetica,Arial,sans-serif", fontsize="10")
    for node in picture.nodes:
        fill, stroke, text = COLOURS[node.status]
        ellipse = node.round and len(node.lines) == 1  # a long round label makes a wide ellipse: a bold box
        style = "filled" if ellipse else "rounded,filled" + (",bold" if node.round else "")
        if node.status in DASHED:
            style += ",dashed"
        agraph.add_node(node.id, label="\n".join(node.lines), shape="ellipse" if ellipse else "box",
                        style=style, fillcolor=fill, color=stroke, fontcolor=text)
    styles = {"solid": {}, "dotted": {"style": "dashed", "color": "#868e96"}, "thick": {"penwidth": "2.2"}}
    for edge in picture.edges:
        attrs = dict(styles[edge.kind])
        if edge.label:
            attrs["label"] = f" {edge.label} "
        agraph.add_edge(edge.source, edge.target, **attrs)
    return agraph


def render(picture: Picture, fmt: str) -> bytes:
    """PNG or SVG bytes, rendered locally (never by a web service)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    agraph = to_agraph(picture)
    if fmt == "png":
        agraph.graph_attr["dpi"] = PNG_DPI
    try:
        return agraph.draw(format=fmt, prog="dot")
    except (OSError, ValueError) as exc:  # a layout or output plugin the bundled Graphviz lacks
        raise GraphvizUnavailable(f"cannot draw {fmt.upper()}: Graphviz failed: {' '.join(str(exc).split())}") from exc


def font_warning() -> str | None:
    """Why a PNG's labels may come out as empty boxes, or None. The bundled Graphviz draws PNG text with the
    machine's fonts, found through fontconfig; the wheel brings no font. An SVG keeps its text either way."""
    if not sys.platform.startswith("linux") or os.environ.get("FONTCONFIG_FILE") or os.path.exists(FONTCONFIG_DEFAULT):
        return None
    return (f"no font configuration here ({FONTCONFIG_DEFAULT}): the PNG's labels may be drawn as empty boxes; "
            "install a font (e.g. apt-get install fonts-dejavu-core) or use --svg")


# ---------------------------------------------------------------- the agent's graph


def from_langgraph(graph: Any) -> Picture:
    """A picture of a compiled graph's ``get_graph()`` (LangChain's public Graph: nodes and edges)."""
    picture = Picture()
    for node_id in graph.nodes:
        terminal = node_id in ("__start__", "__end__")
        picture.nodes.append(Node(_node_id(node_id), [node_id.strip("_") if terminal else node_id],
                                  "terminal" if terminal else "node", round=terminal))
    for edge in graph.edges:
        picture.edges.append(Edge(_node_id(edge.source), _node_id(edge.target),
                                  "dotted" if edge.conditional else "solid",
                                  str(edge.data) if edge.data is not None else None))
    return picture


def _node_id(name: str) -> str:
    return name.strip("_") + "_node" if name in ("__start__", "__end__") else name
