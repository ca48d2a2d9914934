"""Settings: the one place hfvet reads its environment.

Everything else receives a ``Settings`` (or the values it holds); nothing else calls
``os.environ``. huggingface_hub's own variables keep their names (``HF_ENDPOINT``, ``HF_TOKEN``);
hfvet's are prefixed ``HFVET_``.

Secrets (tokens, the webhook secret, the database URL with its password) are ``SecretStr``: a
repr, a log line or an error that shows the settings shows ``**********``. Code that must send
one on calls ``reveal()`` at that spot and nowhere else.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, ByteSize, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# SettingsError lives below settings: `hfvet gate --server` and the CLI's error handling catch it without pydantic.
from app.setting_checks import ENV_PREFIX, SettingsError, http_url_problem, shown

__all__ = ["Settings", "SettingsError", "child_environment", "reveal"]


_PACKAGED_POLICIES = Path(__file__).resolve().parents[1] / "policies"
_DATABASE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")  # dialect[+driver]://...; SQLAlchemy parses the rest


class Settings(BaseSettings):
    """Validated when built: a bad value raises SettingsError naming its variable, so every command
    refuses to start (exit 2) instead of failing on first use (a traceback, exit 1, a 500 per vet)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    hf_endpoint: str | None = Field(
        None, validation_alias=AliasChoices("HF_ENDPOINT"), description="Hub URL (a mirror or the fixture hub)."
    )
    hf_token: SecretStr | None = Field(
        None, validation_alias=AliasChoices("HF_TOKEN"), description="Hub token for gated or private repos."
    )
    policies_dir: Path | None = Field(
        None, description="Where `--policy NAME` and `hfvet policy` look (default: ./policies, else the packaged copy)."
    )
    database_url: SecretStr | None = Field(
        None, description="SQLAlchemy URL of the verdict store (default: a SQLite file in the user's data folder)."
    )
    data_home: Path | None = Field(
        None, validation_alias=AliasChoices("XDG_DATA_HOME"), description="Base of the default SQLite path."
    )
    policy: Path = Field(Path("default"), description="The active trust policy (file or shipped name) for the gate.")
    read_auth: bool = Field(False, description="Require a reader token for the API's GET endpoints too.")
    job_workers: int = Field(2, ge=1, le=32, description="Vets the server runs at once.")
    job_isolation: Literal["process", "thread"] = Field(
        "process", description="Where the server's own queue runs a vet: a child process (the gate keeps the GIL "
        "and the cores first), or a thread of the server."
    )
    job_nice: int = Field(
        10, ge=0, le=19, description="Nice value added to vet processes and `hfvet worker`s: scans yield the CPU "
        "to the gate's answers."
    )
    server: str | None = Field(None, description="URL of an hfvet server the CLI asks instead of the local store.")
    token: SecretStr | None = Field(None, description="API token the CLI sends to --server as `Authorization: Bearer`.")
    webhook_secret: SecretStr | None = Field(None, description="Shared secret of the Hugging Face webhook.")
    session_secret: SecretStr | None = Field(
        None, description="Key that signs dashboard session cookies (default: a random one per server process)."
    )
    poll_seconds: float = Field(
        0, allow_inf_nan=False, ge=0,
        description="Seconds between re-checks of approved repos' branch heads by the server (0: off)."
    )
    rate_limit_burst: int = Field(
        60, ge=0, description="Mutating requests (POST...) a caller may send at once before 429 (0: no limit)."
    )
    rate_limit_per_second: float = Field(
        1.0, allow_inf_nan=False, ge=0,
        description="Mutating requests per second a caller's allowance refills by (0: no limit)."
    )
    max_body_bytes: int = Field(
        1024 * 1024, ge=1024, description="Largest request body the API reads; larger is refused with 413."
    )
    max_json_depth: int = Field(
        64, ge=1, le=500, description="Deepest nesting of a JSON request body; deeper is refused with 400 "
        "(Python's parser recurses per level)."
    )
    max_header_bytes: int = Field(
        64 * 1024, ge=4096, description="Request line and headers of one request, in bytes; more is refused "
        "with 431 and the connection closed."
    )
    max_headers: int = Field(100, ge=10, description="Headers of one request; more is refused with 431.")
    forwarded_allow_ips: str = Field(
        "127.0.0.1,::1", validation_alias=AliasChoices("HFVET_FORWARDED_ALLOW_IPS", "FORWARDED_ALLOW_IPS"),
        description="Peers whose X-Forwarded-For/-Proto `hfvet serve` believes: comma-separated addresses or "
        "networks, `*` any, empty none. The rate limit's client address and the session cookie's Secure flag "
        "come from them; the default trusts a proxy on the same host.",
    )
    hub_resolve_ttl: float = Field(
        60, ge=0, le=3600, description="Seconds the gate reuses where the hub said a referenced repo's branch or "
        "tag points (in the process, and for every replica through the store; 0: ask the hub every answer)."
    )
    hub_resolve_failure_ttl: float = Field(
        10, ge=0, le=3600, description="Seconds the gate remembers that the hub could not resolve a referenced "
        "branch or tag, so a failing hub is not asked again by every answer."
    )
    gate_hub_budget: int = Field(
        64, ge=1, le=100_000, description="Branches and tags of referenced repos one gate answer may resolve "
        "(a report naming more distinct references is refused unjudged); past it the commit is refused "
        "(gate-hub-budget), never resolved further."
    )
    shutdown_timeout: float = Field(
        10, gt=0, le=600, description="Seconds `hfvet serve` waits for requests in flight after SIGTERM before "
        "cancelling them (gate answers still resolving stop at once)."
    )
    queue: Literal["inprocess", "procrastinate"] = Field(
        "inprocess", description="Who runs vets: this server's threads, or `hfvet worker`s via procrastinate "
        "(PostgreSQL only; docs/deploy.md)."
    )
    revet_cron: str = Field(
        "*/15 * * * *", description="When `hfvet worker`s re-check approved repos' heads, policy and scanners (cron)."
    )
    worker_heartbeat_seconds: float = Field(
        10, allow_inf_nan=False, gt=0,
        description="Seconds between a worker's heartbeats; silent 3x as long, its jobs go to others."
    )
    scan_workers: int = Field(4, ge=1, le=64, description="Files scanned at once by `hfvet scan`.")
    hub_workers: int = Field(8, ge=1, le=64, description="Files read at once from a hub by `hfvet vet`.")
    vet_deadline: float = Field(
        900, gt=0, description="Seconds one vet may take, listing included, in the CLI (`--timeout` overrides), "
        "the server and the workers: past it, hub calls fail and files not yet scanned are `vet-timeout`."
    )
    hub_branch_moved: Literal["newest-approved", "refuse"] = Field(
        "newest-approved", description="The Hub endpoint (/hub), asked for a branch or tag whose head is not "
        "approved: serve the repo's newest approved commit, or refuse (docs/endpoint.md)."
    )
    hub_vet_unvetted: bool = Field(
        False, description="The Hub endpoint, asked for a repo or commit never vetted: queue a vet and answer "
        "503 with Retry-After (the client retries), instead of refusing."
    )
    hub_cache_dir: Path | None = Field(
        None, description="The Hub endpoint's blob cache: verified files by content hash, on local disk or a "
        "shared volume (unset: no cache, every file is streamed from the upstream hub)."
    )
    hub_cache_max_bytes: ByteSize = Field(
        ByteSize(100 * 1024**3), ge=1, description="The blob cache's size bound (bytes, or e.g. `500GB`); the "
        "least recently served blobs go first."
    )
    attestation_key: Path | None = Field(
        None, description="The ed25519 private key (PEM, PKCS8; `hfvet keys create`) that signs every stored "
        "verdict and review as a DSSE attestation (unset: nothing is signed; docs/provenance.md)."
    )
    attestation_key_expires: date | None = Field(
        None, description="The day (YYYY-MM-DD, 00:00 UTC) the attestation key stops signing; statements carry "
        "it, and `hfvet verify` refuses one signed on or after it."
    )
    # The values of app.core.scanners.base.PeersMode, spelled out: light commands
    # (gate, --help) read settings and should not load scanner modules.
    peers: Literal["always", "auto"] = Field(
        "auto", description="Corroborating engines (picklescan, modelscan): `auto` skips them on files hfvet's "
        "engine walked completely and found clean; `always` runs them on every file they handle."
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise settings_error(exc) from exc

    @field_validator("hf_endpoint", "server")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and (problem := http_url_problem(url)):
            raise ValueError(problem)
        return url

    @field_validator("server", mode="before")
    @classmethod
    def _no_server(cls, url: object) -> object:
        # An empty HFVET_SERVER means none, as for `gate --server` and `download --server` (click
        # ignores an empty variable). An empty HF_ENDPOINT has no such reading: huggingface_hub
        # would take "" as the hub, so it is refused.
        return None if url == "" else url

    @field_validator("database_url", mode="before")
    @classmethod
    def _database_url(cls, url: object) -> object:
        if isinstance(url, str) and not _DATABASE_URL.match(url):
            raise ValueError("not a database URL (dialect+driver://...)")
        return url

    @field_validator("policies_dir", mode="before")
    @classmethod
    def _policies_dir(cls, path: object) -> object:
        if isinstance(path, str | Path) and not (str(path) and Path(path).is_dir()):
            raise ValueError("not a directory")
        return path

    @field_validator("policy", mode="before")
    @classmethod
    def _policy(cls, path: object) -> object:
        if path == "":  # Path("") is ".", the working directory: never a policy
            raise ValueError("empty: a policy file or a shipped name (default, strict)")
        return path

    @field_validator("attestation_key", "attestation_key_expires", mode="before")
    @classmethod
    def _unset_when_empty(cls, value: object) -> object:
        return None if value == "" else value  # an empty HFVET_ATTESTATION_KEY signs nothing (Path("") is ".")

    @field_validator("data_home", mode="before")
    @classmethod
    def _data_home(cls, path: object) -> object:
        # The XDG spec: an empty or relative XDG_DATA_HOME is ignored, so the default applies.
        if isinstance(path, str | Path) and not (str(path) and Path(path).is_absolute()):
            return None
        return path

    def store_url(self) -> str:
        """$HFVET_DATABASE_URL, else sqlite at $XDG_DATA_HOME/hfvet/hfvet.db (~/.local/share by default)."""
        if url := reveal(self.database_url):
            return url
        base = self.data_home or Path.home() / ".local" / "share"
        return f"sqlite:///{base / 'hfvet' / 'hfvet.db'}"

    def policies_root(self) -> Path:
        """$HFVET_POLICIES_DIR, else `./policies` in a checkout, else the one next to the app package."""
        if self.policies_dir is not None:
            return self.policies_dir
        local = Path("policies")
        return local if local.is_dir() else _PACKAGED_POLICIES

    def resolve_policy(self, path: Path) -> Path:
        """A path, or the bare name of a shipped policy (`default`, `strict`)."""
        if path.exists() or path.suffix:
            return path
        return self.policies_root() / f"{path}.yaml"


_SECRETS = frozenset({"HF_TOKEN", "HFVET_DATABASE_URL", "HFVET_TOKEN", "HFVET_WEBHOOK_SECRET", "HFVET_SESSION_SECRET"})


def settings_error(exc: ValidationError) -> SettingsError:
    """One line per bad setting: its environment variable, what is wrong, and the value unless secret."""
    lines = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        name = field if field.isupper() else f"HFVET_{field.upper()}"  # an alias is the variable's own name
        reason = error["msg"].removeprefix("Value error, ")
        value = error["input"]
        quoted = "" if name in _SECRETS or not isinstance(value, str | int | float) else f": {shown(value)}"
        lines.append(f"{name}: {reason}{quoted}")
    return SettingsError(lines)


def reveal(secret: SecretStr | None) -> str | None:
    """A secret's text, for the one place that sends it on (a request header, a connection)."""
    return None if secret is None else secret.get_secret_value()


def child_environment(drop: tuple[str, ...] = (), **overrides: str) -> dict[str, str]:
    """The environment for a child process (the demo's `hfvet serve`): this one's without ``drop``,
    with ``overrides``."""
    return {k: v for k, v in os.environ.items() if k not in drop} | overrides
