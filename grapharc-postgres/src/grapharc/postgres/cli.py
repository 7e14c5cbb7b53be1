"""``grapharc db upgrade --store URI``: apply the session tables' migrations and LangGraph's.

Opening a store applies missing migrations too; this command lets an operator do it
once, before any worker starts, and see which versions it applied.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from grapharc.cli.output import JsonOption, emit, fail
from grapharc.errors import GraphARCError
from grapharc.postgres import SCHEMES

db_app = typer.Typer(name="db", help="Database stores: schema migrations.", no_args_is_help=True)


class NotADatabaseStoreError(GraphARCError):
    """``db upgrade`` given a store URI no migration applies to."""


@db_app.command("upgrade")
def upgrade_command(
    store: Annotated[str, typer.Option("--store", help="The store URI, as in postgresql://user@host:5432/db.")],
    as_json: JsonOption = False,
) -> None:
    """Bring the store's tables to the schema this GraphARC reads (never downgrades)."""
    try:
        document = upgrade_store(store)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(document, as_json, render_upgrade)


def upgrade_store(uri: str) -> dict[str, Any]:
    """Apply every migration ``uri`` lacks; what was applied and the version it is at now."""
    from grapharc.postgres.connect import conninfo
    from grapharc.postgres.database import borrowed
    from grapharc.postgres.schema import LATEST
    from grapharc.stores.uris import split_uri

    scheme, location = split_uri(uri)
    if scheme not in SCHEMES:
        raise NotADatabaseStoreError(f"grapharc db upgrade does not know the {scheme}: scheme",
                                     hint="give a postgresql:// URI; sqlite: stores upgrade themselves")
    with borrowed(conninfo(location)) as database:  # opening it applies the missing migrations
        database.migrate_checkpoints()
    return {"store": database.name, "applied": database.applied, "schema_version": LATEST}


def render_upgrade(doc: dict[str, Any]) -> str:
    if not doc["applied"]:
        return f"{doc['store']} is already at schema version {doc['schema_version']}; nothing to apply"
    applied = ", ".join(str(v) for v in doc["applied"])
    return f"{doc['store']}: applied migration(s) {applied}; now at schema version {doc['schema_version']}"
