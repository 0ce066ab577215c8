"""Model text on the page as Markdown (hierplan/ui/markdown.py): headings, lists, tables and highlighted code
rendered, every tag of the text's own shown as text, only web and mail links, no image loaded; and on the run
page itself, scrubbed of secrets, with the streamed answer left as text until it is final."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytest.importorskip("markdown_it", reason="the page's Markdown needs markdown-it-py (the server extra)")

from hierplan.ui.markdown import MAX_CHARS, render_code, render_markdown, safe_link  # noqa: E402
from hierplan.ui.views import printed_answer  # noqa: E402

EVIL = ('<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n<div onclick="alert(3)">\n<b>block</b>\n</div>\n\n'
        'hi <span style="x">inline</span> <iframe src="https://e.com"></iframe>')
TAG = re.compile(r"<(script|img|div|span|iframe|b|style|svg|object|embed)\b", re.I)


def test_html_in_a_reply_is_text():
    html = render_markdown(EVIL)
    assert not TAG.search(html) and "onerror=alert(2)&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "&lt;div onclick=&quot;alert(3)&quot;&gt;" in html and "&lt;b&gt;block&lt;/b&gt;" in html
    assert "&lt;iframe src=&quot;https://e.com&quot;&gt;" in html


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "java\tscript:alert(1)",
                                 " javascript:alert(1)", "vbscript:msgbox(1)", "data:text/html,<script>alert(1)</script>",
                                 "file:///etc/passwd", "/runs/x/approve", "#top", "ftp://e.com/f"])
def test_only_web_and_mail_links(url):
    assert not safe_link(url)
    html = render_markdown(f"[click]({url}) and <{url}> and ![pic]({url})")
    assert "<a " not in html and "href" not in html and "<img" not in html and "[click]" in html


def test_links_open_apart_from_the_page():
    html = render_markdown('[docs](https://example.com/a?b=1&c="2") <http://x.org/p> <me@x.org> [m](mailto:a@b.c)')
    links = re.findall(r"<a [^>]*>", html)
    assert len(links) == 4 and all('rel="noopener noreferrer"' in a and 'target="_blank"' in a for a in links)
    assert 'href="https://example.com/a?b=1&amp;c=%222%22"' in html and 'href="mailto:me@x.org"' in html
    assert 'href="http://x.org/p"' in html and 'href="mailto:a@b.c"' in html


def test_an_image_is_a_link_never_loaded():
    html = render_markdown('![a chart <b>](https://e.com/c.png "t") ![x](https://e.com/x.png" onerror="alert(1))')
    assert "<img" not in html and "onerror=\"" not in html
    assert '<a href="https://e.com/c.png" rel="noopener noreferrer" target="_blank" class="image-link">a chart' in html


def test_markdown_is_rendered():
    text = ("# Title\n\nSome *stress* and **bold**, `x < y`, ~~gone~~.\nA second line.\n\n## Part\n\n- one\n- two\n\n"
            "1. first\n2. second\n\n> quoted\n\n```python\ndef f(x):\n    return '<b>' + x  # note\n```\n\n"
            "| name | n |\n|---|--:|\n| a <i>x</i> | 1 |\n\n    indented <code>\n")
    html = render_markdown(text)
    for part in ("<h1>Title</h1>", "<h2>Part</h2>", "<em>stress</em>", "<strong>bold</strong>",
                 "<code>x &lt; y</code>", "<s>gone</s>", "<br />\nA second line", "<li>one</li>", "<ol>",
                 "<blockquote>", "<table>", "<th>name</th>", '<th class="align-right">n</th>', '<td class="align-right">1</td>',
                 "<td>a &lt;i&gt;x&lt;/i&gt;</td>", "<pre><code>indented &lt;code&gt;\n</code></pre>"):
        assert part in html, part
    # the fence highlighted by Pygments into classes (the CSP allows no inline style), its text escaped
    assert '<pre class="hl"><code class="language-python"><span class="k">def</span>' in html
    assert '<span class="s1">\'&lt;b&gt;\'</span>' in html and '<span class="c1"># note</span>' in html
    assert "style=" not in html


def test_code_in_an_unknown_or_no_language_is_escaped_text():
    for fence in ("```\n<script>alert(1)</script>\n```", "```nosuchlang\n<script>alert(1)</script>\n```",
                  '```"><script>alert(1)</script>\n<b>\n```'):
        html = render_markdown(fence)
        assert not TAG.search(html) and "<span" not in html and "&lt;" in html, html


def test_very_long_text_is_shown_unparsed():
    html = render_markdown("# big\n<script>" + "x" * MAX_CHARS)
    assert html.startswith('<pre class="too-long"># big\n&lt;script&gt;xx') and "<h1>" not in html


def test_a_program_is_highlighted_and_escaped():
    html = render_code("print('</pre><script>alert(1)</script>')\n")
    assert html.startswith('<pre class="code hl"><code class="language-python"><span class="nb">print</span>')
    assert "<script" not in html and "&lt;/pre&gt;&lt;script&gt;" in html
    assert render_markdown(None) == "" and render_code(None).endswith("</code></pre>")


def test_an_answer_a_program_printed_is_shown_as_printed():
    table = "region  revenue\nnorth      1200\nsouth       800"
    assert printed_answer({"final": table, "vote": {"stdout": table + "\n"}, "results": []})
    assert printed_answer({"final": table, "results": [{"tool": "python", "stdout": table}]})
    assert not printed_answer({"final": "The total is **2000**.", "vote": {"stdout": "2000\n"}, "results": []})
    assert not printed_answer({"final": None, "results": [{"tool": "python", "stdout": ""}]})


def test_the_cli_loads_no_markdown_parser():
    code = ("import sys; from hierplan.cli.main import build_parser; build_parser(); import hierplan.ui.markdown; "
            "print(sorted(m for m in ('markdown_it', 'pygments') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- on the run page ------------------------------------------------------------------------------------

pytest.importorskip("starlette", reason="the web page needs the server extra (starlette)")

from ui_support import Page, page  # noqa: E402,F401 - page is a fixture

STEP_REPLY = ("## Findings\n\n- first <script>alert(3)</script>\n- [a link](javascript:alert(4))\n\n"
              "```python\nprint(6 * 7)\n```\n\n<img src=x onerror=alert(5)>")
ANSWER = ("The answer is **42**.\n\n| part | value |\n|---|---|\n| six | 6 |\n| seven | 7 |\n\n"
          "See [the docs](https://example.com/docs). <script>alert(6)</script>")


def test_the_run_page_renders_replies_as_markdown_and_escapes_their_html(page):
    page.fakes.model.default["llm_step"] = STEP_REPLY
    page.fakes.model.default["aggregator"] = ANSWER
    run_id = page.start()
    assert page.wait(run_id, "done") == "done"
    for path in (f"/runs/{run_id}", f"/runs/{run_id}/body"):
        html = page.client.get(path).text
        assert "<script>alert" not in html and "<img src=x" not in html and "javascript:" not in html.replace(
            "[a link](javascript:alert(4))", "")
        assert html.count('<div class="output markdown"><h2>Findings</h2>') >= 2  # each LLM step
        assert "<li>first &lt;script&gt;alert(3)&lt;/script&gt;</li>" in html
        assert '<span class="nb">print</span>' in html and "&lt;img src=x onerror=alert(5)&gt;" in html
        final = html.split('<div id="final" class="markdown">', 1)[1].split("</div>", 1)[0]
        assert "<strong>42</strong>" in final and "<td>seven</td>" in final and "&lt;script&gt;alert(6)" in final
        assert '<a href="https://example.com/docs" rel="noopener noreferrer" target="_blank">the docs</a>' in final
    assert page.client.get("/static/code.css").status_code == 200
    assert '<link rel="stylesheet" href="/static/code.css">' in page.client.get(f"/runs/{run_id}").text


def test_a_secret_in_a_reply_is_masked_before_it_is_rendered(page, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-MDSECRET4567")
    model = page.fakes.model
    page = Page(page.db, page.runner)  # the scrubber reads the key when the app is made
    model.default["aggregator"] = ("key `sk-test-MDSECRET4567` in [a link](https://e.com/?k=sk-test-MDSECRET4567)"
                                                "\n\n```python\nkey = 'sk-test-MDSECRET4567'\n```")
    run_id = page.start()
    assert page.wait(run_id, "done") == "done"
    html = page.client.get(f"/runs/{run_id}").text
    assert "MDSECRET" not in html and "<code>***</code>" in html and 'href="https://e.com/?k=***"' in html


def test_the_streamed_answer_is_text_until_it_is_final(page):
    from ui_support import Gate

    gate = Gate("**bold** <b>x</b>")
    page.fakes.model.script["aggregator"] = [gate]
    run_id = page.start()
    assert gate.entered.wait(20)
    html = page.client.get(f"/runs/{run_id}/body").text
    assert '<pre id="live-final" class="streaming" data-attempt="">' in html and 'id="final"' not in html
    gate.opened.set()
    assert page.wait(run_id, "done") == "done"
    html = page.client.get(f"/runs/{run_id}/body").text
    assert '<div id="final" class="markdown"><p><strong>bold</strong> &lt;b&gt;x&lt;/b&gt;</p>' in html
    assert 'id="live-final"' not in html
