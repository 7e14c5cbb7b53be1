"""Errors as ``application/problem+json`` documents (RFC 9457): a status, a title, what is wrong
and what to do, never a stack trace."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from grapharc.assistants import errors as assistant_errors
from grapharc.assistants.absent import AssistantsUnavailableError
from grapharc.crons import errors as cron_errors
from grapharc.errors import GraphARCError
from grapharc.runs import errors as run_errors
from grapharc.session import errors as session_errors

PROBLEM_TYPE = "application/problem+json"

_STATUS: tuple[tuple[type[GraphARCError], int], ...] = (
    (run_errors.UnknownRunError, 404),
    (cron_errors.UnknownCronError, 404),
    (cron_errors.CronStoreError, 503),
    (cron_errors.CronError, 422),  # a cron expression, time zone or end time that cannot be read
    (assistant_errors.UnknownAssistantError, 404),
    (assistant_errors.UnknownVersionError, 404),
    (assistant_errors.AssistantExistsError, 409),
    (AssistantsUnavailableError, 501),
    (assistant_errors.AssistantStoreError, 503),
    (run_errors.ThreadBusyError, 409),
    (run_errors.RunInFlightError, 409),
    (session_errors.UnknownSessionError, 404),
    (session_errors.UnknownGraphError, 404),
    (session_errors.UnknownApprovalError, 404),
    (session_errors.UnknownCheckpointError, 404),
    (session_errors.DeciderNotAllowedError, 403),
    (session_errors.SessionExistsError, 409),
    (session_errors.SessionBusyError, 409),
    (session_errors.ThreadPausedError, 409),
    (session_errors.ThreadEndedError, 409),
    (session_errors.ThreadNotPausedError, 409),
    (session_errors.ApprovalError, 409),
    (session_errors.SessionInputError, 422),
    (session_errors.PruneRefusedError, 422),
    (session_errors.CheckpointerCapabilityError, 501),  # this server's checkpointer lacks it: not the client
    (run_errors.RunStoreError, 503),  # the store failed (locked past its wait, unreachable): not the client
    (session_errors.SessionStoreError, 503),
)

_log = logging.getLogger("grapharc.server")


class ApiProblem(GraphARCError):
    """A request the API refuses, with the HTTP status it answers and any field errors."""

    def __init__(self, status: int, message: str, *, hint: str = "",
                 errors: list[dict[str, Any]] | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.errors = errors or []
        self.headers = headers


class ProblemResponse(JSONResponse):
    """A problem document, written in ASCII: a message quoting a request's value may hold a lone
    surrogate (JSON can carry one escaped, UTF-8 cannot carry it at all)."""

    media_type = PROBLEM_TYPE

    def render(self, content: Any) -> bytes:
        return json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")


def problem(status: int, detail: str, *, hint: str = "", errors: list[dict[str, Any]] | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    """A problem document answering ``status``."""
    from http import HTTPStatus

    body: dict[str, Any] = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
                            "detail": bounded(detail)}
    if hint:
        body["hint"] = bounded(hint)
    if errors:
        body["errors"] = errors
    return ProblemResponse(body, status_code=status, headers=headers)


def bounded(text: str, head: int = 700, tail: int = 200) -> str:
    """``text`` as a problem document carries it: a message quoting a request's value of 100 KB
    keeps its beginning and end, and says how much of the middle it left out."""
    if len(text) <= head + tail + 100:
        return text
    return f"{text[:head]} ... ({len(text) - head - tail:,} characters left out) ... {text[-tail:]}"


def status_of(error: GraphARCError) -> int:
    """The HTTP status a library error answers (input errors 422, conflicts 409, a store that
    failed 503, else 400)."""
    if isinstance(error, ApiProblem):
        return error.status
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 422 if "Input" in type(error).__name__ else 400


_UNPARSED_BODY = "There was an error parsing the body"
"""FastAPI's detail for a body its JSON reading failed on before parsing (not UTF-8, say)."""


def _unparsed_body(route: str, cause: BaseException | None) -> tuple[str, str]:
    """Why FastAPI could not read a JSON body, and what to send instead: what it raised says
    whether the bytes were not UTF-8 or a number held more digits than Python converts."""
    if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
        limit = sys.get_int_max_str_digits()
        return (f"the body of {route} holds a number too long to read (over {limit} digits)",
                "send a number of fewer digits, or send it as a string")
    if cause is None or isinstance(cause, UnicodeDecodeError):
        return (f"the body of {route} could not be read as JSON text (UTF-8)",
                "send a JSON document, encoded in UTF-8, with content-type application/json")
    return (f"the body of {route} could not be read as JSON: {type(cause).__name__}",
            "send a JSON document with content-type application/json")


def _parts(fields: list[dict[str, Any]]) -> str:
    """Which parts of a request its validation errors are in ('body', 'query', 'body and query')."""
    parts = dict.fromkeys(str(f["loc"][0]) for f in fields if f["loc"]) or {"body": None}
    return " and ".join(parts)


def install_problem_handlers(app: FastAPI) -> None:
    """Answer every error the API raises, and any it did not expect, with a problem document."""

    @app.exception_handler(GraphARCError)
    async def library_error(_request: Request, error: GraphARCError) -> JSONResponse:
        errors = error.errors if isinstance(error, ApiProblem) else None
        headers = error.headers if isinstance(error, ApiProblem) else None
        return problem(status_of(error), str(error), hint=error.hint, errors=errors, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, error: RequestValidationError) -> JSONResponse:
        fields = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
                  for e in error.errors()]
        return problem(422, f"the request's {_parts(fields)} does not match what this route takes",
                       errors=fields, hint="fix the fields listed in 'errors'; unknown fields are refused")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        headers = dict(error.headers or {})
        detail, hint = str(error.detail), ""
        route = f"{request.method} {bounded(request.url.path, 200, 50)}"
        if error.status_code == 404 and detail == "Not Found":
            detail, hint = f"this server has no route {route}", "GET /openapi.json lists the routes it has"
        elif error.status_code == 405 and detail == "Method Not Allowed":
            taken = headers.get("Allow") or "no method"
            detail = f"this server has no route {route}; that path takes {taken}"
        elif error.status_code == 400 and detail == _UNPARSED_BODY:
            detail, hint = _unparsed_body(route, error.__cause__)
        return problem(error.status_code, detail, hint=hint, headers=headers)

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, error: Exception) -> JSONResponse:
        _log.error("request failed: %s: %s", type(error).__name__, error)
        return problem(500, "the server failed to answer this request; its log says why")
