"""Errors of the server's lifecycle: an address it cannot listen on, an app that will not start."""

from __future__ import annotations

from grapharc.errors import GraphARCError


class CannotListenError(GraphARCError):
    """The server could not listen on the host and port it was given."""


class PortOutOfRangeError(CannotListenError):
    """The port is not a TCP port number (0 to 65535)."""


class HostNotFoundError(CannotListenError):
    """The host is neither an IP address nor a name this machine resolves."""


class AddressInUseError(CannotListenError):
    """Another socket already listens on the host and port."""


class AddressNotLocalError(CannotListenError):
    """The host resolves, but to an address that no interface of this machine carries."""


class ServerStartupError(GraphARCError):
    """The app failed its startup (its lifespan) after the socket was bound, so nothing was served."""


class AuthFileError(GraphARCError):
    """The auth file (users, tokens, who decides what) cannot be read or makes no sense."""


class BearerRefused(GraphARCError):
    """A request's bearer token does not say who calls: missing, unknown, or a JWT that fails a check
    (the message says which); the API answers 401 with it."""


class AuthRequiredError(GraphARCError):
    """The server was asked to listen beyond this machine without sign-in configured."""


class WorkersNeedForkError(GraphARCError):
    """``--workers`` above 1 was asked on a system without ``fork`` (Windows)."""
