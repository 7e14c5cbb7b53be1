"""The app's routes indexed by method and first path segment, tried before FastAPI's own scan.

FastAPI tries an app's routes in order, an included router's route by route, about 21,000
instructions for each route tried: a run's two requests were matched against 3 and 25 routes. The
index keeps, for each method and first path segment, the API routes that could answer such a
request, in the app's order; the first of them whose path matches is the route the scan would have
found first, so it serves the request at once. What the index cannot answer for certain goes to the
scan unchanged: a request no indexed route matches (a 404, a 405 naming the methods, a redirect
for a trailing slash), a segment a mount or another kind of route may answer, a route whose first
segment is a parameter (then every request), an app served under a root path. The app's list of
routes, and so the order of ``/openapi.json``, stays as it was. (A request served through the index
does not name its route to FastAPI's own telemetry, which GraphARC does not turn on.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import routing as fastapi_routing
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Receive, Scope, Send

CHOSEN = "grapharc.route_index.app"
"""The scope key carrying the chosen route's ASGI app from ``matches`` to ``handle``."""
EVERY_SEGMENT = "{"
"""A route of this first segment (it starts with a parameter) may answer a request of any."""


@dataclass(frozen=True)
class Candidate:
    """An API route as the index tries it: its path pattern, its match and the app serving it."""

    pattern: re.Pattern[str]
    matches: Any  # (scope) -> (Match, child scope), the route's own
    app: ASGIApp
    route: BaseRoute


def first_segment(path: str) -> str:
    """The first segment of a path (``threads`` of ``/threads/t-1/runs``), a route's or a request's;
    ``{`` when a route's starts with a parameter."""
    segment = path[1:].partition("/")[0]
    return EVERY_SEGMENT if "{" in segment else segment


def build_index(routes: Iterable[Any]) -> dict[tuple[str, str], tuple[Candidate, ...]]:
    """The API routes among ``routes`` (FastAPI's route contexts, in the app's order) by method and
    first segment, but for the segments another kind of route may answer (all of them when one
    starts with a parameter)."""
    index: dict[tuple[str, str], list[Candidate]] = {}
    unindexed: set[str] = set()
    for context in routes:
        path = getattr(context, "path", None) or ""
        methods = getattr(context, "methods", None)
        segment = first_segment(path) if path.startswith("/") else EVERY_SEGMENT
        if not isinstance(context.original_route, fastapi_routing.APIRoute) or not methods:
            unindexed.add(segment)
            continue
        candidate = Candidate(context.path_regex, context.matches, context.app, context.original_route)
        for method in methods:
            index.setdefault((method, segment), []).append(candidate)
    if EVERY_SEGMENT in unindexed or any(segment == EVERY_SEGMENT for _, segment in index):
        return {}
    return {key: tuple(found) for key, found in index.items() if key[1] not in unindexed}


class RouteIndex(BaseRoute):
    """A route placed first in an app's routes: it matches a request only when an indexed API route
    fully matches it, and then serves it with that route; otherwise the routes after it are tried
    as before. Built from the app's routes at the first request, when all are added."""

    def __init__(self, routes: list[BaseRoute]) -> None:
        """``routes``: the app's own list (this index among them), read when the first request comes."""
        self.routes = routes
        self.index: Mapping[tuple[str, str], tuple[Candidate, ...]] | None = None

    def candidates(self, method: str, path: str) -> tuple[Candidate, ...]:
        """The indexed routes a ``method`` request of ``path`` may be served by, in the app's order."""
        if self.index is None:
            others = [route for route in self.routes if route is not self]
            self.index = build_index(fastapi_routing.iter_route_contexts(others))
        return self.index.get((method, first_segment(path)), ())

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or scope.get("root_path"):
            return Match.NONE, {}
        path = scope["path"]
        for candidate in self.candidates(scope["method"], path):
            if candidate.pattern.match(path) is None:
                continue
            match, child_scope = candidate.matches(scope)
            if match is not Match.FULL:
                return Match.NONE, {}  # not one the index can answer for certain: the scan decides
            return Match.FULL, {**child_scope, "route": candidate.route, CHOSEN: candidate.app}
        return Match.NONE, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await scope.pop(CHOSEN)(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)  # the routes it indexes answer for themselves


def index_routes(routes: list[BaseRoute]) -> None:
    """Put a ``RouteIndex`` of ``routes`` (an app's) before them; without FastAPI's
    ``iter_route_contexts`` (before 0.137.2) the routes stay as they are."""
    if hasattr(fastapi_routing, "iter_route_contexts"):
        routes.insert(0, RouteIndex(routes))
