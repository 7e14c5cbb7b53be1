"""The state fields a node's approvers are shown: declared on its approvers (or its gate's), each a
name or a ``Shown`` with a label and a format, checked where declared and against the graph's state."""

from __future__ import annotations

import pytest

from grapharc.examples.approval import build_credit_graph
from grapharc.session import Approvers, Gate, SessionError, SessionManager, Shown


def test_names_and_shown_fields_are_declared_alike():
    income = Shown("verified_income", "Verified income", "cents:EUR")
    approvers = Approvers(shown_fields=["bureau_score", income])
    assert approvers.shown() == approvers.shown_fields == (Shown("bureau_score"), income)
    assert Approvers().shown() is None


@pytest.mark.parametrize(("fields", "said"), [
    (["amount", "amount"], "'amount' more than once"),
    ("amount", "a list of field names"),
    ([3], "must name a state field"),
    ([""], "must name a state field"),
])
def test_a_bad_shown_fields_list_is_refused_naming_what_is_wrong(fields, said):
    with pytest.raises(SessionError, match=said):
        Approvers(shown_fields=fields)


@pytest.mark.parametrize("fmt", ["cents:eur", "money", "money:EURO", "date:EUR", "json", ""])
def test_a_format_that_is_not_one_of_the_shown_formats_is_refused(fmt):
    with pytest.raises(SessionError, match="money:<CURRENCY>, cents:<CURRENCY>, date, percent"):
        Shown("amount", format=fmt)


def test_a_blank_label_is_refused():
    with pytest.raises(SessionError, match="its label must be words"):
        Shown("amount", label="  ")


def test_registering_refuses_a_shown_field_the_state_does_not_have(tmp_path):
    manager = SessionManager(tmp_path / "sessions")
    try:
        with pytest.raises(SessionError, match="approvers of 'sign_off' shows 'salary', not a state field"):
            manager.register(build_credit_graph(), approvers={"sign_off": Approvers(shown_fields=["salary"])})
        with pytest.raises(SessionError, match="gate 'disburse' shows 'salary'"):
            manager.register(build_credit_graph(), gates={
                "disburse": Gate("pay?", Approvers(shown_fields=["amount", "salary"]))})
    finally:
        manager.close()


def test_a_registered_graph_says_what_each_node_shows(tmp_path):
    manager = SessionManager(tmp_path / "sessions")
    try:
        manager.register(build_credit_graph(), approvers={"sign_off": Approvers(shown_fields=["amount"])},
                         gates={"disburse": Gate("pay?", Approvers(shown_fields=["released"]))})
        registered = manager.graphs.get("credit-approval")
        assert registered.shown_fields("sign_off") == (Shown("amount"),)
        assert registered.shown_fields("disburse") == (Shown("released"),)
        assert registered.shown_fields("score") is None
    finally:
        manager.close()
