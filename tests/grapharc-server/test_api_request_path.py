"""The run routes' request path does no work per request that the process could do once: counted,
not timed (a test machine's clock is noise)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from api_graphs import CHAT
from langchain_core.messages import HumanMessage
from pydantic import TypeAdapter

from grapharc.server.api.context import open_context
from grapharc.server.api.problems import ApiProblem
from grapharc.server.api.runs import check_input


def test_checking_run_input_builds_no_type_adapter_once_the_fields_were_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = open_context(str(tmp_path / "sessions"), ["api_graphs:register"])
    built: list[Any] = []
    real_init = TypeAdapter.__init__

    def counted(self: TypeAdapter[Any], *args: Any, **kwargs: Any) -> None:
        built.append(args[0] if args else kwargs.get("type"))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(TypeAdapter, "__init__", counted)
    try:
        check_input(ctx, CHAT, {"question": "why?", "messages": [HumanMessage("why?")]})
        built.clear()
        check_input(ctx, CHAT, {"question": "and now?", "messages": []})
        assert built == []  # a list of messages' adapter took 0.6 ms to build, per request
        with pytest.raises(ApiProblem) as refused:  # the checks are the same ones
            check_input(ctx, CHAT, {"question": 7, "messages": ["not a message"]})
        assert {str(e["loc"][1]) for e in refused.value.errors} == {"question", "messages"}
        assert built == []
    finally:
        ctx.manager.close()
