"""A local stand-in for an OpenTelemetry collector (OTLP over HTTP, protobuf) and for LangSmith's run ingestion,
each a small http.server in a thread, recording what it is sent. For tests/test_tracing.py and
bench/tracing_overhead.py; nothing leaves the machine.

    python tests/otlp_receiver.py    # a receiver in a process of its own: prints its URL, counts spans at GET /count
"""

from __future__ import annotations

import gzip
import http.server
import json
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Span:
    """One received span, its attribute values as Python values."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    kind: int
    status: int
    """0 unset, 1 ok, 2 error (OTLP's StatusCode)."""
    attributes: dict[str, Any]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1, a free port, served from a daemon thread until ``close``."""

    def __init__(self, handle: Callable[[http.server.BaseHTTPRequestHandler, bytes], tuple[int, str, bytes]]):
        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                elif self.headers.get("Content-Encoding") == "deflate":
                    body = zlib.decompress(body)
                status, kind, reply = handle(self, body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = do_PATCH = do_PUT = _any

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class OtlpReceiver(_Server):
    """Takes OTLP/HTTP protobuf trace exports at ``url + "/v1/traces"`` and keeps their spans in ``spans``."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        super().__init__(self._handle)

    def _handle(self, request: http.server.BaseHTTPRequestHandler, body: bytes) -> tuple[int, str, bytes]:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                             ExportTraceServiceResponse)

        if request.command == "GET" and request.path == "/count":  # for a receiver in another process (__main__)
            return 200, "application/json", json.dumps({"spans": len(self.spans)}).encode()
        self.paths.append(request.path)
        if request.command != "POST" or request.path != "/v1/traces":
            return 404, "text/plain", b"not found"
        spans = [Span(name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                      parent_id=s.parent_span_id.hex() or None, kind=s.kind, status=s.status.code,
                      attributes=_attributes(s.attributes), resource=_attributes(rs.resource.attributes),
                      start_ns=s.start_time_unix_nano, end_ns=s.end_time_unix_nano)
                 for rs in ExportTraceServiceRequest.FromString(body).resource_spans
                 for ss in rs.scope_spans for s in ss.spans]
        with self._lock:
            self.spans.extend(spans)
        return 200, "application/x-protobuf", ExportTraceServiceResponse().SerializeToString()

    def wait_for(self, done: Callable[[list[Span]], bool], timeout_s: float = 30) -> list[Span]:
        """The spans once ``done(spans)`` holds (else, after ``timeout_s``, as they are)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not done(list(self.spans)):
            time.sleep(0.05)
        return list(self.spans)


def _attributes(pairs: Any) -> dict[str, Any]:
    return {a.key: _value(a.value) for a in pairs}


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


class LangSmithStandIn(_Server):
    """Answers what LangSmith's client asks (``GET /info``, runs posted as multipart or JSON batches) and keeps each
    run it is sent, as ``(kind, run)``: kind ``post`` (a run started, or a whole run) or ``patch`` (its end)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []
        self.paths: list[str] = []
        super().__init__(self._handle)

    def _handle(self, request: http.server.BaseHTTPRequestHandler, body: bytes) -> tuple[int, str, bytes]:
        self.paths.append(f"{request.command} {request.path}")
        kind = request.headers.get("Content-Type") or ""
        if request.path.startswith("/runs/multipart") and "boundary=" in kind:
            self.runs.extend(_multipart_runs(body, kind.split("boundary=", 1)[1].strip('"')))
        elif request.path.startswith("/runs/batch") and body:
            batch = json.loads(body)
            self.runs.extend(("post", run) for run in batch.get("post") or [])
            self.runs.extend(("patch", run) for run in batch.get("patch") or [])
        elif request.path.rstrip("/") == "/runs" and request.command == "POST" and body:
            self.runs.append(("post", json.loads(body)))
        return 200, "application/json", b"{}"

    def wait_for(self, done: Callable[[list[tuple[str, dict]]], bool], timeout_s: float = 30) -> list:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not done(list(self.runs)):
            time.sleep(0.05)
        return list(self.runs)


def _multipart_runs(body: bytes, boundary: str) -> list[tuple[str, dict[str, Any]]]:
    """The runs of a multipart post: the parts named ``post.<id>`` and ``patch.<id>`` (their inputs, outputs and
    attachments come as parts of their own, ``post.<id>.inputs``, which are not kept)."""
    runs = []
    for part in body.split(b"--" + boundary.encode()):
        head, _, content = part.partition(b"\r\n\r\n")
        found = re.search(rb'name="(post|patch)\.[0-9a-f-]+"', head)
        if found and content.strip():
            runs.append((found.group(1).decode(), json.loads(content.rstrip(b"\r\n"))))
    return runs


if __name__ == "__main__":
    receiver = OtlpReceiver()
    print(receiver.url, flush=True)
    receiver.thread.join()
