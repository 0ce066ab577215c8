"""Safe by default: who may talk to the page, and what no page may ever show.

- Bound to loopback (the default), requests must name a loopback host (a DNS-rebinding page cannot read runs).
- With a token (required with --host), every request carries it: ``?token=`` once (it becomes an HttpOnly
  cookie and leaves the address bar), the cookie, or ``Authorization: Bearer``.
- A POST must come from this origin (Origin, else Referer): another site cannot press the page's buttons.
- Every response forbids inline and foreign scripts (CSP), so even text that escaped escaping could not run.
- ``Scrubber`` masks the secrets the server knows (the API key, the database password) in any text shown.
"""

from __future__ import annotations

import hmac
import os
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import URL, Headers, QueryParams
from starlette.responses import PlainTextResponse, RedirectResponse

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
COOKIE = "hierplan_ui_token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY"),
                    (b"cache-control", b"no-store")]
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Scrubber:
    """Replaces each known secret by ***, wherever it appears."""

    def __init__(self, db: str):
        secrets = [os.environ.get("OPENAI_API_KEY") or ""]
        parts = urlsplit(db) if "://" in db else None
        if parts is not None and parts.password:
            secrets.append(parts.password)
        query = dict(p.split("=", 1) for p in (parts.query.split("&") if parts else []) if "=" in p)
        secrets.append(query.get("password", ""))
        # short strings would mask ordinary words; real keys and passwords are longer
        self.secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)

    def __call__(self, value):
        if not isinstance(value, str) or not self.secrets:
            return value
        for secret in self.secrets:
            value = value.replace(secret, "***")
        return value


def _host_name(host_header: str) -> str:
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware around the page's app."""

    def __init__(self, app, *, token: str | None, loopback: bool):
        self.app, self.token, self.loopback = app, token, loopback

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        refusal = self.check(scope)
        if refusal is not None:
            return await refusal(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k, v) for k, v in SECURITY_HEADERS if k not in names]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def check(self, scope):
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.loopback and _host_name(host) not in LOOPBACK_HOSTS:
            return PlainTextResponse("this page answers on 127.0.0.1 only", status_code=403)
        url = URL(scope=scope)
        if self.token is not None:
            query = QueryParams(scope.get("query_string", b""))
            given = query.get("token")
            if given is not None and hmac.compare_digest(given.encode(), self.token.encode()) \
                    and scope["method"] in SAFE_METHODS:
                rest = [(k, v) for k, v in query.multi_items() if k != "token"]
                response = RedirectResponse(url.path + (f"?{urlencode(rest)}" if rest else ""), status_code=303)
                response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict", path="/")
                return response
            if not self._has_token(headers):
                return PlainTextResponse("a token is needed: open the address `hierplan ui` printed "
                                         "(…/?token=…)", status_code=401)
        if scope["method"] not in SAFE_METHODS and not self._same_origin(headers, url):
            return PlainTextResponse("refused: the request did not come from this page", status_code=403)
        return None

    def _has_token(self, headers: Headers) -> bool:
        expected = self.token.encode()
        auth = headers.get("authorization", "")
        candidates = [auth[7:]] if auth.lower().startswith("bearer ") else []
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                candidates.append(value)
        return any(hmac.compare_digest(c.encode(), expected) for c in candidates)

    @staticmethod
    def _same_origin(headers: Headers, url: URL) -> bool:
        own = f"{url.scheme}://{headers.get('host', '')}".lower()
        origin = headers.get("origin")
        if origin is not None:
            return origin.lower() == own
        referer = headers.get("referer")
        return referer is not None and (referer.lower() + "/").startswith(own + "/")
