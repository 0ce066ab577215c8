"""Model text as the page shows it: Markdown (markdown-it-py) with HTML off, so every tag in a reply is shown as
text, and code highlighted by Pygments into classes (the page's CSP allows no inline style; static/code.css
colours them).

- Raw HTML, inline or as a block, is escaped: ``<script>`` or ``<img onerror=...>`` in a reply reads literally.
- Links keep only ``http:``, ``https:`` and ``mailto:`` URLs (anything else, ``javascript:`` included, stays
  text) and open in a new tab with ``rel="noopener noreferrer"``.
- Images are never loaded (the CSP would block another host's anyway): each is a link to its URL, its alt text
  the link's text.
- CommonMark, plus tables (a column's alignment a class, not a style) and strikethrough; a newline in a paragraph is a line break, as the model wrote it.
- Text over ``MAX_CHARS`` is shown preformatted, unparsed.

markdown-it-py and Pygments come with rich (a main dependency) and are named by the ``server`` extra; both are
imported on first use, so the CLI's ``--help`` loads neither.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from typing import Any

MAX_CHARS = 200_000
LINK_SCHEMES = ("http:", "https:", "mailto:")
HIGHLIGHT_CLASS = "hl"  # the Pygments classes are scoped under this one (static/code.css)


def safe_link(url: str) -> bool:
    """Only absolute web and mail links; never javascript:, data:, file:, vbscript: or a page-relative path."""
    return "".join(url.split()).lower().startswith(LINK_SCHEMES)  # "java\tscript:" is javascript: to a browser


def highlight(code: str, lang: str | None) -> str:
    """``code`` as HTML: Pygments' spans for a language it knows (by the fence's name), else plain escaped text.
    Never guesses a language."""
    name = (lang or "").strip().split(maxsplit=1)[0].lower() if (lang or "").strip() else ""
    if name:
        try:
            from pygments import highlight as pygmentize
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import get_lexer_by_name
            from pygments.util import ClassNotFound
        except ImportError:
            return escape(code, quote=False)
        try:
            lexer = get_lexer_by_name(name, stripnl=False, ensurenl=False)
        except ClassNotFound:
            return escape(code, quote=False)
        return pygmentize(code, lexer, HtmlFormatter(nowrap=True, classprefix=""))
    return escape(code, quote=False)


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML

    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "typographer": False,
                                   "highlight": lambda code, lang, attrs: highlight(code, lang)})
    md.enable(["table", "strikethrough"])
    md.validateLink = safe_link

    def link_open(self, tokens, idx, options, env):
        token = tokens[idx]
        token.attrSet("rel", "noopener noreferrer")
        token.attrSet("target", "_blank")
        return self.renderToken(tokens, idx, options, env)

    def image(self, tokens, idx, options, env):
        token = tokens[idx]
        alt = self.renderInlineAsText(token.children or [], options, env) or token.attrGet("src") or ""
        src = str(token.attrGet("src") or "")
        return (f'<a href="{escape(src)}" rel="noopener noreferrer" target="_blank" class="image-link">'
                f"{escape(alt, quote=False)}</a>")

    def fence(self, tokens, idx, options, env):
        # markdown-it's <pre><code class="language-x">, the <pre> marked for the stylesheet's colours
        html = RendererHTML.fence(self, tokens, idx, options, env)
        return html.replace("<pre>", f'<pre class="{HIGHLIGHT_CLASS}">', 1)

    def cell_open(self, tokens, idx, options, env):
        # a column's alignment as a class: markdown-it writes a style attribute, which the page's CSP refuses
        token = tokens[idx]
        style = str(token.attrGet("style") or "")
        if style.startswith("text-align:"):
            token.attrs.pop("style", None)
            token.attrSet("class", "align-" + style.split(":", 1)[1])
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("th_open", cell_open)
    md.add_render_rule("td_open", cell_open)
    md.add_render_rule("link_open", link_open)
    md.add_render_rule("image", image)
    md.add_render_rule("fence", fence)
    return md


def render_markdown(text: Any) -> str:
    """Safe HTML for a model's reply (a string; anything else, None included, is shown as its text)."""
    if text is None:
        return ""
    text = str(text)
    if len(text) > MAX_CHARS:
        return f'<pre class="too-long">{escape(text, quote=False)}</pre>'
    return _parser().render(text)


def render_code(code: Any, lang: str = "python") -> str:
    """A program shown in a step's card: highlighted, in a ``<pre class="code hl">``."""
    code = "" if code is None else str(code)
    body = highlight(code, lang) if len(code) <= MAX_CHARS else escape(code, quote=False)
    return f'<pre class="code {HIGHLIGHT_CLASS}"><code class="language-{escape(lang)}">{body}</code></pre>'
