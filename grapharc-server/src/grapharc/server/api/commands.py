"""A run's ``command.goto`` and ``command.update``, checked now and applied by its turn.

LangGraph applies a ``Command``'s goto and update where the thread stands; here both are checked
against the graph as declared before anything is written (``SessionManager.check_directive``,
``grapharc.runtime.directed``): a goto that the routing of the node the thread stands at does
not lead to, or a thread that stands at no node, is a 409 naming the rule; an update outside
that node's declared writes, or of the wrong type, a 422. Only a caller who may run the graph may
ask for either, and the turn records them on the trail with who asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from grapharc.runtime.directed import GotoNotRoutedError, NowhereToStandError
from grapharc.runtime.errors import RunInputError, StateTypeError, UnknownFieldError, WritePermissionError
from grapharc.server.api.problems import ApiProblem
from grapharc.server.auth import User
from grapharc.server.service import access
from grapharc.session.directives import Directive
from grapharc.session.manager import SessionManager
from grapharc.session.records import Session

ASKED_BY = "api"
"""Who asks for a goto or update on a server without an auth file."""


def directive(manager: SessionManager, session: Session, goto: str | Sequence[str] | None,
              update: Mapping[str, Any] | Sequence[tuple[str, Any]] | None,
              user: User | None) -> dict[str, Any]:
    """``{"directive": {"by", "goto", "update"}}`` for a run's request, checked now; nothing when
    the command has neither (an empty goto, as ``RemoteGraph`` sends every ``Command``'s, is none)."""
    if not goto and update is None:
        return {}
    if user is not None and not access.may_run(user, session.graph):
        raise ApiProblem(403, f"{user.name} may not direct a run of assistant {session.graph!r}",
                         hint="the auth file's run grants (a role's run, [roles.everyone]) say who may")
    asked = Directive(by=user.name if user is not None else ASKED_BY,
                      goto=(goto,) if isinstance(goto, str) else tuple(goto or ()),
                      update=None if update is None else dict(update))
    try:
        manager.check_directive(session.thread_id, asked)
    except (GotoNotRoutedError, NowhereToStandError) as exc:
        raise ApiProblem(409, str(exc), hint=exc.hint) from None
    except (RunInputError, UnknownFieldError, WritePermissionError, StateTypeError) as exc:
        raise ApiProblem(422, f"command.update: {exc}", hint=exc.hint) from None
    return {"directive": {"by": asked.by, "goto": list(asked.goto), "update": asked.update}}


def of_request(request: Mapping[str, Any]) -> Directive | None:
    """The directive a run's request carries (None: none)."""
    asked = request.get("directive")
    if asked is None:
        return None
    return Directive(by=asked["by"], goto=tuple(asked["goto"]), update=asked["update"])
