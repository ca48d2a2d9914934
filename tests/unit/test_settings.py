"""Settings read the environment once, with huggingface_hub's names for its own variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings, SettingsError, child_environment, reveal


def test_environment_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:1234")
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    monkeypatch.setenv("HFVET_POLICIES_DIR", str(tmp_path))
    monkeypatch.setenv("HFVET_HUB_WORKERS", "3")
    s = Settings()
    assert (s.hf_endpoint, reveal(s.hf_token), s.policies_root(), s.hub_workers) == (
        "http://127.0.0.1:1234", "hf_x", tmp_path, 3)


def test_bad_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_SCAN_WORKERS", "0")
    with pytest.raises(SettingsError, match="HFVET_SCAN_WORKERS"):
        Settings()


def test_polling_is_off_by_default_and_a_negative_interval_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().poll_seconds == 0
    monkeypatch.setenv("HFVET_POLL_SECONDS", "-1")
    with pytest.raises(SettingsError, match="HFVET_POLL_SECONDS"):
        Settings()


@pytest.mark.parametrize("value", ["not-a-url", "", "http://", "ftp://hub.example", "//hub.example",
                                   "http://hub.example:99999", "hub.example:8090"])
def test_the_hub_endpoint_must_be_an_http_url_with_a_host(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HF_ENDPOINT", value)
    with pytest.raises(SettingsError) as caught:
        Settings()
    assert caught.value.lines == [f"HF_ENDPOINT: not an http:// or https:// URL with a host: {value!r}"]


@pytest.mark.parametrize("value", ["https://huggingface.co", "http://127.0.0.1:8090", "https://mirror.example/hf/"])
def test_mirrors_and_the_fixture_hub_are_endpoints(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("HF_ENDPOINT", value)
    assert Settings().hf_endpoint == value


def test_the_server_url_is_checked_like_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_SERVER", "http://")
    with pytest.raises(SettingsError, match=r"^HFVET_SERVER: not an http"):
        Settings()


def test_an_empty_server_means_none_as_for_the_gate_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_SERVER", "")  # click ignores it for `gate --server`: the local store
    assert Settings().server is None


@pytest.mark.parametrize(("name", "value", "masked"), [
    ("HF_ENDPOINT", "https://hf_sEcReT@", "https://***@"),
    ("HFVET_SERVER", "https://ci:sEcReT@:8000", "https://ci:***@:8000"),
    ("HFVET_SERVER", "ftp://mirror/?token=sEcReT", "ftp://mirror/?token=***"),
])
def test_a_bad_url_is_shown_without_its_credentials(monkeypatch: pytest.MonkeyPatch, name: str, value: str,
                                                     masked: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        Settings()
    assert caught.value.lines == [f"{name}: not an http:// or https:// URL with a host: {masked!r}"]


@pytest.mark.parametrize(("name", "value"), [
    ("HFVET_POLL_SECONDS", "nan"), ("HFVET_POLL_SECONDS", "inf"), ("HFVET_RATE_LIMIT_PER_SECOND", "-inf"),
    ("HFVET_WORKER_HEARTBEAT_SECONDS", "inf"), ("HFVET_JOB_NICE", "20"), ("HFVET_HUB_WORKERS", "65"),
    ("HFVET_RATE_LIMIT_BURST", "-1"),
])
def test_numbers_must_be_finite_and_in_range(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        Settings()
    [line] = caught.value.lines
    assert line.startswith(f"{name}: ") and line.endswith(f": {value!r}")


def test_every_bad_setting_is_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "nowhere")
    monkeypatch.setenv("HFVET_JOB_WORKERS", "0")
    with pytest.raises(SettingsError) as caught:
        Settings()
    assert [line.split(":")[0] for line in caught.value.lines] == ["HF_ENDPOINT", "HFVET_JOB_WORKERS"]


def test_paths_are_sane(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value, reason in [("HFVET_POLICIES_DIR", str(tmp_path / "missing"), "not a directory"),
                                ("HFVET_POLICIES_DIR", "", "not a directory"),
                                ("HFVET_POLICY", "", "empty")]:
        with monkeypatch.context() as env:
            env.setenv(name, value)
            with pytest.raises(SettingsError, match=f"^{name}: {reason}"):
                Settings()


@pytest.mark.parametrize("value", ["", "relative/share"])
def test_an_empty_or_relative_xdg_data_home_is_ignored_as_the_spec_says(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.delenv("HFVET_DATABASE_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", value)
    assert Settings().store_url() == f"sqlite:///{Path.home() / '.local/share/hfvet/hfvet.db'}"


def test_a_bad_database_url_is_named_but_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_DATABASE_URL", "hfvet:sEcReT@db.internal/hfvet")
    with pytest.raises(SettingsError) as caught:
        Settings()
    assert caught.value.lines == ["HFVET_DATABASE_URL: not a database URL (dialect+driver://...)"]


def test_policy_names_resolve_under_the_policies_dir(tmp_path: Path) -> None:
    s = Settings(policies_dir=tmp_path)
    assert s.resolve_policy(Path("strict")) == tmp_path / "strict.yaml"
    given = tmp_path / "mine.yaml"
    assert s.resolve_policy(given) == given  # a path stays a path


def test_without_a_policies_dir_the_checkout_copy_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HFVET_POLICIES_DIR", raising=False)
    assert (Settings().policies_root() / "default.yaml").is_file()


SECRETS = {"HF_TOKEN": "hf_sEcReT-hub-token", "HFVET_TOKEN": "hfv_sEcReT-api-token",
           "HFVET_WEBHOOK_SECRET": "sEcReT-webhook",
           "HFVET_DATABASE_URL": "postgresql+psycopg://hfvet:sEcReT-db-pass@db.internal/hfvet"}


@pytest.fixture
def secrets_set(monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_secrets_never_show_in_a_repr_a_str_or_a_dump(secrets_set: Settings) -> None:
    shown = [repr(secrets_set), str(secrets_set), secrets_set.model_dump_json(), repr(secrets_set.model_dump()),
             f"{secrets_set}", repr(secrets_set.model_copy(update={"job_workers": 3}))]
    for text in shown:
        assert "sEcReT" not in text, text
    assert "**********" in repr(secrets_set)


def test_the_secrets_are_still_there_for_the_code_that_sends_them(secrets_set: Settings) -> None:
    assert reveal(secrets_set.hf_token) == SECRETS["HF_TOKEN"]
    assert reveal(secrets_set.token) == SECRETS["HFVET_TOKEN"]
    assert reveal(secrets_set.webhook_secret) == SECRETS["HFVET_WEBHOOK_SECRET"]
    assert secrets_set.store_url() == SECRETS["HFVET_DATABASE_URL"]
    assert reveal(None) is None


def test_a_settings_error_shows_no_secret(monkeypatch: pytest.MonkeyPatch, secrets_set: Settings) -> None:
    monkeypatch.setenv("HFVET_JOB_WORKERS", "zero")
    with pytest.raises(SettingsError) as caught:
        Settings()
    assert "HFVET_JOB_WORKERS" in str(caught.value) and "sEcReT" not in str(caught.value)


def test_a_child_process_still_gets_the_secrets(secrets_set: Settings) -> None:
    env = child_environment(drop=("HF_TOKEN",), HFVET_POLICY="strict")
    assert {k: env[k] for k in ("HFVET_TOKEN", "HFVET_WEBHOOK_SECRET", "HFVET_DATABASE_URL")} == {
        k: SECRETS[k] for k in ("HFVET_TOKEN", "HFVET_WEBHOOK_SECRET", "HFVET_DATABASE_URL")}
    assert "HF_TOKEN" not in env and env["HFVET_POLICY"] == "strict"
    assert child_environment()["HF_TOKEN"] == SECRETS["HF_TOKEN"]
