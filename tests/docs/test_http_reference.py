"""The HTTP API reference page: rendered from the server's OpenAPI document, it lists exactly the
routes a server serving everything answers at ``/openapi.json``, each schema with its fields; a
route added to the app appears without a change to the page, and a route that does not say what it
does fails ``mkdocs build --strict``, named.
"""

from __future__ import annotations

import html
import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from grapharc.server import app as server_app
from grapharc.server.auth import token_digest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "docs"), str(ROOT / "tests" / "grapharc-server")]  # the helpers beside
from server_process import serving  # type: ignore[import-not-found]  # noqa: E402
from test_site import copy_of_the_project, mkdocs_build  # type: ignore[import-not-found]  # noqa: E402

HOOK = ROOT / "docs" / "hooks" / "http_reference.py"
TOKEN = "a-token-that-reads-the-openapi-document"
OPERATION = re.compile(r'<h3 id="[^"]*"><code>(GET|POST|PUT|PATCH|DELETE) ([^<]+)</code>')


def load_hook() -> ModuleType:
    """The hook module, loaded from its file as mkdocs loads it."""
    spec = importlib.util.spec_from_file_location("http_reference_under_test", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def routes_of(document: dict[str, Any]) -> set[str]:
    return {f"{method.upper()} {path}" for path, ops in document["paths"].items() for method in ops}


@pytest.fixture(scope="module")
def served_document(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The ``/openapi.json`` of a real ``grapharc serve`` with a registered graph and an auth file."""
    folder = tmp_path_factory.mktemp("served")
    auth = folder / "auth.toml"
    auth.write_text(f'[users.ops]\n[tokens.docs]\nsha256 = "{token_digest(TOKEN)}"\nuser = "ops"\n')
    with serving(folder / "sessions", "--registry", "grapharc.examples.approval:register_credit_graph",
                 "--auth-file", str(auth)) as server:
        url = str(server.json_announcement()["url"]).rstrip("/")
        answer = httpx.get(f"{url}/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        assert answer.status_code == 200, answer.text
        yield answer.json()


@pytest.fixture(scope="module")
def http_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The HTTP reference page as ``make docs`` builds it."""
    folder = tmp_path_factory.mktemp("site")
    assert mkdocs_build(ROOT, folder).returncode == 0
    return (folder / "reference" / "http-api" / "index.html").read_text()


def test_the_page_lists_exactly_the_routes_a_full_server_describes(http_page, served_document):
    listed = [f"{method} {html.unescape(path)}" for method, path in OPERATION.findall(http_page)]
    assert len(listed) == len(set(listed)) and len(listed) > 50
    assert set(listed) == routes_of(served_document)


def test_every_schema_is_shown_with_each_of_its_fields():
    hook = load_hook()
    document = hook.openapi_document()
    page = hook.render(document)
    schema_part = page.split("## Schemas", 1)[1]
    sections = dict(re.findall(r"^### `(\w+)`\n(.*?)(?=^### |\Z)", schema_part, re.S | re.M))
    schemas = document["components"]["schemas"]
    assert sorted(sections) == sorted(schemas)
    for name, schema in schemas.items():
        for field in schema.get("properties", {}):
            assert f"| `{field}` |" in sections[name], f"{name}.{field}"


def test_a_route_added_to_the_app_appears_on_the_page(monkeypatch):
    build = server_app.create_app

    def with_a_new_route(**options: Any) -> FastAPI:
        app = build(**options)

        @app.get("/added-for-the-test", tags=["meta"])
        def added() -> dict[str, str]:
            """A route the page has never heard of."""
            return {}

        return app

    monkeypatch.setattr(server_app, "create_app", with_a_new_route)
    hook = load_hook()
    page = hook.on_page_markdown(f"# HTTP API\n\n{hook.MARKER}\n")
    assert "### `GET /added-for-the-test`" in page and "A route the page has never heard of." in page


ADDED_ROUTE_HOOK = '''
"""Adds a route without a docstring to every app the server builds (a test's breakage)."""
from grapharc.server import app as server_app

build = server_app.create_app


def undocumented_app(**options):
    app = build(**options)

    @app.get("/undocumented")
    def undocumented():
        return {}

    return app


server_app.create_app = undocumented_app
'''


def test_a_route_that_does_not_say_what_it_does_fails_the_build_naming_it(tmp_path):
    project = copy_of_the_project(tmp_path)
    assert mkdocs_build(project, tmp_path / "intact").returncode == 0  # the copy builds as it is
    (project / "docs" / "hooks" / "added_route.py").write_text(ADDED_ROUTE_HOOK)
    config = project / "mkdocs.yml"
    config.write_text(config.read_text().replace("hooks:\n", "hooks:\n  - docs/hooks/added_route.py\n", 1))
    result = mkdocs_build(project, tmp_path / "broken")
    assert result.returncode != 0 and "GET /undocumented has no summary or no description" in result.stderr, \
        result.stderr
