"""A racing process for the confinement tests: flips a workspace folder and a symlink out, for ever.

``python swapper.py FOLDER LINK`` exchanges the two names atomically (``renameat2`` with
``RENAME_EXCHANGE``), so ``FOLDER`` is a real directory one moment and a symlink pointing
outside the workspace the next, and never missing. It prints ``ready`` once it has flipped, then
flips until it is killed.
"""

from __future__ import annotations

import ctypes
import os
import sys

RENAME_EXCHANGE = 2
AT_FDCWD = -100


def main() -> None:
    folder, link = (os.fsencode(name) for name in sys.argv[1:3])
    renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    flips = 0
    while True:
        if renameat2(AT_FDCWD, folder, AT_FDCWD, link, RENAME_EXCHANGE) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        flips += 1
        if flips == 2:
            print("ready", flush=True)


if __name__ == "__main__":
    main()
