"""Times, durations, money and values written as people read them, for the inbox's pages.

Every time is shown in UTC and says so ("13 Dec 2026, 09:00 UTC"), next to how far it is from now
("in 6 days", "3 minutes ago", worded by the ``humanize`` library). A value a graph wrote is shown
as a readable structure (nested lists and definition lists of escaped text, ``value_html``), never
as a JSON string; a declared format (``grapharc.session.approvals.SHOWN_FORMATS``: money, minor
units of money, a date, a share) writes it as money, a date or a percentage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import humanize
from markupsafe import Markup, escape

from grapharc.session.approvals import CENTS, DATE, MONEY, PERCENT, shown_format

NO_TIME = "unknown time"


def date_time(moment: float | None) -> str:
    """Epoch seconds as a date and time in UTC: ``13 Dec 2026, 09:00 UTC`` (``unknown time`` for
    None or a value no calendar holds)."""
    found = _datetime(moment)
    return found.strftime("%-d %b %Y, %H:%M UTC") if found is not None else NO_TIME


def precise(moment: float | None) -> str:
    """Epoch seconds to the second, for a timeline whose steps are seconds apart:
    ``7 Dec 2026, 05:08:56 UTC``."""
    found = _datetime(moment)
    return found.strftime("%-d %b %Y, %H:%M:%S UTC") if found is not None else NO_TIME


def relative(moment: float | None, now: float) -> str:
    """How far ``moment`` is from ``now``: ``3 minutes ago``, ``in 6 days``, ``just now``."""
    if moment is None or _datetime(moment) is None:
        return NO_TIME
    gap = moment - now
    if abs(gap) < 1:
        return "just now"
    words = humanize.naturaldelta(timedelta(seconds=_rounded(abs(gap))))
    return f"in {words}" if gap > 0 else f"{words} ago"


def _rounded(seconds: float) -> float:
    """``seconds`` to the nearest whole unit ``humanize`` will name (it drops the rest): 6 days and 23
    hours reads as 7 days, not 6."""
    for unit in (86_400, 3_600, 60):
        if seconds >= unit:
            return round(seconds / unit) * unit
    return seconds


def when(moment: float | None, now: float) -> str:
    """A past or future moment both ways: ``3 minutes ago (7 Dec 2026, 05:08 UTC)``."""
    if _datetime(moment) is None:
        return NO_TIME
    return f"{relative(moment, now)} ({date_time(moment)})"


def expiry(expires_at: float | None, now: float) -> str:
    """When an approval expires, as its page says it: ``expires in 6 days (13 Dec 2026, 09:00 UTC)``,
    ``expired 2 hours ago (...)``, or ``never expires``."""
    if expires_at is None:
        return "never expires"
    verb = "expired" if expires_at <= now else "expires"
    return f"{verb} {when(expires_at, now)}"


def duration(milliseconds: float | None) -> str:
    """How long something took: ``0.04 ms``, ``850 ms``, ``1.2 s``, ``3 min 5 s`` (empty if unknown)."""
    if milliseconds is None or not math.isfinite(milliseconds) or milliseconds < 0:
        return ""
    if milliseconds < 1:
        return f"{milliseconds:.2f} ms"
    if milliseconds < 1000:
        return f"{milliseconds:.0f} ms"
    seconds = milliseconds / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def money(amount: float, currency: str, *, minor_units: bool = False) -> str:
    """An amount as people write money: ``EUR 24,000.00`` (``minor_units``: ``amount`` is in cents)."""
    value = amount / 100 if minor_units else amount
    return f"{currency} {value:,.2f}"


def cost_usd(cost: float | None) -> str:
    """A model cost in US dollars, with the precision small costs need: ``USD 0.0042`` (empty if
    nothing was charged or the cost is unknown)."""
    if cost is None or not math.isfinite(cost) or cost <= 0:
        return ""
    return f"USD {cost:,.2f}" if cost >= 1 else f"USD {cost:.4f}"


def count(number: int | None, unit: str) -> str:
    """A count with its unit, thousands grouped: ``1,234 tokens`` (empty for none or zero)."""
    if not number:
        return ""
    return f"{number:,} {unit}" if number != 1 else f"1 {unit.removesuffix('s')}"


def label(field: str) -> str:
    """A state field's name as a label: ``verified_income`` -> ``Verified income``."""
    words = field.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else field


def formatted(value: Any, fmt: str | None = None) -> str | None:
    """``value`` written in the declared format ``fmt`` (``money:EUR``, ``cents:EUR``, ``date``,
    ``percent``), or None when it has no format or the value is not a number the format can write
    (the caller then shows it as a structure)."""
    if fmt is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    kind, currency = shown_format(fmt)
    if kind in (MONEY, CENTS):
        return money(value, currency or "", minor_units=kind == CENTS)
    if kind == DATE:
        return date_time(value) if _datetime(value) is not None else None
    if kind == PERCENT:
        return f"{value:.0%}"
    return None


def value_html(value: Any, fmt: str | None = None) -> Markup:
    """``value`` as escaped HTML people read: text, a number, yes/no, a list as ``<ul>``, a mapping
    as ``<dl>`` with labels, nested as deep as the value is (``fmt`` as ``formatted`` writes it)."""
    written = formatted(value, fmt)
    if written is not None:
        return escape(written)
    if value is None:
        return Markup('<span class="none">none</span>')
    if isinstance(value, bool):
        return escape("yes" if value else "no")
    if isinstance(value, str):
        return escape(value) if value else Markup('<span class="none">(empty)</span>')
    if isinstance(value, int | float):
        return escape(_number(value))
    if isinstance(value, datetime):
        return escape(date_time(value.timestamp()))
    if isinstance(value, Mapping):
        if not value:
            return Markup('<span class="none">(nothing)</span>')
        items = Markup("").join(Markup("<dt>{}</dt><dd>{}</dd>").format(label(str(key)), value_html(item))
                                for key, item in value.items())
        return Markup('<dl class="value">{}</dl>').format(items)
    if isinstance(value, list | tuple | set | frozenset):
        if not value:
            return Markup('<span class="none">(none)</span>')
        items = Markup("").join(Markup("<li>{}</li>").format(value_html(item)) for item in value)
        return Markup('<ul class="value">{}</ul>').format(items)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return value_html(dump(mode="json"))
    return escape(str(value))


def _number(value: float) -> str:
    """A number without a format: thousands grouped from five digits on, a float to two decimals."""
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"


def _datetime(moment: Any) -> datetime | None:
    """Epoch seconds as an aware UTC datetime (None: not a time a calendar holds)."""
    if moment is None or isinstance(moment, bool) or not isinstance(moment, int | float):
        return None
    try:
        return datetime.fromtimestamp(moment, UTC)
    except (OverflowError, OSError, ValueError):
        return None
