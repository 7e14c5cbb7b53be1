"""``grapharc demo stage0`` ... ``stage5``: --json documents, the human view, flags, exit codes 0/1/2."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grapharc.cli.demo_commands import build_demo_app
from grapharc.plugins import BackendInfo, hookimpl
from grapharc.testing import in_process_source, plugin_host

FAST = {"stage0": [], "stage1": [], "stage2": [], "stage3": ["--worker-timeout", "0.3"], "stage4": [],
        "stage5": [], "stage6": [], "capstone": []}


def invoke(*args: str):
    return CliRunner().invoke(build_demo_app(), list(args))


@pytest.mark.parametrize("stage", sorted(FAST))
def test_each_stage_runs_with_json_and_names_its_trace_and_run(stage: str, workdir: Path, events) -> None:
    trace = workdir / "runs" / f"{stage}.jsonl"

    result = invoke(stage, "--json", "--trace", str(trace), *FAST[stage])

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["ok"] is True and document["stage"] == stage
    assert Path(document["trace"]) == trace.resolve()
    run = events(trace, run_id=document["run_id"])
    assert run[0]["phase"] == "run_start" and run[-1]["phase"] == "run_end"
    assert {"start", "end"} <= {e["phase"] for e in run}
    assert {e["thread_id"] for e in run} == {document["thread_id"]}
    assert all(check["ok"] for check in document["checks"])


@pytest.mark.parametrize("stage", sorted(FAST))
def test_the_human_view_says_what_happened_and_where_the_run_went(stage: str, workdir: Path) -> None:
    result = invoke(stage, *FAST[stage])

    assert result.exit_code == 0, result.output
    default = (workdir / ".grapharc" / "traces" / f"{stage}.jsonl").resolve()
    assert f"trace     : {default}\n" in result.stdout
    assert "result    : demonstrated: " in result.stdout
    assert "run       : " in result.stdout and default.is_file()


BAD_INPUT = [
    (["stage1", "--bogus"], "No such option: --bogus"),
    (["stage1", "--max-rounds", "0"], "--max-rounds"),
    (["stage2", "--scenario", "nope"], "--scenario"),
    (["stage3", "--worker-timeout", "-1"], "--worker-timeout"),
    (["stage0", "--model", "mock/scripted"], "stage0 is pure code with no model in it"),
    (["stage0", "--resume"], "--resume needs the thread"),
    (["stage0", "--thread", "never-ran", "--resume"], "no checkpoint for thread 'never-ran'"),
    (["stage0", "--thread", "../escape"], "not usable"),
    (["stage1", "--config", "missing.toml"], "does not exist"),
    (["stage4", "--model", "nobackend"], "names no backend"),
    (["stage5", "--reviewer-model", "nobackend"], "names no backend"),
    (["stage5", "--reviewer-model", "nosuch/gpt-4o"], "nosuch"),
    (["stage1", "--trace", "."], "'.' is a directory, not a trace file"),
    (["stage0", "--report-dir", "/proc/no-such-place"], "cannot use"),
]


@pytest.mark.parametrize(("args", "says"), BAD_INPUT)
def test_bad_input_exits_2_with_one_line_and_no_traceback(args: list[str], says: str, workdir: Path,
                                                          grapharc) -> None:
    code, out, err = grapharc(*args)

    assert code == 2 and out == ""
    first, *rest = err.splitlines()
    assert first.startswith("error: ") and says in first
    assert all(line.startswith("hint: ") for line in rest) and len(rest) <= 1
    assert "Traceback" not in err


@pytest.mark.parametrize(("args", "says"), [BAD_INPUT[0], BAD_INPUT[4]])
def test_bad_input_with_json_is_the_error_document(args: list[str], says: str, workdir: Path,
                                                   grapharc) -> None:
    code, out, err = grapharc(*args, "--json")

    assert code == 2 and err == ""
    document = json.loads(out)
    assert document["ok"] is False and says in document["error"]["message"]


def test_a_bad_flag_in_a_real_process_is_one_line_on_stderr(process) -> None:
    result = process("stage2", "--max-attempts", "zero")

    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


def test_stage0_fails_then_resumes_through_its_flags_and_refuses_to_reuse_a_thread(
        workdir: Path, grapharc) -> None:
    code, out, _err = grapharc("stage0", "--inject-failure", "error", "--json")
    failed = json.loads(out)
    assert code == 0 and failed["status"] == "failed" and failed["error"]
    assert failed["report"]["exists"] is False and failed["report"]["temp_files"] == []
    thread = failed["thread_id"]
    assert failed["hints"][0].startswith(f"grapharc demo stage0 --thread {thread} --resume ")

    code, _out, err = grapharc("stage0", "--thread", thread)
    assert code == 2 and "already has checkpoints" in err

    code, out, _err = grapharc("stage0", "--thread", thread, "--resume", "--json")
    resumed = json.loads(out)
    assert code == 0 and resumed["attempt"] == 2 and resumed["report"]["exists"]
    assert [a["nodes"] for a in resumed["attempts"]] == [["load", "split", "count", "report"], ["report"]]

    code, _out, err = grapharc("stage0", "--thread", thread, "--resume")
    assert code == 2 and "already finished" in err


@pytest.mark.parametrize("resume", [[], ["--resume"]], ids=["reuse", "resume-finished"])
def test_stage0_refusing_a_thread_creates_no_trace_file(workdir: Path, grapharc, resume) -> None:
    """Found by the CLI fuzz suite at FUZZ_N=100: the refusal came after the trace was opened."""
    code, out, _err = grapharc("stage0", "--thread", "t1", "--json")
    assert code == 0, out

    code, _out, err = grapharc("stage0", "--thread", "t1", "--trace", "new.jsonl", *resume)

    assert code == 2 and ("already has checkpoints" in err or "already finished" in err)
    assert not (workdir / "new.jsonl").exists()


def test_stage0_resume_against_a_database_of_another_kind_refuses_and_leaves_it_unchanged(
        workdir: Path, grapharc) -> None:
    """Found by the CLI fuzz suite: the refusal came after LangGraph's tables were added to the file."""
    other = workdir / "sessions.db"
    with closing(sqlite3.connect(other)) as db, db:
        db.execute("CREATE TABLE audit (seq INTEGER PRIMARY KEY, detail TEXT)")
        db.execute("INSERT INTO audit (detail) VALUES ('kept')")
    before = other.read_bytes()

    code, _out, err = grapharc("stage0", "--thread", "goal", "--resume", "--checkpoints", str(other))

    assert code == 2 and "no checkpoint for thread 'goal'" in err
    assert other.read_bytes() == before
    with closing(sqlite3.connect(other)) as db:
        assert [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] \
            == ["audit"]


def test_stage0_resume_against_a_file_that_is_not_a_database_names_it(workdir: Path, grapharc) -> None:
    blob = workdir / "blob.bin"
    blob.write_bytes(bytes(range(256)) * 4)

    code, _out, err = grapharc("stage0", "--thread", "goal", "--resume", "--checkpoints", str(blob))

    assert code == 2 and f"cannot use {blob} as a checkpoint store" in err and "Traceback" not in err
    assert blob.read_bytes() == bytes(range(256)) * 4


def test_a_loop_that_only_the_ceiling_stops_exits_1(workdir: Path) -> None:
    result = invoke("stage1", "--task", "unbounded", "--max-rounds", "1000", "--max-iterations", "30",
                    "--json")

    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["status"] == "exhausted"
    assert document["run"]["status"] == "budget_exceeded"


def test_model_names_the_backend_the_loop_runs_against(workdir: Path) -> None:
    result = invoke("stage1", "--model", "mock/echo", "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["model"] == "mock/echo" and document["sources"]["model"] == "flag"
    assert document["stop_reason"] == "no_progress"
    assert all(a["reply"].startswith("scripted reply to: Task:") for a in document["state"]["attempts"])


def test_settings_come_from_the_config_file_below_the_environment_and_flags(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = workdir / "demo.toml"
    config.write_text("[grapharc]\nmax_rounds = 2\ntrace = \"from-file.jsonl\"\n")

    from_file = json.loads(invoke("stage1", "--task", "unbounded", "--config", str(config),
                                  "--json").stdout)
    monkeypatch.setenv("GRAPHARC_MAX_ROUNDS", "3")
    from_env = json.loads(invoke("stage1", "--task", "unbounded", "--config", str(config),
                                 "--json").stdout)
    from_flag = json.loads(invoke("stage1", "--task", "unbounded", "--config", str(config),
                                  "--max-rounds", "4", "--json").stdout)

    assert (from_file["stop_reason"], from_file["state"]["rounds"]) == ("round_cap", 2)
    assert from_file["sources"]["max_rounds"] == "file"
    assert Path(from_file["trace"]) == (workdir / "from-file.jsonl").resolve()
    assert from_env["state"]["rounds"] == 3 and from_env["sources"]["max_rounds"] == "env"
    assert from_flag["state"]["rounds"] == 4 and from_flag["sources"]["max_rounds"] == "flag"


def test_stage2_bad_output_via_the_cli_names_node_step_and_replay_point(workdir: Path) -> None:
    result = invoke("stage2", "--scenario", "bad-output", "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["status"] == "caught"
    assert (document["caught"]["node"], document["caught"]["step"]) == ("extract", 3)
    assert document["replay_point"]["step"] == 2
    assert Path(document["checkpoints"]) == (workdir / ".grapharc" / "checkpoints.db").resolve()


def test_listing_the_demo_commands_imports_no_langgraph() -> None:
    probe = ("import sys; from grapharc.cli.demo_commands import build_demo_app; build_demo_app(); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain_core')))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)

    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stderr


def test_a_trace_path_the_demo_cannot_write_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from grapharc.cli.main import build_app
    from grapharc.testing.cli import run_cli

    (tmp_path / "f.txt").write_text("a file")
    for target in (tmp_path, tmp_path / "f.txt" / "t.jsonl"):
        flag = run_cli(["demo", "stage0", "--trace", str(target), "--json"], app=build_app())
        assert flag.exit_code == 2
        document = json.loads(flag.stdout)
        assert document["error"]["code"] == "UsageError" and str(target) in document["error"]["message"]
        setting = CliRunner().invoke(build_app(), ["demo", "stage0", "--json"],
                                     env={"GRAPHARC_TRACE": str(target)})
        assert setting.exit_code == 2
        document = json.loads(setting.stdout)
        assert document["error"]["code"] == "TraceOpenError" and str(target) in document["error"]["message"]


@pytest.mark.parametrize("stage", ["stage6", "capstone"])
def test_a_trace_the_demo_cannot_open_is_refused_before_the_memory_store_is_created(
        stage: str, workdir: Path, grapharc, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the CLI fuzz suite: the store was created, then the trace refused (exit 2)."""
    (workdir / "f.txt").write_text("a file")
    monkeypatch.setenv("GRAPHARC_TRACE", str(workdir / "f.txt" / "t.jsonl"))  # past the flag's check
    before = sorted(workdir.iterdir())

    code, out, err = grapharc(stage, "--memory", "fresh.db")

    assert code == 2 and out == "" and "cannot write the trace" in err
    assert sorted(workdir.iterdir()) == before  # no fresh.db


def test_a_trace_setting_naming_a_store_uri_is_refused_by_the_demos_which_write_files(
        workdir: Path, grapharc, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHARC_TRACE", "file:runs/t.jsonl")

    code, out, err = grapharc("stage0")

    assert code == 2 and out == "" and "GRAPHARC_TRACE names a traces store URI" in err
    assert list(workdir.iterdir()) == []


VOLATILE = ("run_id", "thread_id", "trace", "config", "sources")


def test_stage5_is_deterministic_and_its_json_is_one_document(workdir: Path) -> None:
    first, second = (invoke("stage5", "--json") for _ in range(2))

    assert first.exit_code == second.exit_code == 0
    documents = [json.loads(result.stdout) for result in (first, second)]
    stable = [{key: value for key, value in d.items() if key not in VOLATILE} for d in documents]
    assert stable[0] == stable[1] and stable[0]["ok"] is True
    reviewed = {r["claim"]: r for r in documents[0]["state"]["reviewed"]}
    assert reviewed["A payment-gateway timeout caused the outage"]["reviewer_calls"] == 0
    assert documents[0]["reviewer_calls"] == 4 and documents[0]["warnings"] == []
    human = [invoke("stage5").stdout for _ in range(2)]
    assert [line for line in human[0].splitlines() if not line.startswith(("run", "see also"))] == \
        [line for line in human[1].splitlines() if not line.startswith(("run", "see also"))]


def test_stage5_warns_on_stderr_when_author_and_reviewer_reach_one_vendor(workdir: Path, grapharc) -> None:
    code, out, err = grapharc("stage5", "--model", "mock/author", "--reviewer-model", "mock/reviewer",
                              "--json")

    assert code == 0, err
    document = json.loads(out)
    assert err.startswith("warning: the author (mock/author) and the reviewer (mock/reviewer) both "
                          "reach grapharc")
    assert document["warnings"] and document["independence"]["different_providers"] is False


class Acme:
    """An aggregator backend whose models are scripted doubles, so no test reaches a network."""

    @staticmethod
    @hookimpl
    def register_model_backends(register):
        register(BackendInfo(prefix="acme", factory="grapharc.models.scripted:create_scripted_model",
                             vendor="acme"))


@pytest.mark.parametrize(("flags", "warned"), [
    (["--reviewer-model", "acme/openai/gpt-4o-mini"], False),
    (["--model", "acme/anthropic/claude-haiku-4.5", "--reviewer-model", "acme/openai/gpt-4o-mini"], False),
    (["--model", "acme/anthropic/claude-haiku-4.5", "--reviewer-model", "acme/claude-sonnet-5"], True),
    (["--model", "acme/anthropic/claude-haiku-4.5"], True),  # the reviewer defaults to --model's spec
])
def test_stage5_compares_the_vendors_the_specs_reach(flags: list[str], warned: bool, workdir: Path,
                                                      grapharc) -> None:
    with plugin_host(in_process_source(Acme, name="acme-backend")):
        code, out, err = grapharc("stage5", *flags)

    assert code == 0, err
    assert ("both reach anthropic" in err) is warned and ("warning" in err) is warned
    assert "result    : demonstrated" in out


class Unbuildable:
    """A backend whose factory cannot be loaded: the run stops on its models before any call."""

    @staticmethod
    @hookimpl
    def register_model_backends(register):
        register(BackendInfo(prefix="unbuildable", factory="nowhere:open", vendor="acme"))


@pytest.mark.parametrize("stage", ["stage5", "capstone"])
def test_a_shared_vendor_is_warned_before_the_run_even_when_the_models_then_fail(stage: str, workdir: Path,
                                                                                grapharc) -> None:
    with plugin_host(in_process_source(Unbuildable, name="unbuildable-backend")):
        code, _out, err = grapharc(stage, "--model", "unbuildable/a", "--reviewer-model", "unbuildable/b")

    assert code == 2, err
    warning, error = err.splitlines()[:2]
    assert warning.startswith("warning: the author (unbuildable/a) and the reviewer (unbuildable/b) both "
                              "reach acme")
    assert error.startswith("error: ")


def test_stage5_exits_1_when_a_budget_stops_it_before_the_review(workdir: Path) -> None:
    result = invoke("stage5", "--max-tokens", "50", "--json")

    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["status"] == "exhausted"
    assert document["run"]["status"] == "budget_exceeded" and document["reviewer_calls"] == 0
