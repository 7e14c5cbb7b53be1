"""Which addresses a webhook may reach: loopback only unless the operator allows more.

A URL is checked where it is given (a run refused with 422 naming the rule) and again before each
attempt. Its host is resolved and every address it resolves to must lie in an allowed network
(or the host be allowed by name), and the attempt then connects to the address that was checked,
so a DNS answer that changes between the check and the connection (DNS rebinding) cannot send the
request anywhere else (and no proxy the environment names is used: it would connect instead).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grapharc.errors import GraphARCError
from grapharc.stores.masking import masked

if TYPE_CHECKING:  # httpx (and the rich it imports) is a fifth of serve's start-up before it binds
    import httpx

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
LOOPBACK: tuple[Network, ...] = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
SCHEMES = ("http", "https")
ALLOW_HINT = "allow its address or host with grapharc serve --webhook-allow HOST_OR_CIDR (repeatable)"


class WebhookRefusedError(GraphARCError):
    """A webhook URL the egress rule does not let the server reach, or that is no http(s) URL."""


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL and the address its attempt connects to."""

    url: httpx.URL
    address: Address

    def pinned(self) -> httpx.URL:
        """The URL with its host replaced by the checked address (the Host header and TLS name
        stay the original host's: ``EgressRule`` callers send them)."""
        return self.url.copy_with(host=str(self.address))


@dataclass(frozen=True, slots=True)
class EgressRule:
    """The networks and host names webhooks may reach (``allowed``: as the operator wrote them)."""

    networks: tuple[Network, ...] = LOOPBACK
    names: frozenset[str] = frozenset()
    allowed: tuple[str, ...] = ()

    @classmethod
    def of(cls, entries: Sequence[str]) -> EgressRule:
        """The rule allowing ``entries`` (addresses, CIDR networks, host names); none: loopback only."""
        if not entries:
            return cls()
        networks, names = [], set()
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry.strip().strip("[]"), strict=False))
            except ValueError:
                names.add(entry.strip().lower())
        return cls(tuple(networks), frozenset(names), tuple(entries))

    def describe(self) -> str:
        """The rule in words, for messages."""
        if not self.allowed:
            return "loopback addresses only, the default"
        return "only " + ", ".join(self.allowed) + " (--webhook-allow)"

    def target(self, url: str) -> Target:
        """``url`` checked: an http(s) URL whose host resolves only to allowed addresses (or is
        allowed by name); the first address it resolves to. Blocks while resolving."""
        import httpx  # not at import: ``serve`` reads the rule before it binds, and answers sooner

        shown = masked(url)
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise WebhookRefusedError(f"webhook {shown} is not a URL: {exc}",
                                      hint="send an http:// or https:// URL") from None
        if parsed.scheme not in SCHEMES or not parsed.host:
            raise WebhookRefusedError(f"webhook {shown}: only http:// and https:// URLs with a host are "
                                      f"posted to, not {parsed.scheme or 'a URL without a scheme'}",
                                      hint="send an http:// or https:// URL")
        addresses = resolved(parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80), shown)
        if parsed.host.lower() not in self.names:
            outside = [str(a) for a in addresses if not any(a in net for net in self.networks)]
            if outside:
                raise WebhookRefusedError(
                    f"webhook {shown} is refused by the egress rule: {parsed.host} resolves to "
                    f"{', '.join(outside)}, outside the addresses webhooks may reach ({self.describe()})",
                    hint=ALLOW_HINT)
        return Target(parsed, addresses[0])


def resolved(host: str, port: int, shown: str) -> list[Address]:
    """Every address ``host`` resolves to (an IPv4 address mapped into IPv6 as the IPv4 one)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise WebhookRefusedError(f"webhook {shown}: its host {host} does not resolve: {exc}",
                                  hint="send a URL whose host resolves from the server") from None
    addresses: list[Address] = []
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if address not in addresses:
            addresses.append(address)
    return addresses
