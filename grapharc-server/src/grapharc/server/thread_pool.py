"""The server's pool of threads for sync graph nodes.

LangGraph's sync nodes in an async graph run in the event loop's default executor, which
Python sizes ``min(32, cpus + 4)``: six threads on a two-core machine, so a server ran at most
six sleeping nodes at once. ``grapharc serve`` gives its loop a pool of ``--threads`` threads
instead. (Store calls have a pool of their own, ``grapharc.stores.offload``: a server whose node
threads are all busy still renews its leases and streams what the nodes recorded.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grapharc.config.values import Count

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

DEFAULT_THREADS = 64
THREADS = Count(1, 4096)
"""How many threads ``--threads`` may ask for."""


def use_thread_pool(size: int) -> ThreadPoolExecutor:
    """Make a pool of ``size`` threads the running loop's default executor (asyncio.run shuts it
    down with the loop); the pool. (asyncio is imported here, not with the module: ``serve`` reads
    the constants above before it binds its address.)"""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="grapharc-worker")
    asyncio.get_running_loop().set_default_executor(pool)
    return pool
