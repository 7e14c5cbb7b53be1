"""Nothing a tool call starts outlives it: each call's processes live under a reaper of their own.

A reaper is a process marked ``PR_SET_CHILD_SUBREAPER``, so every descendant that loses its
parent (``setsid cmd &``, a double fork, ``nohup``) becomes its child instead of init's. It
starts the call's program (``run_command``: a fresh ``python -I -m grapharc.tools.reaper``;
the ``sandboxed`` executor: a forked keeper), waits for it to exit or for the caller to go away
(its end of the stop pipe closes: the call timed out, or the agent died), then kills and reaps
every descendant left (``tree``) and reports how the program ended (``supervise``). Linux only;
a descendant that kills its reaper (same user) escapes, as it would from any same-user
supervisor: the ``container`` executor is the boundary for hostile code.
"""
