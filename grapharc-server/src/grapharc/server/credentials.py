"""Make what the auth file keeps: ``python -m grapharc.server.credentials password`` reads a password
(without echo) and prints its argon2 hash; ``... token`` prints a new API token and its SHA-256."""

from __future__ import annotations

import getpass
import secrets
import sys

from grapharc.server.auth import HASHER, token_digest

USAGE = "usage: python -m grapharc.server.credentials password|token"


def main(argv: list[str]) -> int:
    """Print a password hash or a new token with its digest; 2 on a wrong usage."""
    if argv == ["password"]:
        password = getpass.getpass("password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
        if not password:
            sys.stderr.write("an empty password cannot sign anyone in\n")
            return 2
        print(HASHER.hash(password))
        return 0
    if argv == ["token"]:
        token = secrets.token_urlsafe(32)
        print(f"token  {token}\nsha256 {token_digest(token)}")
        return 0
    sys.stderr.write(USAGE + "\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
