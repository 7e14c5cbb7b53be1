"""A stand-in for the ``claude`` executable: records how it was run and prints a scripted result.

The fixture in conftest.py copies this file onto PATH as ``claude`` (with a shebang
for the test interpreter). It refuses, with exit code 97, any run that is not the
tool-free, settings-free, stdin-fed invocation the gateway promises (or, for a delegated agent,
the settings-free bypassPermissions one); otherwise it
appends ``{"argv", "stdin", "cwd", "cwd_entries", "env", "pid"}`` to $FAKE_CLAUDE_LOG
and answers with the JSON in $FAKE_CLAUDE_REPLY (or a default success).
"""

import json
import os
import sys
import time

REQUIRED = ["-p", "--output-format", "json", "--tools", "", "--strict-mcp-config", "--setting-sources",
            "--safe-mode", "--disable-slash-commands", "--no-session-persistence"]
DELEGATED = ["-p", "--output-format", "json", "--strict-mcp-config", "--setting-sources",
             "--no-session-persistence", "--permission-mode", "bypassPermissions"]
DEFAULT_RESULT = {
    "type": "result", "subtype": "success", "is_error": False, "result": "fake claude says hi",
    "total_cost_usd": 0.0042, "session_id": "fake-session", "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900,
              "output_tokens": 7},
}


def main() -> int:
    argv = sys.argv
    if argv[1:] == ["--version"]:
        print("9.9.9 (Claude Code)")
        return 0
    stdin = sys.stdin.read()
    required = DELEGATED if "bypassPermissions" in argv else REQUIRED
    missing = [flag for flag in required if flag not in argv]
    if missing or not stdin or stdin in argv:
        sys.stderr.write(f"fake claude refused: missing {missing}, stdin {stdin!r}\n")
        return 97
    record = {"argv": argv, "stdin": stdin, "cwd": os.getcwd(), "cwd_entries": sorted(os.listdir(".")),
              "env": {key: os.environ.get(key) for key in ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",)},
              "pid": os.getpid()}
    with open(os.environ["FAKE_CLAUDE_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")
    reply_path = os.environ.get("FAKE_CLAUDE_REPLY")
    reply = {}
    if reply_path and os.path.exists(reply_path):
        with open(reply_path, encoding="utf-8") as handle:
            reply = json.load(handle)
    time.sleep(reply.get("sleep", 0))
    sys.stderr.write(reply.get("stderr", ""))
    sys.stdout.write(reply["stdout"] if "stdout" in reply else json.dumps({**DEFAULT_RESULT,
                                                                          **reply.get("result", {})}))
    return int(reply.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
