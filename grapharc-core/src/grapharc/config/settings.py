"""Run configuration: flag > env (``GRAPHARC_*``) > grapharc.toml > built-in, with provenance.

Every value records the layer that supplied it, so ``--json`` can carry a
``sources`` block and the human view a config line. The file is read from the
working directory or named with ``--config PATH``; parent directories are never
searched, because a run must not be governed by a file nobody knew was there.
A relative path inside the file resolves against the file's folder; one given
as a flag or in the environment resolves against the working directory. A store
setting (``memory``) is a URI whose location is such a path, or a bare path that
means the kind's local default store (``grapharc.stores.store_uri``).
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grapharc._files import read_user_text
from grapharc.config.tenants import tenant_name
from grapharc.config.values import DOLLARS, SECONDS, Count
from grapharc.errors import ConfigurationError

CONFIG_NAME = "grapharc.toml"
ENV_PREFIX = "GRAPHARC_"
MAX_CONFIG_BYTES = 1024 * 1024
LAYERS = ("flag", "env", "file", "default")


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 4096 or "\x00" in value:
        raise ValueError("must be a non-empty string of at most 4096 characters, without NUL")
    return value.strip()


_HOST_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?")
"""A DNS name or IPv4 address, lower-cased: no scheme, port, path or wildcard."""


def _is_host_name(name: str) -> bool:
    """Whether ``name`` is a DNS name, an IPv4 address or an IPv6 address (without brackets)."""
    if ":" not in name:
        return _HOST_NAME.fullmatch(name) is not None
    try:
        ipaddress.IPv6Address(name)
    except ValueError:
        return False
    return True


def _host_names(value: Any) -> tuple[str, ...]:
    """Host names a server answers to: a list, or one string of names separated by commas (as an
    environment variable carries them); lower-cased, an IPv6 address without its brackets."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise ValueError("must be a list of host names")
    names = [item.strip().lower().removeprefix("[").removesuffix("]") if isinstance(item, str) else ""
             for item in items]
    if not all(_is_host_name(name) for name in names):
        raise ValueError("must be host names or IP addresses (like grapharc.internal or 10.0.0.5), "
                         "without a scheme, port, path or wildcard")
    return tuple(dict.fromkeys(names))


def _egress_entries(value: Any) -> tuple[str, ...]:
    """Where run webhooks may go: IP addresses, CIDR networks and host names, as a list or one
    string separated by commas (as an environment variable carries them)."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise ValueError("must be a list of addresses, networks or host names")
    entries = [item.strip().lower().removeprefix("[").removesuffix("]") if isinstance(item, str) else ""
               for item in items]
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            if not _is_host_name(entry):
                raise ValueError(f"{entry!r} is neither an IP address, a CIDR network (like 10.0.0.0/8) "
                                 "nor a host name") from None
    return tuple(dict.fromkeys(entries))


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")


def _env_name(value: Any) -> str:
    """The name of an environment variable (not its value: a secret stays out of files and flags)."""
    if not isinstance(value, str) or _ENV_NAME.fullmatch(value.strip()) is None:
        raise ValueError("must be the name of an environment variable, like GRAPHARC_WEBHOOK_SECRET")
    return value.strip()


@dataclass(frozen=True)
class Key:
    """One setting: how to parse it, whether it is a path (and whether a store URI may stand for
    the path), or whether it names a kind of store."""

    parse: Callable[[Any], Any]
    is_path: bool = False
    may_be_uri: bool = False
    store: str | None = None
    help: str = ""


def locate_store(value: str, kind: str, base: Path) -> str:
    """The store URI ``value`` means: a relative location resolved against ``base``, and a bare
    path read as the local default store for ``kind``; ``memory:`` (no location) as it is."""
    from grapharc.stores.uris import split_uri, store_uri

    uri = store_uri(value, kind)
    scheme, location = split_uri(uri)
    return f"{scheme}:{(base / location).resolve()}" if location else uri


KEYS: dict[str, Key] = {
    "registry": Key(_text, help="module:attr of the node registry"),
    "policy": Key(_text, is_path=True, help="policy TOML file"),
    "model": Key(_text, help="planner model spec, backend/model"),
    "tenant": Key(lambda value: tenant_name(_text(value)),
                  help="tenant whose scoped policy rules apply (compared case-insensitively)"),
    "trace": Key(_text, is_path=True, may_be_uri=True,
                 help="JSONL trace file or traces store URI (file:PATH, postgresql://...)"),
    "sessions": Key(_text, is_path=True, may_be_uri=True,
                    help="session directory or store URI (status, approvals, checkpoints)"),
    "memory": Key(_text, store="claims", help="claim store URI (memory:, sqlite:PATH, ladybug:PATH) "
                                              "or a bare path for the local default (sqlite)"),
    "max_rounds": Key(Count(1, 1000), help="planning rounds before the loop stops"),
    "max_depth": Key(Count(1, 64), help="admitted nesting limit"),
    "max_tokens": Key(Count(1, 10**15)),
    "max_iterations": Key(Count(1, 10**9)),
    "max_seconds": Key(SECONDS),
    "max_cost_usd": Key(DOLLARS, help="US dollars the run may spend on priced model calls"),
    "max_concurrency": Key(Count(1, 10**6)),
    "allowed_hosts": Key(_host_names, help="host names serve answers to besides localhost, 127.0.0.1 and "
                                            "[::1], and whose pages may post to it (--allowed-host)"),
    "webhook_allow": Key(_egress_entries, help="addresses, CIDR networks and host names run webhooks may "
                                               "reach; without it, loopback only (--webhook-allow)"),
    "webhook_secret_env": Key(_env_name, help="environment variable whose value signs run webhooks (HMAC-"
                                              "SHA256); without it hooks go unsigned (--webhook-secret-env)"),
    "secret_env": Key(_text, help="more environment variables whose values are secrets, comma-separated: "
                                  "redacted wherever a run writes, as provider keys are"),
    "tool_memory_mb": Key(Count(0, 1 << 30),
                          help="address space of a tool call's processes, MiB (0: no limit)"),
    "tool_processes": Key(Count(0, 1 << 22), help="more processes a tool call may start (0: no limit)"),
    "tool_cpu_seconds": Key(Count(0, 10**8), help="CPU seconds of each process of a tool call (0: no limit)"),
    "tool_file_mb": Key(Count(0, 1 << 30), help="largest file a tool call's processes may write, MiB "
                                                "(0: no limit)"),
}
DEFAULTS: dict[str, Any] = {"max_rounds": 8, "max_depth": 3}


@dataclass(frozen=True)
class Setting:
    """A resolved value and the layer (flag, env, file, default) that supplied it."""

    name: str
    value: Any
    source: str
    origin: str


@dataclass(frozen=True)
class Config:
    """Every setting with its provenance, and the config file read (if any)."""

    settings: Mapping[str, Setting]
    path: Path | None
    table: Mapping[str, Any]
    sections: Mapping[str, Any] = field(default_factory=dict)
    """The file's other top-level tables, each read by the tool source of its name (``[mcp]``)."""

    def setting(self, name: str) -> Setting | None:
        """The resolved setting ``name`` with its provenance, or None when no layer set it."""
        return self.settings.get(name)

    def value(self, name: str) -> Any:
        setting = self.settings.get(name)
        return setting.value if setting is not None else None

    def source(self, name: str) -> str:
        setting = self.settings.get(name)
        return setting.source if setting is not None else "unset"

    def sources(self) -> dict[str, str]:
        """``name -> layer`` for every setting that has a value."""
        return {name: setting.source for name, setting in sorted(self.settings.items())}

    def line(self) -> str:
        """The human config line: which file, and which values did not come from a default."""
        if self.path is None and all(s.source in {"flag", "default"} for s in self.settings.values()):
            return f"no {CONFIG_NAME} (flags and defaults only)"
        named = ", ".join(f"{name}={setting.source}" for name, setting in sorted(self.settings.items())
                          if setting.source in {"env", "file"})
        where = str(self.path) if self.path is not None else f"no {CONFIG_NAME}"
        return f"{where} ({named})" if named else where


def read_config_file(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``[grapharc]`` table of a config file, and the tables of installed tool sources (an
    ``[mcp]`` table when grapharc-mcp is installed); anything else in the file is an error."""
    hint = f"fix {path} or move it away; a run reads ./{CONFIG_NAME} or the file --config names"
    try:
        text = read_user_text(path, what="config file", limit=MAX_CONFIG_BYTES,
                              error=ConfigurationError, kind="TOML")
        document = tomllib.loads(text)
    except ConfigurationError as exc:
        raise ConfigurationError(str(exc), hint=hint) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"config file {path} is not valid TOML: {exc}", hint=hint) from None
    listed = "the settings are listed in docs/reference/config.md"
    sources = tool_source_names()
    extra = sorted(set(document) - {"grapharc"} - sources)
    if extra:
        beside = f" or in an installed tool source's table ({', '.join(sorted(sources))})" if sources else ""
        raise ConfigurationError(f"{path}: unknown top-level key(s) {', '.join(extra)}; "
                                 f"settings go in a [grapharc] table{beside}", hint=listed)
    table = document.get("grapharc", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"{path}: grapharc must be a table ([grapharc])", hint=listed)
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigurationError(f"{path}: [grapharc].{unknown[0]} is not a setting "
                                 f"(settings: {', '.join(KEYS)})", hint=listed)
    return table, {name: document[name] for name in sorted(sources & set(document))}


def tool_source_names() -> set[str]:
    """The top-level tables installed tool sources read (``mcp`` with grapharc-mcp)."""
    from grapharc.plugins import registry

    return set(registry("tool_sources"))


def find_config(cwd: Path, explicit: Path | None) -> Path | None:
    """``--config PATH`` if given (it must exist), else ``./grapharc.toml`` if present; no search up.

    Whatever sits at ``./grapharc.toml`` is the config: a directory, a dangling link or a
    pipe there is refused rather than ignored, so a run never goes ungoverned by mistake.
    """
    path = cwd / CONFIG_NAME if explicit is None else explicit if explicit.is_absolute() else cwd / explicit
    if explicit is None and not (path.exists() or path.is_symlink()):
        return None
    hint = f"replace {path} with a TOML file, or move it away" if explicit is None \
        else "check the path given to --config"
    if not path.exists():
        raise ConfigurationError(f"config file {path} does not exist"
                                 + (" (a link to nowhere)" if path.is_symlink() else ""), hint=hint)
    if not (path.is_file() or path.is_dir()):  # a pipe or device would block the read, or never end
        raise ConfigurationError(f"config file {path} is not a regular file", hint=hint)
    return path.resolve()


def _is_uri(value: str) -> bool:
    """Whether a setting that may be a store URI is one (kept as written, not resolved as a path)."""
    from grapharc.stores.uris import is_uri

    return is_uri(value)


def load_config(flags: Mapping[str, Any], *, config: Path | None = None, cwd: Path | None = None,
                env: Mapping[str, str] | None = None,
                defaults: Mapping[str, Any] | None = None) -> Config:
    """Resolve every setting: flag > env > file > built-in; None flags count as not given."""
    cwd = (cwd or Path.cwd()).resolve()
    env = os.environ if env is None else env
    path = find_config(cwd, config)
    table, sections = read_config_file(path) if path is not None else ({}, {})
    merged_defaults = {**DEFAULTS, **(defaults or {})}
    settings: dict[str, Setting] = {}
    for name, key in KEYS.items():
        layers = (("flag", flags.get(name), "command line", cwd),
                  ("env", env.get(ENV_PREFIX + name.upper()), ENV_PREFIX + name.upper(), cwd),
                  ("file", table.get(name), str(path), path.parent if path else cwd),
                  ("default", merged_defaults.get(name), "built-in", cwd))
        for source, raw, origin, base in layers:
            if raw is None:
                continue
            try:
                value = key.parse(str(raw) if isinstance(raw, Path) else raw)
                if key.store is not None:
                    value = locate_store(value, key.store, base)
            except ValueError as exc:
                from grapharc.stores.masking import masked

                shown = masked(raw) if isinstance(raw, str) else raw
                raise ConfigurationError(f"{name} from {origin}: {exc}, got {shown!r}") from None
            if key.is_path and not (key.may_be_uri and _is_uri(value)):
                value = (base / value).resolve()
            settings[name] = Setting(name, value, source, origin)
            break
    return Config(settings, path, table, sections)
