"""The page's routes (Starlette): runs list and form, a run, its picture, the files its steps saved, its live
events, and the actions.

Every action is the run service's, as the CLI's are: start = `hierplan run --json` (its uploads as `--file`),
approve/reject/edit = `hierplan resume --approve | --reject | --edit` of the plan or of a tool call (approve_tools;
the edited plan validated first, nothing saved until it is valid; edited arguments must be a JSON object, and the
approve_tool node asks again, with the reason, when they do not fit the tool), resume = `hierplan resume`, fork =
`hierplan fork --at`. Reads and writes of the database run in the thread pool, never on the loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hierplan.app.fields import from_form
from hierplan.errors import HierplanError, RunNotFoundError, UsageError
from hierplan.store import check_run_id, display_name
from hierplan.ui import markdown, views
from hierplan.ui.guard import Guard, Scrubber
from hierplan.ui.runner import Runner
from hierplan.ui.uploads import (MAX_FORM_BYTES, Upload, is_multipart, multipart_form, upload_errors,
                                 upload_folder)

HERE = Path(__file__).parent
MiB = 1024 * 1024
KEEPALIVE_S = 15.0
# A saved file's own CSP: opened directly, even an HTML or SVG one runs nothing (it is a download anyway).
ARTIFACT_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
ACTIONS = ("approve", "reject", "edit", "resume")
log = logging.getLogger("hierplan.ui")


def _templates(scrub: Scrubber):
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             finalize=scrub)  # every {{ }} passes the scrubber, then is escaped
    # model text as Markdown, and programs highlighted: scrubbed first, then made into HTML that holds no tag of
    # the text's own (hierplan/ui/markdown.py escapes them all), so it is marked safe
    env.filters["markdown"] = lambda v: Markup(markdown.render_markdown(None if v is None else scrub(str(v))))
    env.filters["code"] = lambda v, lang="python": Markup(markdown.render_code(scrub(str(v or "")), lang))
    env.filters["json"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False)
    env.filters["secs"] = lambda v: f"{v:.1f}" if v is not None else ""
    env.filters["count"] = lambda v: f"{v:,}" if v is not None else ""
    return env


class Page:
    def __init__(self, runner: Runner, scrub: Scrubber):
        self.runner, self.db, self.scrub = runner, runner.db, scrub
        self.env = _templates(scrub)

    def html(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("db", display_name(self.db))
        return HTMLResponse(self.env.get_template(name).render(**context), status_code=status)

    def failure(self, exc: Exception) -> HTMLResponse:
        """A user error as one line (scrubbed by the template); anything else without its details."""
        if isinstance(exc, HierplanError):
            return self.html("error.html", 404 if isinstance(exc, RunNotFoundError) else
                             (400 if isinstance(exc, UsageError) else 500), message=" ".join(str(exc).split()))
        log.exception("page error")
        return self.html("error.html", 500, message=f"internal error ({type(exc).__name__}); see the server's log")

    # --- pages --------------------------------------------------------------------------------------------
    async def runs(self, request: Request, error: str | None = None, form: dict | None = None, status: int = 200):
        try:
            rows = await run_in_threadpool(views.run_rows, self.db)
        except Exception as exc:  # noqa: BLE001
            return self.failure(exc)
        per_file, together = self.runner.file_limits()
        return self.html("runs.html", status, rows=rows, error=error, form=form or {},
                         mcp_servers=self.runner.mcp_servers(),
                         model=self.runner.options.get("model") or "the default model",
                         file_limit=f"{per_file / MiB:,.1f} MiB", files_limit=f"{together / MiB:,.1f} MiB")

    async def run(self, request: Request, error: str | None = None, plan_text: str | None = None,
                  status: int = 200, arguments_text: str | None = None):
        try:
            view = await run_in_threadpool(views.run_view, self.db, request.path_params["run_id"], self.runner.hub)
        except Exception as exc:  # noqa: BLE001
            return self.failure(exc)
        return self.html("run.html", status, v=view, error=error, plan_text=plan_text,
                         arguments_text=arguments_text)

    async def body(self, request: Request):
        """The run's changing part, re-read from the database after each live event."""
        try:
            view = await run_in_threadpool(views.run_view, self.db, request.path_params["run_id"], self.runner.hub)
        except Exception as exc:  # noqa: BLE001
            return self.failure(exc)
        return self.html("run_body.html", v=view, error=None, plan_text=None, arguments_text=None)

    async def picture(self, request: Request):
        try:
            svg = await run_in_threadpool(views.picture_svg, self.db, request.path_params["run_id"])
        except Exception as exc:  # noqa: BLE001
            return self.failure(exc)
        # shown through <img>, where an SVG runs no script; its own CSP covers opening it directly
        return Response(self.scrub(svg.decode("utf-8")), media_type="image/svg+xml",
                        headers={"content-security-policy": "default-src 'none'; style-src 'unsafe-inline'"})

    async def artifact(self, request: Request):
        """A file a Python step saved under out/: an image (PNG, JPEG...) inline, anything else (an SVG too) as a
        download; 404 for a run, step or name the run does not have."""
        p = request.path_params
        try:
            found = await run_in_threadpool(views.artifact, self.db, p["run_id"], p["step_id"], p["name"])
            path = await run_in_threadpool(views.stored_path, self.db, found)
        except Exception as exc:  # noqa: BLE001
            return self.failure(exc)
        return artifact_response(found, path)

    async def events(self, request: Request):
        """Server-sent events of a run this server works on; ends with the run (or at once: `idle`)."""
        try:
            run_id = check_run_id(request.path_params["run_id"])
        except UsageError as exc:
            return self.failure(exc)
        hub = self.runner.hub
        queue = hub.subscribe(run_id)

        async def stream():
            try:
                yield "retry: 3000\n\n"
                if not hub.active(run_id):
                    yield "event: idle\ndata: {}\n\n"
                    return
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                    except asyncio.TimeoutError:
                        yield ": keepalive\n\n"
                        continue
                    if event["event"] == "stream_end":
                        yield "event: idle\ndata: {}\n\n"
                        return
                    data = self.scrub(json.dumps(event, ensure_ascii=False, default=str))
                    yield f"data: {data}\n\n"
            finally:
                hub.unsubscribe(run_id, queue)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"})

    # --- actions ------------------------------------------------------------------------------------------
    async def start(self, request: Request):
        form: dict[str, str] = {}
        try:
            with upload_folder() as folder:  # removed once the run is prepared: its files are in the store by then
                uploads: list[Upload] = []
                if is_multipart(request):  # the page's form: its file field makes it multipart, chosen or not
                    form, uploads = await multipart_form(request, folder, self.runner.file_limits())
                else:
                    form = await form_of(request)
                options = from_form(form)
                run_id = await run_in_threadpool(self._start, form.get("task") or "", options,
                                                 form.get("kind") or None, uploads, folder,
                                                 str(form.get("thread") or "").strip() or None)
        except UsageError as exc:
            return await self.runs(request, error=str(exc), form=form, status=400)
        except Exception as exc:  # noqa: BLE001
            return self.failure(exc)
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    def _start(self, task: str, options: dict[str, Any], kind: str | None, uploads: list[Upload],
               folder: str, thread: str | None = None) -> str:
        """A new run with the uploads as its files, read by the run service as `--file` is (copied into the
        file store by streaming); with ``thread``, that thread's next turn."""
        with upload_errors(uploads, folder):
            return self.runner.start(task, options, kind, files=[u.path for u in uploads], thread=thread)

    async def decide(self, request: Request):
        run_id = request.path_params["run_id"]
        action = request.path_params["action"]
        if action not in ACTIONS:
            return self.html("error.html", 404, message=f"no such action {action!r}")
        try:
            form = await form_of(request)
        except UsageError as exc:
            return self.failure(exc)
        if action == "resume":
            return await self._act(request, self.runner.resume, run_id)
        decision: dict[str, Any] = {"action": action}
        if action == "edit":
            from pydantic import ValidationError

            from hierplan.app.runs import approval_request
            from hierplan.nodes.tool_approval import is_tool_request, parse_arguments
            from hierplan.schema import plan_models, short_error

            try:
                asked = await run_in_threadpool(approval_request, self.db, run_id) or {}
            except Exception as exc:  # noqa: BLE001
                return self.failure(exc)
            if is_tool_request(asked):  # a tool call's arguments: a JSON object here, fitted to the tool by the node
                text = str(form.get("arguments") or "")
                try:
                    decision = {"action": "edit", "arguments": parse_arguments(text)}
                except ValueError as exc:  # shown next to the arguments, which stay as typed; nothing is saved
                    return await self.run(request, error=str(exc), arguments_text=text, status=400)
                return await self._act(request, self.runner.decide, run_id, decision)
            text = str(form.get("plan") or "")
            # the registered tools the run offers may be named, as the approval node itself allows
            plan_model = plan_models(tuple(asked.get("tools") or ())).plan
            try:
                decision = {"action": "edit", "plan": plan_model.model_validate_json(text).model_dump(mode="json")}
            except ValidationError as exc:  # shown next to the plan, which stays as typed; nothing is saved
                return await self.run(request, error=f"the edited plan is invalid: {short_error(exc)}",
                                      plan_text=text, status=400)
        return await self._act(request, self.runner.decide, run_id, decision)

    async def fork(self, request: Request):
        try:
            form = await form_of(request)
        except UsageError as exc:
            return self.failure(exc)
        return await self._act(request, self.runner.fork, request.path_params["run_id"],
                               str(form.get("checkpoint") or ""))

    async def _act(self, request: Request, action, *args):
        try:
            run_id = await run_in_threadpool(action, *args)
        except UsageError as exc:
            if isinstance(exc, RunNotFoundError):
                return self.failure(exc)
            return await self.run(request, error=str(exc), status=400)
        except Exception as exc:  # noqa: BLE001
            return self.failure(exc)
        return RedirectResponse(f"/runs/{run_id}", status_code=303)


async def form_of(request: Request) -> dict[str, str]:
    """The page's forms but the start form are URL-encoded (no files), parsed here; the start form is
    multipart (uploads.multipart_form), URL-encoded from a script."""
    from urllib.parse import parse_qsl

    body = await request.body()
    if not body:
        return {}  # a bare button (approve, reject, resume)
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        raise UsageError("send the page's form (application/x-www-form-urlencoded, or multipart/form-data "
                         "to start a run)")
    if len(body) > MAX_FORM_BYTES:
        raise UsageError(f"the form is {len(body):,} bytes; the limit is {MAX_FORM_BYTES:,}")
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))


def artifact_response(artifact: dict[str, Any], path: str) -> Response:
    """The saved file, streamed from the file store's copy at ``path``, as what it is (Content-Type), never
    sniffed as anything else; inline only for the images that run nothing (views.INLINE_TYPES), a download
    otherwise."""
    from starlette.responses import FileResponse

    media = artifact["media_type"]
    name = artifact["name"].rsplit("/", 1)[-1]
    plain = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name) or "file"
    how = "inline" if media in views.INLINE_TYPES else "attachment"
    return FileResponse(path, media_type=media, headers={
        "content-type": media, "x-content-type-options": "nosniff", "content-security-policy": ARTIFACT_CSP,
        "content-disposition": f"{how}; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}",
        "etag": f'"{artifact["sha256"]}"'})


def create_app(db: str, options: dict[str, Any] | None = None, *, token: str | None = None,
               loopback: bool = True, runner: Runner | None = None):
    """The page as an ASGI app. ``runner`` (tests) or one made here on ``db`` with the server's ``options``."""
    from contextlib import asynccontextmanager

    runner = runner or Runner(db, options or {})
    page = Page(runner, Scrubber(db))

    @asynccontextmanager
    async def lifespan(app):
        yield
        runner.stop()  # runs still working here are interrupted, resumable later

    routes = [
        Route("/", page.runs),
        Route("/runs", page.start, methods=["POST"]),
        Route("/runs/{run_id}", page.run),
        Route("/runs/{run_id}/body", page.body),
        Route("/runs/{run_id}/picture.svg", page.picture),
        Route("/runs/{run_id}/artifacts/{step_id}/{name:path}", page.artifact),
        Route("/runs/{run_id}/events", page.events),
        Route("/runs/{run_id}/fork", page.fork, methods=["POST"]),
        Route("/runs/{run_id}/{action:str}", page.decide, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.runner = runner
    return Guard(app, token=token, loopback=loopback)
