"""A goal a planner can plan for: anything but an empty or blank one.

Both the governed loop (a turn's input names its goal) and ``grapharc plan`` check it, so the
check lives with the planner rather than with either caller.
"""

from __future__ import annotations

from grapharc.errors import GraphARCError


class EmptyGoalError(GraphARCError):
    """A plan was asked for with a goal that has nothing in it."""

    hint = 'say what the run is for, as in: grapharc plan "investigate the checkout outage"'


def require_goal(goal: str) -> str:
    """``goal`` if it says something; an empty or blank goal is refused."""
    if not goal.strip():
        raise EmptyGoalError("the goal is empty; a planner needs something to plan for")
    return goal
