"""Sign-in and sign-out: ``/login`` (form, or ``?token=`` from ``make run``) and ``/logout``.

``GET /login?token=…`` validates the token, sets the session cookie and redirects (303) to
``next`` (default ``/workflows/schedules``), so the token leaves the address bar at once. Every
sign-in (link or form, right token or wrong) counts against its client address's limit: past it,
429 ``{"detail": …}`` with ``Retry-After``. The
sign-in form carries a CSRF token of its own (double submit: an ``HttpOnly``, ``SameSite=Strict``
cookie equal to a hidden field), as every studio form does.
"""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from tocsin import messages
from tocsin.errors import PermissionDenied

from .sessions import COOKIE, SESSION_TTL, SignInLimiter
from .web import FormDep, check_post, current_viewer, facade, redirect, render, sessions, utc_now

router = APIRouter(include_in_schema=False)
LOGIN_CSRF = "tocsin_login_csrf"
HOME = "/workflows/schedules"
Next = Annotated[str, Query(max_length=500)]


def _safe_next(target: str | None) -> str:
    """Only a local path (never ``//host`` or a scheme): no open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return HOME
    return target


def _cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    """``HttpOnly``, ``SameSite=Strict``; ``Secure`` whenever the page came over HTTPS."""
    secure = request.url.scheme == "https"
    response.set_cookie(
        name, value, max_age=max_age, httponly=True, samesite="strict", path="/", secure=secure
    )


def _sign_in(request: Request, token: str, target: str) -> Response:
    now = utc_now(request)
    limiter: SignInLimiter = request.app.state.studio_sign_ins
    address = request.client.host if request.client is not None else ""
    wait = limiter.admit(address, now)
    if wait:
        detail = messages.studio_sign_in_limited(limiter.per_minute, wait)
        return JSONResponse({"detail": detail}, status_code=429, headers={"Retry-After": str(wait)})
    principal = facade(request).verify_token(token, now=now)
    if principal is None:
        # the form again, with the reason (200: a page to fill in, not a failed load)
        return _login_form(request, target, error=messages.STUDIO_TOKEN_INVALID)
    session = sessions(request).open(token, now)
    landing = _safe_next(target)
    if landing == HOME and not principal.has("schedules:read"):
        landing = "/tables"  # a table token's home
    response = redirect(landing)
    _cookie(request, response, COOKIE, session.id, int(SESSION_TTL.total_seconds()))
    response.delete_cookie(LOGIN_CSRF, path="/")
    return response


def _login_form(request: Request, target: str, *, error: str = "", status: int = 200) -> Response:
    csrf = secrets.token_urlsafe(32)
    response = render(
        request,
        "login.html",
        viewer=None,
        code=status,
        login_csrf=csrf,
        next=_safe_next(target),
        error=error,
    )
    _cookie(request, response, LOGIN_CSRF, csrf, 3600)
    return response


@router.get("/login")
def login_page(
    request: Request,
    token: Annotated[str | None, Query(max_length=200)] = None,
    next: Next = HOME,
) -> Response:
    """The sign-in form; with ``?token=`` sign in at once and redirect away from the token."""
    if token:
        return _sign_in(request, token, next)
    return _login_form(request, next)


@router.post("/login")
def login_submit(request: Request, form: FormDep) -> Response:
    given, expected = form.get("csrf", ""), request.cookies.get(LOGIN_CSRF, "")
    if not expected or not secrets.compare_digest(given.encode(), expected.encode()):
        return render(
            request, "error.html", viewer=None, code=403, detail=messages.STUDIO_CSRF_INVALID
        )
    token = form.get("token", "").strip()
    if not token or len(token) > 200:
        return _login_form(request, form.get("next", HOME), error=messages.STUDIO_TOKEN_INVALID)
    return _sign_in(request, token, form.get("next", HOME))


@router.post("/logout")
def logout(request: Request, form: FormDep) -> Response:
    viewer = current_viewer(request)
    try:
        check_post(viewer, form, allowed=True)
    except PermissionDenied as exc:
        return render(request, "error.html", viewer=viewer, code=403, detail=exc.detail)
    sessions(request).close(viewer.session.id)
    response = redirect("/login")
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/")
def home() -> Response:
    return redirect(HOME)


__all__ = ["router"]
