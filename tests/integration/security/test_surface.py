"""The HTTP surface: security headers on every answer, rate limits on writes, no request to a caller's URL."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.api.ratelimit import TokenBuckets, address_key
from app.api.security import CONTENT_SECURITY_POLICY
from app.server import create_app
from tests.integration.security.served import WEBHOOK_SECRET, Served, fill_store, served, settings_for
from tests.integration.security.test_authorization import MATRIX, request
from tests.integration.vetted import APPROVE_REPO, Vetted, vet_examples

HOSTILE_REPOS = (
    "http://evil/x",
    "https://evil.example/x",
    "../../etc",
    "evil/../../x",
    "//evil/x",
    "evil.example:80/x",
    "org/name?x=http://evil",
    "file:///etc/passwd",
    "org/..",
    "\\\\evil\\x",
)


@pytest.fixture(scope="module")
def vetted(tmp_path_factory: pytest.TempPathFactory) -> Vetted:
    return vet_examples(tmp_path_factory.mktemp("hub"))


@pytest.fixture
def s(tmp_path: Path, vetted: Vetted) -> Iterator[Served]:
    with served(tmp_path, vetted) as opened:
        yield opened


def assert_hardened(headers: dict[str, str], *, docs: bool = False) -> None:
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    csp = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    if not docs:
        assert csp == CONTENT_SECURITY_POLICY and "unsafe-inline" not in csp


def test_every_route_and_every_error_carries_the_security_headers(s: Served, vetted: Vetted) -> None:
    for method, path in MATRIX:
        for role in (None, "admin"):
            answer = request(s, vetted, method, path, role)
            assert_hardened(dict(answer.headers), docs=path.startswith(("/docs", "/redoc")))
    for answer in (
        s.client.get("/nowhere"),
        s.client.put("/gate"),
        s.client.get("/gate", params={"repo": "x"}),
        s.client.post("/vet", headers={"Authorization": "Basic x"}),
    ):
        assert answer.status_code in (401, 404, 405, 422)
        assert_hardened(dict(answer.headers))


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("TRACE", "/gate", "GET"),
    ("PUT", "/gate", "GET"),
    ("DELETE", "/vet", "POST"),
    ("GET", "/reviews", "POST"),
    ("TRACE", "/ui/reviews", "GET, POST"),  # two routes on one path: both methods, not the first route's
    ("POST", "/ui/static/app.js", "GET, HEAD"),
])
def test_a_405_says_which_methods_the_path_allows(s: Served, method: str, path: str, allow: str) -> None:
    answer = s.client.request(method, path)
    assert answer.status_code == 405 and answer.json()["error"]["code"] == "method-not-allowed"
    assert answer.headers["allow"] == allow
    assert_hardened(dict(answer.headers))


def test_the_gates_fast_path_carries_them_too(s: Served, vetted: Vetted) -> None:
    params = {"repo": APPROVE_REPO, "revision": vetted.approve.revision}
    first, second = s.client.get("/gate", params=params), s.client.get("/gate", params=params)
    assert first.status_code == second.status_code == 200 and first.content == second.content
    assert_hardened(dict(second.headers))  # the second one is the cached answer, sent before FastAPI


def test_a_flood_of_writes_gets_429_with_retry_after_and_reads_go_on(tmp_path: Path, vetted: Vetted) -> None:
    with served(tmp_path, vetted, rate_limit_burst=3, rate_limit_per_second=0.01) as s:
        vetter, reviewer = s.headers("vetter"), s.headers("reviewer")
        sent = [s.client.post("/vet", params={"repo": APPROVE_REPO}, headers=vetter) for _ in range(5)]
        assert [a.status_code for a in sent] == [202, 202, 202, 429, 429]
        assert sent[-1].json()["error"]["code"] == "rate-limited"
        assert 1 <= int(sent[-1].headers["retry-after"]) <= 100
        assert_hardened(dict(sent[-1].headers))
        assert s.client.post("/vet", params={"repo": APPROVE_REPO}, headers=reviewer).status_code == 202  # own bucket
        assert s.client.get("/repos", headers=vetter).status_code == 200  # reads are not limited
        anonymous = [s.client.post("/webhooks/huggingface", json={}).status_code for _ in range(4)]
        assert anonymous == [401, 401, 401, 429]  # no token: limited by address, before the secret is checked


def test_random_bearer_strings_share_their_address_bucket(tmp_path: Path, vetted: Vetted) -> None:
    with served(tmp_path, vetted, rate_limit_burst=3, rate_limit_per_second=0.01) as s:
        forged = [s.client.post("/vet", params={"repo": APPROVE_REPO}, headers={"Authorization": f"Bearer hfv_{i}"})
                  for i in range(5)]
        assert [a.status_code for a in forged] == [401, 401, 401, 429, 429]  # not a fresh bucket per string
        assert s.client.post("/webhooks/huggingface", json={}).status_code == 429  # the same address, spent
        vetter = s.client.post("/vet", params={"repo": APPROVE_REPO}, headers=s.headers("vetter"))
        assert vetter.status_code == 202  # a live token is its own caller, whatever its address did


def test_a_spray_of_bearers_does_not_reset_a_live_tokens_bucket(tmp_path: Path, vetted: Vetted) -> None:
    with served(tmp_path, vetted, rate_limit_burst=2, rate_limit_per_second=0.001) as s:
        vetter = s.headers("vetter")
        spent = [s.client.post("/vet", params={"repo": APPROVE_REPO}, headers=vetter).status_code for _ in range(3)]
        assert spent == [202, 202, 429]
        for i in range(10_000):  # more strings than the table holds callers
            s.client.post("/reviews", headers={"Authorization": f"Bearer hfv_spray{i}"})
        assert s.client.post("/vet", params={"repo": APPROVE_REPO}, headers=vetter).status_code == 429


@pytest.mark.parametrize(("host", "key"), [
    ("203.0.113.7", "ip:203.0.113.7"),
    ("2001:db8:1:2:aaaa::1", "ip:2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff::9", "ip:2001:db8:1:2::/64"),  # the same host's /64: the same caller
    ("::ffff:203.0.113.7", "ip:203.0.113.7"),
    ("testclient", "ip:testclient"),
])
def test_an_address_is_keyed_by_what_one_host_holds(host: str, key: str) -> None:
    assert address_key({"client": (host, 1234)}) == key


def test_a_bucket_refills_and_the_table_of_callers_is_bounded() -> None:
    now = [0.0]
    buckets = TokenBuckets(2, 1.0, clock=lambda: now[0], max_keys=100)
    assert [buckets.take("a") for _ in range(3)] == [0, 0, 1.0]
    now[0] += 1.0
    assert buckets.take("a") == 0 and buckets.take("a") > 0
    for i in range(1000):
        buckets.take(f"ip:{i}")
    assert len(buckets._buckets) == 100


def test_the_webhook_needs_its_secret_and_takes_it(s: Served) -> None:
    payload = {"repo": {"type": "model", "name": APPROVE_REPO}}
    wrong = s.client.post("/webhooks/huggingface", json=payload, headers={"X-Webhook-Secret": "guess"})
    right = s.client.post("/webhooks/huggingface", json=payload, headers={"X-Webhook-Secret": WEBHOOK_SECRET})
    assert (wrong.status_code, right.status_code) == (401, 200)


@pytest.mark.parametrize("repo", HOSTILE_REPOS)
def test_a_url_or_path_as_repo_is_refused_before_any_request(s: Served, repo: str) -> None:
    answers = [
        s.client.post("/vet", params={"repo": repo}, headers=s.headers("vetter")),
        s.client.get("/gate", params={"repo": repo}),
        s.client.get("/gate", params={"repo": repo, "revision": "a" * 40}),
        s.client.get("/repos", params={"org": repo}),
        s.client.post(
            "/reviews",
            headers=s.headers("admin"),
            json={"repo": repo, "revision": "a" * 40, "decision": "approve", "reason": "x"},
        ),
        s.client.post(
            "/webhooks/huggingface",
            headers={"X-Webhook-Secret": WEBHOOK_SECRET},
            json={
                "repo": {"type": "model", "name": repo},
                "updatedRefs": [{"ref": "refs/heads/main", "newSha": "a" * 40}],
            },
        ),
    ]
    assert [a.status_code for a in answers if a.status_code not in (400, 404, 422)] == []
    assert s.asked == []  # the resolver (the only way to the hub) was never asked


@pytest.mark.parametrize("revision", ["http://evil/x", "../../etc", "main/../../x", "//evil"])
def test_a_url_or_path_as_revision_is_refused_before_any_request(s: Served, revision: str) -> None:
    answer = s.client.post("/vet", params={"repo": APPROVE_REPO, "revision": revision}, headers=s.headers("vetter"))
    assert answer.status_code == 422 and s.asked == []


def test_with_the_real_hub_client_only_the_configured_endpoint_is_asked(tmp_path: Path, vetted: Vetted) -> None:
    """The real resolver, the hub a recording loopback server: hostile ids never reach it, a good one does."""
    with recording_server() as (url, paths):
        settings = settings_for(tmp_path, HF_ENDPOINT=url)
        secrets, _ = fill_store(settings, vetted, job=False)
        with TestClient(create_app(settings)) as client:
            vetter = {"Authorization": f"Bearer {secrets['vetter']}"}
            refused = [client.post("/vet", params={"repo": repo}, headers=vetter).status_code for repo in HOSTILE_REPOS]
            assert set(refused) == {422} and paths == []
            client.post("/vet", params={"repo": APPROVE_REPO}, headers=vetter)
    assert paths and all(p.startswith(f"/api/models/{APPROVE_REPO}") for p in paths), paths


@contextmanager
def recording_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records each path asked and answers 404."""
    paths: list[str] = []

    class Recording(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            paths.append(self.path)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", paths
    finally:
        server.shutdown()
        server.server_close()


def test_the_session_cookie_is_httponly_samesite_and_secure_over_https(s: Served) -> None:
    from tests.integration.security.test_authorization import CSRF

    for base, secure in (("http://testserver", False), ("https://testserver", True)):
        s.client.cookies.clear()
        csrf = CSRF.search(s.client.get(f"{base}/ui/login").text)
        assert csrf is not None
        answer = s.client.post(f"{base}/ui/login", data={"token": s.secrets["reviewer"], "csrf": csrf.group(1)},
                               follow_redirects=False)
        cookie = answer.headers["set-cookie"].lower()
        assert answer.status_code == 303 and "httponly" in cookie and "samesite=lax" in cookie and "path=/ui" in cookie
        assert ("secure" in cookie.split("; ")) is secure, cookie
        assert s.secrets["reviewer"].lower() not in cookie  # the session names the token by its digest


def test_a_form_without_the_sessions_csrf_changes_nothing(s: Served, vetted: Vetted) -> None:
    from tests.integration.security.test_authorization import CSRF, _counts, log_in

    log_in(s, "admin")
    before = _counts(s)
    form = {"repo": "nvidia/Nemotron-Mini-Custom-Code", "revision": vetted.review.revision, "decision": "approve",
            "reason": "forged"}
    for csrf in (None, "", "x" * 43, "wrong"):
        sent = form if csrf is None else form | {"csrf": csrf}
        answer = s.client.post("/ui/reviews", data=sent, follow_redirects=False)
        assert answer.status_code == 403, answer.status_code
        assert_hardened(dict(answer.headers))
    vet = s.client.post("/ui/vet", data={"repo": APPROVE_REPO, "csrf": "wrong"}, follow_redirects=False)
    assert vet.status_code == 403 and _counts(s) == before
    good = CSRF.search(s.client.get("/ui/vet").text)
    assert good is not None  # and with the right one the same form is taken
    assert s.client.post("/ui/reviews", data=form | {"csrf": good.group(1)}, follow_redirects=False).status_code == 303


def test_no_page_carries_inline_script_or_style(s: Served, vetted: Vetted) -> None:
    from tests.integration.security.test_authorization import log_in

    log_in(s, "admin")
    for url in ("/ui/", f"/ui/repos/{APPROVE_REPO}", "/ui/reviews", "/ui/vet", "/ui/pulls", "/ui/policy", "/ui/login",
                f"/ui/repos/{APPROVE_REPO}/diff", "/ui/nowhere"):
        html = s.client.get(url).text
        scripts = re.findall(r"<script\b[^>]*>", html, re.I)
        assert all("src=" in tag for tag in scripts), (url, scripts)  # only files: nothing inline to allow
        assert not re.search(r"<style\b|\sstyle=|\son[a-z]+=", html, re.I), url
