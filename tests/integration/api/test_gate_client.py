"""`hfvet gate --server URL` as a deploy script runs it: a cold process against a live `hfvet serve`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.examples import build_examples
from app.hubfixture import FixtureHub
from tests.integration.api.served import ROOT, hfvet, live_server

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
runner = CliRunner()


class Served:
    def __init__(self, url: str, env: dict[str, str], token: str) -> None:
        self.url, self.env, self.token = url, env, token

    def gate(self, *args: str, token: str | None = "", server: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {"HFVET_TOKEN": self.token if token == "" else (token or "")}
        return hfvet("gate", *args, "--server", server or self.url, env=env)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """nvidia approved, canada-quant rejected, in a store behind a server that wants reader tokens."""
    tmp = tmp_path_factory.mktemp("gate-client")
    build_examples(tmp / "hub")
    with FixtureHub(tmp / "hub") as hub:
        env = {"HF_ENDPOINT": hub.url, "HFVET_DATABASE_URL": f"sqlite:///{tmp / 'store.db'}", "HFVET_READ_AUTH": "1"}
        for repo in (NVIDIA, CANADA):
            vetted = runner.invoke(app, ["vet", repo, "--policy", "default", "--format", "json"], env=env)
            assert vetted.exit_code in (0, 1), vetted.output
        created = runner.invoke(app, ["token", "create", "--role", "reader", "--name", "deploy"], env=env)
        assert created.exit_code == 0, created.output
        with live_server(env, tmp / "serve.log") as url:
            yield Served(url, env, created.stdout.strip().splitlines()[-1])


def local_gate(served: Served, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["gate", *args], env={**served.env, "HFVET_SERVER": ""})
    return result.exit_code, result.stdout


def test_an_approved_repo_prints_its_commit_and_exits_0(served: Served) -> None:
    result = served.gate(NVIDIA)
    assert result.returncode == 0, result.stderr
    sha = result.stdout.strip()
    assert len(sha) == 40 and result.stdout == local_gate(served, NVIDIA)[1]
    pinned = served.gate(NVIDIA, "--revision", sha)
    assert (pinned.returncode, pinned.stdout) == (0, result.stdout)


def test_json_is_the_same_document_as_the_local_gate(served: Served) -> None:
    remote = served.gate(NVIDIA, "--format", "json")
    code, local = local_gate(served, NVIDIA, "--format", "json")
    assert remote.returncode == code == 0
    assert json.loads(remote.stdout) == json.loads(local)


def test_a_rejected_repo_exits_1_with_the_reasons_on_stderr(served: Served) -> None:
    result = served.gate(CANADA)
    assert result.returncode == 1 and result.stdout == ""
    assert "refused" in result.stderr and "(reject)" in result.stderr and "third-party" in result.stderr


def test_a_commit_never_vetted_exits_4_with_how_to_vet(served: Served) -> None:
    result = served.gate(NVIDIA, "--revision", "a" * 40)
    assert result.returncode == 4 and "hfvet vet" in result.stderr


def test_the_server_comes_from_hfvet_server(served: Served) -> None:
    result = hfvet("gate", NVIDIA, env={"HFVET_SERVER": served.url, "HFVET_TOKEN": served.token})
    assert result.returncode == 0 and len(result.stdout.strip()) == 40


def test_without_a_token_the_server_refuses_and_nothing_is_approved(served: Served) -> None:
    result = served.gate(NVIDIA, token=None)
    assert result.returncode == 2 and result.stdout == ""
    assert "401 token-required" in " ".join(result.stderr.split())


def test_a_bad_token_is_an_error(served: Served) -> None:
    result = served.gate(NVIDIA, token="hfv_not-a-real-token")
    assert result.returncode == 2 and "bad-token" in result.stderr


def test_a_malformed_repo_id_is_an_error(served: Served) -> None:
    """Refused by the command line itself, before the server is asked, in the server's words (app.core.ids)."""
    result = served.gate("not a repo")
    assert result.returncode == 2 and result.stderr == "error: repo must be ORG/NAME, got 'not a repo'\n"


def test_an_unreachable_server_fails_closed(served: Served) -> None:
    result = served.gate(NVIDIA, server="http://127.0.0.1:9")
    assert result.returncode == 2 and result.stdout == ""
    assert "cannot reach the hfvet server at http://127.0.0.1:9" in " ".join(result.stderr.split())



@pytest.mark.parametrize("server", ["http://deploy:s3cr3t-token@127.0.0.1:9", "http://s3cr3t-token@127.0.0.1:9",
                                    "ftp://deploy:s3cr3t-token@127.0.0.1:9"])
def test_credentials_in_the_server_url_are_never_printed(served: Served, server: str) -> None:
    result = served.gate(NVIDIA, server=server)
    assert result.returncode == 2 and "s3cr3t" not in result.stdout + result.stderr

def test_a_server_url_without_http_is_an_error(served: Served) -> None:
    result = served.gate(NVIDIA, server="file:///etc/passwd")
    assert result.returncode == 2 and "http://" in result.stderr


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        (500, b'{"error": {"code": "boom", "message": "store down"}}', "500 boom: store down"),
        (503, b"<html>bad gateway</html>", "503 without a JSON object"),
        (200, b"not json", "200 without a JSON object"),
        (200, b'{"status": "approved", "approved": true, "revision": "main"}', None),  # not a commit
        (200, b'{"status": "approved", "approved": false, "revision": "' + b"a" * 40 + b'"}', None),
        (200, b'{"approved": true, "revision": "' + b"a" * 40 + b'"}', "200 with no gate answer"),
        (200, b'[]', "without a JSON object"),
    ],
)
def test_anything_but_a_clear_approval_fails_closed(tmp_path: Path, status: int, body: bytes,
                                                    says: str | None) -> None:
    with CannedServer(status, body) as url:
        result = hfvet("gate", NVIDIA, "--server", url, env={"HFVET_TOKEN": ""})
    assert result.returncode == 2 and result.stdout == ""
    if says:
        assert says in " ".join(result.stderr.split())  # rich wraps long lines



SHA_A, SHA_B = "a" * 40, "b" * 40


def _approval(repo: str = NVIDIA, sha: str = SHA_A) -> bytes:
    return json.dumps({"status": "approved", "approved": True, "repo": repo, "revision": sha}).encode()


@pytest.mark.parametrize(
    ("status", "body", "args"),
    [
        (403, _approval(), ()),  # a refusal status with an approving body (a proxy, a bug): not an approval
        (404, _approval(), ()),
        (200, _approval(repo="evil/other"), ()),  # approves another repo
        (200, _approval(sha=SHA_B), ("--revision", SHA_A)),  # approves another commit than the one asked for
    ],
)
def test_an_approval_that_does_not_answer_the_question_fails_closed(status: int, body: bytes,
                                                                     args: tuple[str, ...]) -> None:
    with CannedServer(status, body) as url:
        result = hfvet("gate", NVIDIA, *args, "--server", url, env={"HFVET_TOKEN": ""})
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr

def test_the_remote_gate_imports_no_store_policy_or_scanner(served: Served) -> None:
    probe = ("import sys; from app.cli.main import main\n"
             "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
             "heavy = sorted(m for m in ('sqlalchemy', 'fastapi', 'numpy', 'celpy', 'huggingface_hub', 'httpx',"
             " 'pydantic_settings', 'app.core.policy', 'app.core.scanners', 'app.services', 'app.db')"
             " if m in sys.modules)\n"
             "print(code, heavy)")
    result = subprocess.run([sys.executable, "-c", probe, "gate", NVIDIA, "--server", served.url], cwd=ROOT,
                            env={"PATH": "", "HFVET_TOKEN": served.token}, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.stdout.strip().splitlines()[-1] == "0 []", result.stdout + result.stderr


class _Canned(BaseHTTPRequestHandler):
    status = 200
    body = b""

    def do_GET(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_: object) -> None:
        pass


class CannedServer:
    """A loopback server answering every GET with one canned reply."""

    def __init__(self, status: int, body: bytes) -> None:
        handler = type("Handler", (_Canned,), {"status": status, "body": body})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *_: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
