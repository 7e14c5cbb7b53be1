"""Nothing a tool call starts outlives it: each call's processes live under a keeper of their own.

A keeper is a process forked from the caller and marked ``PR_SET_CHILD_SUBREAPER``, so every
descendant that loses its parent (``setsid cmd &``, a double fork, ``nohup``) becomes its child
instead of init's. It starts the call's process (``run_command``: the program, with the call's
limits; the ``sandboxed`` executor: the child that runs the tool), waits for it to exit or for
the caller to go away (its end of the stop pipe closes: the call timed out, or the agent died),
then kills and reaps every descendant left (``tree``) and reports how the process ended
(``supervise``). Linux only; a descendant that kills its keeper (same user) escapes, as it would
from any same-user supervisor: the ``container`` executor is the boundary for hostile code.
"""
