"""`hfvet gate --server` skips typer, rich and pydantic (app/cli/gate_fast.py): the same answers
as the full command line, side by side, for every kind of server answer; anything else falls
through to the full command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.cli.gate_fast import GateArgs, parse
from tests.integration.api.served import ROOT
from tests.integration.api.test_gate_client import NVIDIA, SHA_A, SHA_B, CannedServer

_FULL = "import sys; sys.argv[0] = 'hfvet'; from app.cli.main import main; main()"
_FAST = "import sys; sys.argv[0] = 'hfvet'; from app.cli.entry import main; main()"


def _run(entry: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", entry, *args], cwd=ROOT, env={"PATH": "", "HFVET_TOKEN": "t", **env},
                          capture_output=True, text=True, timeout=60, check=False)


def _answer(**fields: object) -> bytes:
    return json.dumps(fields).encode()


ANSWERS = [
    (200, _answer(status="approved", approved=True, repo=NVIDIA, revision=SHA_A,
                  policy={"name": "default", "sha256": "0" * 64}), ()),
    (200, _answer(status="approved", approved=True, repo=NVIDIA, revision=SHA_A), ("--format", "json")),
    (403, _answer(status="denied", repo=NVIDIA, revision=SHA_A, verdict="reject", approved=False,
                  reasons=["third-party-dangerous-capability: it installs a fork"], policy={"name": "default"}), ()),
    (403, _answer(status="denied", repo=NVIDIA, revision=SHA_A, verdict="review", approved=False, reasons=[]),
     ("-f", "json")),
    (404, _answer(status="not-vetted", repo=NVIDIA, revision=SHA_A, approved=False), ("--revision", SHA_A)),
    (409, _answer(status="moved", repo=NVIDIA, revision=SHA_B, approved=False, reasons=["main moved"]), ()),
    (200, _answer(status="approved", approved=True, repo="evil/other", revision=SHA_A), ()),  # not the question
    (200, b"not json", ()),
    (500, b"", ()),
]


@pytest.mark.parametrize(("status", "body", "args"), ANSWERS)
def test_the_fast_path_answers_exactly_as_the_full_command_line(status: int, body: bytes,
                                                                args: tuple[str, ...]) -> None:
    with CannedServer(status, body) as url:
        full = _run(_FULL, "gate", NVIDIA, *args, "--server", url)
        fast = _run(_FAST, "gate", NVIDIA, *args, f"--server={url}")
    assert (fast.returncode, fast.stdout) == (full.returncode, full.stdout)
    assert fast.stderr.split() == full.stderr.split()  # rich may wrap a long line; the words are the same


def test_an_unreachable_server_fails_closed_on_both_paths() -> None:
    for entry in (_FULL, _FAST):
        result = _run(entry, "gate", NVIDIA, "--server", "http://127.0.0.1:9")
        assert result.returncode == 2 and result.stdout == "" and "error:" in result.stderr


@pytest.mark.parametrize(("env", "server", "named"), [
    ({"HF_ENDPOINT": "not-a-url"}, "ok", "HF_ENDPOINT: "),  # every command refuses it, the remote gate too
    ({"HF_ENDPOINT": ""}, "ok", "HF_ENDPOINT: "),
    ({"HFVET_SERVER": "http://"}, None, "HFVET_SERVER: "),
    ({}, "http://", "--server: "),
])
def test_a_bad_url_setting_stops_both_paths_before_the_server_is_asked(env: dict[str, str], server: str | None,
                                                                        named: str) -> None:
    with CannedServer(200, _answer(status="approved", approved=True, repo=NVIDIA, revision=SHA_A)) as url:
        args = ("--server", url if server == "ok" else server) if server else ()
        for entry in (_FULL, _FAST):
            result = _run(entry, "gate", NVIDIA, *args, **env)
            assert (result.returncode, result.stdout) == (2, ""), result.stderr
            assert result.stderr.startswith(f"error: {named}not an http:// or https:// URL with a host")


def test_the_fast_path_loads_no_command_line_framework() -> None:
    probe = ("import sys; sys.argv[0] = 'hfvet'\nfrom app.cli.entry import main\n"
             "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
             "heavy = ('typer', 'click', 'rich', 'pydantic', 'app.cli.main')\n"
             "print(code, sorted(m for m in heavy if m in sys.modules))")
    with CannedServer(200, _answer(status="approved", approved=True, repo=NVIDIA, revision=SHA_A)) as url:
        result = _run(probe, "gate", NVIDIA, "--server", url)
    assert result.stdout.strip().splitlines()[-1] == "0 []", result.stdout + result.stderr


@pytest.mark.parametrize("argv", [
    ["gate", NVIDIA],  # no server: the local store, the full CLI
    ["gate", "--help"], ["gate", NVIDIA, "--server", "u", "--help"], ["gate", NVIDIA, "--server"],
    ["gate", NVIDIA, "other", "--server", "u"], ["gate", NVIDIA, "--server", "u", "--format", "sarif"],
    ["gate", NVIDIA, "--server", "u", "--verbose"], ["scan", "x"], [],
    ["gate", "nvidia", "--server", "u"], ["gate", NVIDIA, "-r", "a..b", "--server", "u"],  # malformed: refused there
])
def test_anything_else_goes_to_the_full_command_line(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HFVET_SERVER", raising=False)
    assert parse(argv) is None


def test_the_fast_path_reads_what_the_full_one_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_SERVER", "http://s")
    monkeypatch.setenv("HFVET_TOKEN", "tok")
    assert parse(["gate", NVIDIA, "-r", "main"]) == GateArgs(NVIDIA, "main", "text", "http://s", "tok")
    assert parse(["gate", NVIDIA, "--revision=v1", "--server", "http://o", "--token", "x", "-f", "json"]) == \
        GateArgs(NVIDIA, "v1", "json", "http://o", "x")
