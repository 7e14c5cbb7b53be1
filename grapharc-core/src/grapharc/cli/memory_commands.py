"""The ``memory`` commands (add, search, history, contradictions, gc): a claim store without Python.

``--memory URI`` names the store and opens it through the stores hook like every other
(``sqlite:PATH``, ``ladybug:PATH``, or a bare path for ``sqlite:``); without the flag the
``memory`` setting decides (``GRAPHARC_MEMORY``, then ``memory = ...`` in grapharc.toml), and
with none of them the command refuses to guess. ``memory:`` lives only as long as the command, so
it serves ``add`` (to see the id and what a claim would contradict) and the commands that
read refuse it, as they refuse a path where no store exists rather than create one there.
``gc`` deletes the artifact blobs a crashed ``put`` left unreferenced (SQLite stores).
Exit codes: 0 did the job; 1 ``search`` found nothing, or ``contradictions`` found
contradicting claims (so a script can gate on a consistent store); 2 could not run (a bad
URI, a missing, binary or locked store, an unknown claim id, a blank field).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from grapharc.cli.options import ConfigFile, Ranged, option
from grapharc.cli.output import ExitCode, JsonOption, emit, fail, terminal_text
from grapharc.config.values import Count, Number
from grapharc.errors import ConfigurationError, GraphARCError

if TYPE_CHECKING:
    from grapharc.memory.claims import Claim, ClaimStore
    from grapharc.memory.retrieval import Hit

T = TypeVar("T")

MemoryOption = Annotated[str | None, typer.Option(
    "--memory", metavar="URI", show_default=False,
    help="The claim store: sqlite:PATH, ladybug:PATH or a bare PATH (sqlite); memory: "
         "(in-process, gone when the command exits) only for add. Default: the memory setting "
         "(GRAPHARC_MEMORY, or memory = ... in grapharc.toml).")]
ClaimArg = Annotated[str, typer.Argument(help="The claim id.", show_default=False)]


class InProcessStoreReadError(ConfigurationError):
    """``memory:`` named for a command that reads: a fresh in-process store holds nothing."""


class ClaimStoreMissingError(ConfigurationError):
    """A command that reads named a store path where nothing exists; reading never creates one."""


class NoClaimStoreError(ConfigurationError):
    """No claim store was named: no --memory, GRAPHARC_MEMORY or memory setting in grapharc.toml."""

    hint = ("pass --memory URI (for example --memory sqlite:memory.db), set GRAPHARC_MEMORY, "
            "or put memory = \"sqlite:memory.db\" in grapharc.toml")


def configured_memory(given: str | None, config: Path | None) -> str:
    """The claim store URI: ``--memory``, else GRAPHARC_MEMORY, else grapharc.toml; never a guess."""
    from grapharc.config.settings import load_config

    uri = load_config({"memory": given}, config=config).value("memory")
    if uri is None:
        raise NoClaimStoreError("no claim store given: these commands read and write a store "
                                "you name, and none is configured")
    return str(uri)


def add_memory_commands(app: typer.Typer) -> None:
    """Add the ``memory`` group (add, search, history, contradictions) to ``app``."""
    group = typer.Typer(name="memory", no_args_is_help=True,
                        help="Claim memory: add a claim with provenance, search, follow a "
                             "correction chain, list contradictions, collect orphaned blobs.")
    for name, command in (("add", add_command), ("search", search_command), ("history", history_command),
                          ("contradictions", contradictions_command), ("gc", gc_command)):
        group.command(name)(command)
    app.add_typer(group, name="memory")


def _refuse_reading_nothing(uri: str) -> None:
    """Refuse a read of ``memory:`` or of a path that holds no store (opening would create one)."""
    from grapharc.stores.masking import masked
    from grapharc.stores.uris import known_schemes, split_uri

    scheme, location = split_uri(uri)
    if scheme not in known_schemes():
        return  # open_store names the schemes that exist
    if scheme == "memory":
        raise InProcessStoreReadError(
            "memory: is an in-process store that starts empty in every command, so there is "
            "nothing in it to read", hint="name a durable store, for example --memory sqlite:memory.db")
    if location and not os.path.lexists(location):
        raise ClaimStoreMissingError(f"no claim store at {masked(location)!r} (from {masked(uri)!r})",
                                     hint="check the path, or create the store with: grapharc memory add")


@contextmanager
def opened(uri: str, *, reading: bool, kind: str = "claims") -> Iterator[Any]:
    """The store of ``kind`` (claims by default) ``uri`` names, closed on the way out."""
    from grapharc.stores.uris import open_store

    if reading:
        _refuse_reading_nothing(uri)
    store = open_store(uri, kind=kind)
    try:
        yield store
    finally:
        store.close()


CLI_HINTS = {
    "ClaimNotFoundError": "find claim ids with: grapharc memory search WORDS --include-superseded",
    "ClaimAlreadySupersededError": "supersede the current claim of the chain; "
                                   "see it with: grapharc memory history ID",
}
"""Hints in this CLI's words for store errors whose own hint names the Python API."""


def _guarded(as_json: bool, produce: Callable[[], T]) -> T:
    """Run ``produce``; a known error is one line (or one JSON document) and exit 2."""
    try:
        return produce()
    except GraphARCError as exc:
        exc.hint = CLI_HINTS.get(exc.code, exc.hint)
        fail(exc, as_json)


def claim_document(claim: Claim) -> dict[str, Any]:
    return claim.model_dump(mode="json")


SHOWN_CHARACTERS = 200
"""How much of a claim's subject, predicate, object or source one line shows: a longer field is cut
there and its size said (a claim may hold up to 64 KiB; ``--json`` has every field whole)."""


def shown(text: str) -> str:
    """``text`` as a claim's line shows it: whole, or its first ``SHOWN_CHARACTERS`` and its size."""
    if len(text) <= SHOWN_CHARACTERS:
        return text
    return f"{text[:SHOWN_CHARACTERS]}… [cut: {len(text.encode('utf-8')):,} bytes]"


def claim_line(doc: dict[str, Any]) -> str:
    """One claim as a line: id, the fact, where it came from, and whether it was corrected (each
    long field cut, with its size)."""
    provenance = doc["provenance"]
    fact = " | ".join(shown(doc[field]) for field in ("subject", "predicate", "object"))
    line = (f"{shown(doc['id'])}  {fact}  "
            f"(source: {shown(provenance['source'])}; observed {provenance['observed_at']}")
    if provenance["run_id"]:
        line += f"; run {shown(provenance['run_id'])}"
    if doc["superseded_by"]:
        line += f"; superseded by {shown(doc['superseded_by'])}"
    return line + ")"


# -- add ---------------------------------------------------------------------------------


def new_claim(subject: str, predicate: str, object_: str, source: str, run_id: str | None) -> Claim:
    """The claim the command line describes, observed now; blank fields are refused by name
    (``InvalidClaimError``)."""
    from datetime import UTC, datetime

    from grapharc.memory.claims import Claim, Provenance

    provenance = Provenance(source=source, observed_at=datetime.now(UTC), run_id=run_id)
    return Claim(subject=subject, predicate=predicate, object=object_, provenance=provenance)


def add_command(
    subject: Annotated[str, typer.Argument(help="Who or what the fact is about.", show_default=False)],
    predicate: Annotated[str, typer.Argument(help="The relation, e.g. 'population'.",
                                             show_default=False)],
    object_: Annotated[str, typer.Argument(metavar="OBJECT", help="The value.", show_default=False)],
    source: Annotated[str, typer.Option(
        "--source", show_default=False,
        help="Where the fact came from (a file, a URL, a document); required: a claim without "
             "provenance is refused.")],
    memory: MemoryOption = None,
    supersedes: Annotated[str | None, typer.Option(
        "--supersedes", metavar="CLAIM_ID",
        help="Record this claim as the correction of that one (kept, marked superseded).")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="The run that produced the fact.")]
    = None,
    as_json: JsonOption = False,
    config: ConfigFile = None,
) -> None:
    """Store one claim with provenance and print its id; contradictions are reported, never resolved."""
    from grapharc.memory.conflicts import contradictions
    from grapharc.stores.masking import masked
    from grapharc.stores.uris import split_uri

    uri = _guarded(as_json, lambda: configured_memory(memory, config))

    def store_it() -> tuple[Claim, list[Claim]]:
        claim = new_claim(subject, predicate, object_, source, run_id)
        # a correction needs the claim it corrects, so it reads: a store it would create cannot hold it
        with opened(uri, reading=supersedes is not None) as store:
            stored = store.supersede(supersedes, claim) if supersedes else store.add(claim)
            return stored, contradictions(store, stored)

    stored, conflicts = _guarded(as_json, store_it)
    in_process = split_uri(uri)[0] == "memory"
    document = {"ok": True, "memory": masked(uri), "in_process": in_process, "claim": claim_document(stored),
                "supersedes": supersedes, "contradicts": [claim_document(c) for c in conflicts]}
    if not as_json:
        for claim in conflicts:
            sys.stderr.write(f"warning: contradicts {terminal_text(claim_line(claim_document(claim)))}\n")
        if in_process:
            sys.stderr.write("note: memory: keeps the claim only until this command exits; "
                             "use --memory sqlite:PATH to keep it\n")
    emit(document, as_json, lambda doc: doc["claim"]["id"])


# -- search ------------------------------------------------------------------------------


def hit_document(hit: Hit) -> dict[str, Any]:
    return {"score": hit.score, "channels": list(hit.channels), "via": hit.via, "hops": hit.hops,
            "claim": claim_document(hit.claim)}


def render_hits(doc: dict[str, Any]) -> str:
    lines = []
    for hit in doc["hits"]:
        found = "+".join(hit["channels"]) + (f" via {hit['via']}" if hit["via"] else "")
        lines.append(f"{hit['score']:.3f}  {claim_line(hit['claim'])}  [{found}]")
    return "\n".join(lines)


def search_command(
    query: Annotated[str, typer.Argument(help="Words to look for.", show_default=False)],
    memory: MemoryOption = None,
    k: Annotated[int, option("--k", kind=Ranged(Count(1, 1000), "N"),
                             help="How many claims to return.")] = 10,
    hops: Annotated[int, option(
        "--hops", kind=Ranged(Count(0, 5), "N"),
        help="Entity hops from each match to the claims about its object.")] = 1,
    include_superseded: Annotated[bool, typer.Option(
        "--include-superseded", help="Let corrected claims match too.")] = False,
    as_json: JsonOption = False,
    config: ConfigFile = None,
) -> None:
    """Rank claims by BM25F and entity hops, best first; exits 1 when nothing matches."""
    from grapharc.memory.retrieval import retrieve

    uri = _guarded(as_json, lambda: configured_memory(memory, config))

    def search() -> list[Hit]:
        with opened(uri, reading=True) as store:
            return retrieve(store, query, k, include_superseded=include_superseded, hops=hops)

    hits = _guarded(as_json, search)
    if not hits and not as_json:
        sys.stderr.write(f"no claim matches {terminal_text(repr(query))}\n")
    emit({"ok": bool(hits), "query": query, "hits": [hit_document(hit) for hit in hits]},
         as_json, render_hits, ExitCode.OK if hits else ExitCode.NEGATIVE)


# -- history -----------------------------------------------------------------------------


def history_command(claim_id: ClaimArg, memory: MemoryOption = None, as_json: JsonOption = False,
                    config: ConfigFile = None) -> None:
    """Print the correction chain a claim belongs to, oldest first; the last is current."""

    uri = _guarded(as_json, lambda: configured_memory(memory, config))

    def chain() -> list[Claim]:
        with opened(uri, reading=True) as store:
            return store.history(claim_id)

    claims = _guarded(as_json, chain)
    emit({"ok": True, "claim_id": claim_id, "chain": [claim_document(c) for c in claims]},
         as_json, lambda doc: "\n".join(claim_line(claim) for claim in doc["chain"]))


# -- contradictions ----------------------------------------------------------------------


def contradicting_pairs(store: ClaimStore, subject: str | None) -> tuple[int, list[tuple[Claim, Claim]]]:
    """How many current claims were checked, and each contradicting pair (older, newer) once."""
    from grapharc.memory.conflicts import contradictions

    claims = store.about(subject) if subject is not None else store.all()
    seen: set[frozenset[str]] = set()
    pairs = []
    for claim in claims:  # insertion order, so a pair is first met from its older claim
        for other in contradictions(store, claim):
            pair = frozenset((claim.id, other.id))
            if pair not in seen:
                seen.add(pair)
                pairs.append((claim, other))
    return len(claims), pairs


def render_pairs(doc: dict[str, Any]) -> str:
    if not doc["pairs"]:
        return f"no contradictions among {doc['checked']} current claim(s)"
    return "\n\n".join(f"{claim_line(pair['older'])}\n{claim_line(pair['newer'])}"
                       for pair in doc["pairs"])


def contradictions_command(
    memory: MemoryOption = None,
    subject: Annotated[str | None, typer.Argument(
        help="Only claims about this entity; every current claim if omitted.", show_default=False)]
    = None,
    as_json: JsonOption = False,
    config: ConfigFile = None,
) -> None:
    """List pairs of current claims that disagree (same subject and predicate, different objects).

    Exits 1 when there is any, so a script can gate on a consistent store; nothing is resolved.
    """

    uri = _guarded(as_json, lambda: configured_memory(memory, config))

    def find() -> tuple[int, list[tuple[Claim, Claim]]]:
        with opened(uri, reading=True) as store:
            return contradicting_pairs(store, subject)

    checked, pairs = _guarded(as_json, find)
    document = {"ok": not pairs, "subject": subject, "checked": checked,
                "pairs": [{"older": claim_document(older), "newer": claim_document(newer)}
                          for older, newer in pairs]}
    emit(document, as_json, render_pairs, ExitCode.NEGATIVE if pairs else ExitCode.OK)


# -- gc ----------------------------------------------------------------------------------


class NoBlobsToCollectError(ConfigurationError):
    """``gc`` named an artifact store that keeps no blobs apart from its rows."""


def gc_command(
    memory: MemoryOption = None,
    grace: Annotated[float | None, option(
        "--grace", kind=Ranged(Number(0, 10**9, "seconds", above=False), "SECONDS"),
        help="Keep unreferenced blobs younger than this (default: an hour): a put writes its "
             "blob before its row, so a young one may be about to be referenced.")] = None,
    as_json: JsonOption = False,
    config: ConfigFile = None,
) -> None:
    """Delete the artifact blobs no row references (left by a crash between blob and row)."""
    from grapharc.memory.artifacts import DEFAULT_GC_GRACE_SECONDS, Collected, CollectsGarbage
    from grapharc.stores.masking import masked

    uri = _guarded(as_json, lambda: configured_memory(memory, config))

    def collect() -> Collected:
        with opened(uri, reading=True, kind="artifacts") as store:
            if not isinstance(store, CollectsGarbage):
                raise NoBlobsToCollectError(f"the artifact store {masked(uri)} keeps no blobs apart from "
                                            "its rows, so there is nothing to collect")
            return store.gc(DEFAULT_GC_GRACE_SECONDS if grace is None else grace)

    collected = _guarded(as_json, collect)
    document = {"ok": True, "memory": masked(uri),
                "removed": list(collected.removed), "freed_bytes": collected.freed_bytes,
                "kept_young": collected.kept_young}
    emit(document, as_json, lambda doc: (
        f"removed {len(doc['removed'])} unreferenced blob(s), {doc['freed_bytes']} bytes; kept "
        f"{doc['kept_young']} younger than the grace period"))
