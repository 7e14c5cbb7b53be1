"""A thread deleted while a request reads it is answered as gone (404), never as a server error:
a stateless run's thread is deleted by the worker after its grace, whoever is reading it then."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from api_graphs import RELAY
from fastapi.testclient import TestClient

from grapharc.server.api.context import open_context
from grapharc.server.app import create_app


def test_a_thread_deleted_between_its_record_and_its_values_is_a_404(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    thread = ctx.manager.create(RELAY).thread_id
    values_at = ctx.manager.values_at

    def deleted_first(thread_id: str, *args: Any, **kwargs: Any) -> Any:
        ctx.manager.delete(thread_id)  # the deletion lands after the request read the record
        return values_at(thread_id, *args, **kwargs)

    monkeypatch.setattr(ctx.manager, "values_at", deleted_first)
    with TestClient(create_app(api=ctx), base_url="http://localhost") as client:
        answer = client.get(f"/threads/{thread}")
    assert answer.status_code == 404, answer.text
    assert thread in answer.json()["detail"]
