"""A new plugin distribution, written from the templates shipped in ``grapharc/plugins/templates``.

``templates/common`` holds what every plugin has (pyproject with the entry point and the
``grapharc-core`` range, a README, the package); ``templates/<kind>`` adds the hook module, a
minimal working implementation and a test that runs the kind's conformance kit, and its
``kind.toml`` holds the words the common files need. A ``.tmpl`` file is a ``string.Template``
(``$module``, ``$name``...); ``__module__`` in a path is the package's folder.
"""

from __future__ import annotations

import keyword
import re
import sys
import tomllib
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template

from grapharc._version import __version__
from grapharc.errors import GraphARCError
from grapharc.plugins.host import CORE_DISTRIBUTION

KINDS = ("backend", "store", "executor", "tools", "kind")
"""What ``grapharc plugin new --kind`` can write: a model backend, an artifact store, an executor,
a tool, a node kind."""
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
MAX_NAME = 40
"""Long enough for any sensible name, short enough for a tool name derived from it (64 at most)."""
TEMPLATES = files("grapharc.plugins") / "templates"


class PluginSkeletonError(GraphARCError):
    """A plugin skeleton that cannot be written as asked (a bad name or kind, a folder in use)."""


@dataclass(frozen=True)
class Written:
    """A skeleton on disk: where, what it registers, and its files (relative to ``folder``)."""

    distribution: str
    kind: str
    name: str
    folder: Path
    files: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"distribution": self.distribution, "kind": self.kind, "registers": self.name,
                "folder": str(self.folder), "files": list(self.files)}


def core_range(version: str = __version__) -> str:
    """The ``grapharc-core`` range a new plugin declares: this core's minor series (``>=0.1,<0.2``),
    or its major series from 1.0 on, since a plugin is tested against this core alone."""
    major, minor = (int(part) for part in version.split(".")[:2])
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f">={major}.{minor},<{upper}"


def check_name(distribution: str) -> str:
    """The package (import) name of ``distribution``, or ``PluginSkeletonError`` saying why not."""
    hint = "use lower-case letters, digits and single hyphens, starting with a letter: acme-echo"
    if not NAME.fullmatch(distribution) or len(distribution) > MAX_NAME:
        raise PluginSkeletonError(f"plugin name {distribution!r} is not a distribution name this can "
                                  f"write (at most {MAX_NAME} characters)", hint=hint)
    module = distribution.replace("-", "_")
    if distribution == CORE_DISTRIBUTION or module == "grapharc" or keyword.iskeyword(module) \
            or module in sys.stdlib_module_names:
        raise PluginSkeletonError(f"plugin name {distribution!r} would make the package {module!r}, "
                                  "which would shadow Python's or GraphARC's own",
                                  hint="pick a name of your own, e.g. acme-" + distribution)
    return module


def check_kind(kind: str) -> str:
    """``kind`` if it is one this can write, else ``PluginSkeletonError`` listing them."""
    if kind not in KINDS:
        raise PluginSkeletonError(f"unknown plugin kind {kind!r}; it is one of {', '.join(KINDS)}",
                                  hint="e.g. --kind backend")
    return kind


def check_folder(folder: Path) -> Path:
    """``folder`` if a skeleton may be written there (absent or empty), else ``PluginSkeletonError``."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise PluginSkeletonError(f"{folder} already exists and is not an empty folder",
                                  hint="give a new folder with --dir, or remove that one")
    return folder


def write_skeleton(distribution: str, kind: str, folder: Path) -> Written:
    """Write a working plugin distribution named ``distribution`` of ``kind`` into ``folder``."""
    module = check_name(distribution)
    check_kind(kind)
    check_folder(folder)
    words = {"distribution": distribution, "module": module, "kind": kind, "core_range": core_range()}
    described = tomllib.loads((TEMPLATES / kind / "kind.toml").read_text(encoding="utf-8"))
    words["name"] = Template(described.pop("name")).substitute(words)
    words.update({key: Template(text).substitute(words) for key, text in described.items()})
    written = []
    for source in ("common", kind):
        for template, relative in _templates(TEMPLATES / source, ()):
            target = Path(*relative).with_suffix("")  # drops .tmpl
            target = Path(*(part.replace("__module__", module) for part in target.parts))
            (folder / target).parent.mkdir(parents=True, exist_ok=True)
            (folder / target).write_text(Template(template.read_text(encoding="utf-8")).substitute(words),
                                         encoding="utf-8")
            written.append(target.as_posix())
    return Written(distribution, kind, words["name"], folder, tuple(sorted(written)))


def _templates(folder: Traversable, relative: tuple[str, ...]) -> list[tuple[Traversable, tuple[str, ...]]]:
    """Every ``.tmpl`` file under ``folder``, with its path below it."""
    found = []
    for entry in folder.iterdir():
        if entry.is_dir():
            found += _templates(entry, (*relative, entry.name))
        elif entry.name.endswith(".tmpl"):
            found.append((entry, (*relative, entry.name)))
    return found
