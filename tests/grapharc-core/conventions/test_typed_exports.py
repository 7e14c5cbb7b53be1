"""``from grapharc import GraphARC, GraphARCState, Budget`` gives a type checker the real classes:
the package exports them lazily at run time, which a checker would otherwise read as ``Any`` (and
strict mypy then refuses a state class subclassing ``GraphARCState``)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

USER_CODE = '''
from grapharc import Budget, GraphARC, GraphARCState


class Ticket(GraphARCState):
    text: str = ""


reveal_type(GraphARC(Ticket))
reveal_type(Budget(max_iterations=3))
'''


def test_the_public_names_type_as_the_classes_they_are(tmp_path: Path) -> None:
    program = tmp_path / "user_code.py"
    program.write_text(USER_CODE)
    report, errors, status = api.run(["--strict", "--no-incremental", "--follow-imports=silent",
                                      "--cache-dir", str(tmp_path / "cache"), str(program)])
    assert status == 0, report + errors
    assert 'Revealed type is "grapharc.runtime.graph.GraphARC"' in report
    assert 'Revealed type is "grapharc.runtime.budget.Budget"' in report
    assert "Any" not in report and "cannot subclass" not in report, report
