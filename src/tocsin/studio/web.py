"""Studio's plumbing: templates, the signed-in viewer, HTML errors, forms, CSRF, pagination.

Every page is "parse/authorise → facade call(s) → render" (DESIGN §2). A page raises
:class:`SignInRequired` (→ redirect to ``/login``) or a ``TocsinError`` (→ an HTML error page
with its status and ``detail``); nothing answers 500 for bad input.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar
from urllib.parse import parse_qs, quote, urlencode

from fastapi import Depends, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from tocsin import messages
from tocsin.errors import PermissionDenied, TocsinError
from tocsin.service import Tocsin
from tocsin.service.auth import SCOPES, Principal

from .sessions import COOKIE, Session, Sessions
from .words import skip_reason_words

HERE = Path(__file__).parent
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
P = ParamSpec("P")
R = TypeVar("R")


class SignInRequired(Exception):
    """No session, or its token is no longer valid: go to ``/login``."""


def utc_now(request: Request) -> datetime:
    """The request's instant: the real clock at the edge (an app may set ``studio_clock``)."""
    clock: Callable[[], datetime] | None = getattr(request.app.state, "studio_clock", None)
    return clock() if clock is not None else facade(request).wall_clock()


def facade(request: Request) -> Tocsin:
    tocsin: Tocsin = request.app.state.tocsin
    return tocsin


def sessions(request: Request) -> Sessions:
    store: Sessions = request.app.state.studio_sessions
    return store


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking, and which buttons they get."""

    principal: Principal
    session: Session

    @property
    def reads_schedules(self) -> bool:
        return self.principal.has("schedules:read")

    @property
    def writes_schedules(self) -> bool:
        return self.principal.has("schedules:write")

    @property
    def has_scope(self) -> bool:
        return self.principal.scope in SCOPES

    @property
    def moderator(self) -> bool:
        return self.has_scope and self.principal.may("moderator")

    @property
    def label(self) -> str:
        p = self.principal
        parts = [f"{p.role} of {p.scope} {p.scope_id[:8]}…"] if self.has_scope else []
        parts += sorted(p.permissions)
        return ", ".join(parts) or p.role


def current_viewer(request: Request) -> Viewer:
    """The signed-in viewer; :class:`SignInRequired` when there is none."""
    now = utc_now(request)
    session = sessions(request).get(request.cookies.get(COOKIE), now)
    principal = facade(request).verify_token(session.token, now=now) if session else None
    if session is None or principal is None:
        raise SignInRequired
    return Viewer(principal, session)


ViewerDep = Annotated[Viewer, Depends(current_viewer)]


async def form_fields(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body as a dict (last value wins)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}


FormDep = Annotated[dict[str, str], Depends(form_fields)]


def check_post(viewer: Viewer, form: Mapping[str, str], allowed: bool) -> None:
    """A form POST: its CSRF token must match the session's, and the viewer may write."""
    if not viewer.session.csrf_ok(form.get("csrf")):
        raise PermissionDenied(messages.STUDIO_CSRF_INVALID)
    if not allowed:
        raise PermissionDenied(messages.STUDIO_READ_ONLY)


# --- rendering -------------------------------------------------------------------------------


def _instant(value: object) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def when(value: object, empty: str = "—") -> Markup:
    """A ``<time>`` in UTC; ``studio.js`` rewrites its text in the browser's zone and keeps UTC
    in the ``title`` (hover)."""
    at = _instant(value)
    if at is None:
        return Markup("<span class='muted'>{}</span>").format(empty)
    iso = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    text = at.strftime("%Y-%m-%d %H:%M:%S UTC")
    return Markup("<time datetime='{}' title='{}'>{}</time>").format(iso, text, text)


def utc(value: object) -> str:
    """The instant as plain UTC text (shown beside a localized ``when``)."""
    at = _instant(value)
    return at.strftime("%Y-%m-%d %H:%M UTC") if at is not None else ""


def duration(ms: object) -> str:
    if not isinstance(ms, int | float):
        return "—"
    if ms < 1000:
        return f"{int(ms)} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes = int(ms // 60_000)
    if minutes < 60:
        return f"{minutes} min {int(ms % 60_000 // 1000)} s"
    if minutes < 1440:
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{minutes // 1440} d {minutes % 1440 // 60} h"


ENV = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.policies["json.dumps_kwargs"] = {"default": str, "sort_keys": True}
ENV.filters["when"] = when
ENV.filters["duration"] = duration
ENV.filters["utc"] = utc
ENV.filters["skip_reason"] = skip_reason_words
ENV.filters["urlq"] = lambda text: quote(str(text), safe="")


def render(
    request: Request, template: str, *, viewer: Viewer | None, code: int = 200, **ctx: Any
) -> HTMLResponse:
    html = ENV.get_template(template).render(
        request=request,
        viewer=viewer,
        csrf=viewer.session.csrf if viewer else "",
        code=code,
        **ctx,
    )
    return HTMLResponse(html, status_code=code, headers=SECURITY_HEADERS)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)


def sign_in_redirect(request: Request) -> RedirectResponse:
    """To ``/login``, back to this page afterwards; a form's POST-only path is not a page (it
    would answer 405 after signing in), so a signed-out POST signs in to the viewer's home."""
    if request.method != "GET":
        return redirect("/login")
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return redirect("/login?" + urlencode({"next": target}))


def html_page(fn: Callable[P, Response]) -> Callable[P, Response]:
    """Sign-in redirects and ``TocsinError`` as HTML error pages, for one studio route."""

    @functools.wraps(fn)
    def page(*args: P.args, **kwargs: P.kwargs) -> Response:
        request = kwargs["request"]
        assert isinstance(request, Request)
        try:
            return fn(*args, **kwargs)
        except SignInRequired:
            return sign_in_redirect(request)
        except TocsinError as exc:
            viewer = kwargs.get("viewer")
            return render(
                request,
                "error.html",
                viewer=viewer if isinstance(viewer, Viewer) else None,
                code=exc.status,
                detail=exc.detail,
            )

    return page


@dataclass(frozen=True, slots=True)
class Pager:
    """Page ``page`` (1-based) of ``total`` items, ``size`` a page; links keep other params."""

    page: int
    size: int
    total: int
    base: str
    params: tuple[tuple[str, str], ...] = ()
    key: str = "page"  # the query parameter holding the page number

    @property
    def skip(self) -> int:
        return (self.page - 1) * self.size

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.size))

    def link(self, page: int) -> str:
        return self.base + "?" + urlencode([*self.params, (self.key, str(page))])

    @property
    def prev(self) -> str | None:
        return self.link(self.page - 1) if self.page > 1 else None

    @property
    def next(self) -> str | None:
        return self.link(self.page + 1) if self.page < self.pages else None


def pager(
    request: Request,
    page: int,
    size: int,
    total: int,
    *,
    at: str | None = None,
    **params: str | None,
) -> Pager:
    """Links to ``at`` (default: this page's path) keeping the non-empty ``params``."""
    kept = tuple((k, v) for k, v in params.items() if v)
    return Pager(page=page, size=size, total=total, base=at or request.url.path, params=kept)


__all__ = [
    "FormDep",
    "Pager",
    "SignInRequired",
    "Viewer",
    "ViewerDep",
    "check_post",
    "current_viewer",
    "facade",
    "html_page",
    "pager",
    "redirect",
    "render",
    "sessions",
    "sign_in_redirect",
    "utc_now",
    "when",
]
