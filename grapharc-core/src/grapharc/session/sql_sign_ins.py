"""The sign-in records of the SQL session store: signed-out page sessions and recent failed sign-ins.

A server's pages sign people in with a cookie that carries a nonce; signing out records it here
until the cookie would have expired, so every worker over the store (``serve --workers N``, or
machines sharing PostgreSQL) refuses it. Failed sign-ins are recorded per user and per address, and
the next attempts are throttled by them (``grapharc.server.inbox.throttle``). Rows past their time
are deleted as new ones are written, so neither table grows beyond what a window holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from grapharc.session.sql_rows import SqlSessionRows


class SqlSignIns(SqlSessionRows):
    """``SignInRecords`` (``grapharc.session.contracts``) over the ``sign_in_*`` tables."""

    def revoke_sign_in(self, nonce: str, until: float, now: float) -> None:
        """Record ``nonce`` signed out until ``until``; forget revocations that ran out by ``now``."""
        with self._write() as conn:
            self._run(conn, "DELETE FROM {sign_in_revoked} WHERE expires_at < ?", (now,))
            self._run(conn, "INSERT INTO {sign_in_revoked} (nonce, expires_at) VALUES (?, ?) "
                            "ON CONFLICT DO NOTHING", (nonce, until))

    def sign_in_revoked(self, nonce: str, now: float) -> bool:
        """True if ``nonce`` was signed out and its revocation still runs at ``now``."""
        with self._read() as conn:
            row = self._run(conn, "SELECT 1 FROM {sign_in_revoked} WHERE nonce = ? AND expires_at >= ?",
                            (nonce, now)).fetchone()
        return row is not None

    def sign_in_failed(self, subjects: Iterable[str], now: float, forget_before: float) -> None:
        """Record a failed sign-in against each subject; forget failures before ``forget_before``."""
        with self._write() as conn:
            self._run(conn, "DELETE FROM {sign_in_failures} WHERE at < ?", (forget_before,))
            for subject in subjects:
                self._run(conn, "INSERT INTO {sign_in_failures} (subject, at) VALUES (?, ?)", (subject, now))

    def sign_in_failures(self, subjects: Iterable[str], since: float) -> dict[str, list[float]]:
        """Each subject's failed sign-ins since ``since``, oldest first."""
        found: dict[str, list[float]] = {}
        with self._read() as conn:
            for subject in subjects:
                rows = self._run(conn, "SELECT at FROM {sign_in_failures} WHERE subject = ? AND at >= ? "
                                       "ORDER BY at", (subject, since)).fetchall()
                if rows:
                    found[subject] = [row["at"] for row in rows]
        return found
