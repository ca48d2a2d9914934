"""The header and JSON attacks of issue 25 against a live `hfvet serve`, with the edge limits on and off.

Each round starts two servers in the same run: one with the shipped limits, one with the header
limits raised past the attack (what the server did before `app/api/header_limits.py`). The attack:
``--clients`` connections at once, each sending one header of ``--header-mib`` MiB, then a webhook
nested 10,000 levels deep. Measured per server: the peak RSS (VmHWM) before and after, what each
attacker got back, and whether `/healthz` still answers. Bytes, not timings: RSS does not drift with
the machine's load the way latency does.

    python bench/bench_edge_attacks.py --rounds 3 --out /tmp/edge.md
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.benchlib import emit, human_bytes, machine_info, make_parser, median, ratio, table

UNLIMITED = {"HFVET_MAX_HEADER_BYTES": str(2**40), "HFVET_MAX_HEADERS": str(2**20)}
WEBHOOK_SECRET = "bench-secret"  # noqa: S105 - a loopback server of this run only


@dataclass(frozen=True)
class Outcome:
    mode: str
    hwm_before: int
    hwm_after: int
    answers: tuple[str, ...]  # the status line each attacker read (or the error it met)
    nested_answer: str
    healthy_after: bool


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--header-mib", type=int, default=60)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    outcomes = [attack(mode, args.clients, args.header_mib) for _ in range(args.rounds)
                for mode in ("limits on (shipped)", "limits off (before)")]
    emit(render(outcomes), args.out)


def attack(mode: str, clients: int, header_mib: int) -> Outcome:
    from app.cli.child_server import child_server

    extra = UNLIMITED if "off" in mode else {}
    with tempfile.TemporaryDirectory(prefix="hfvet-edge-") as tmp:
        env = {**os.environ, "HFVET_DATABASE_URL": f"sqlite:///{tmp}/store.db",
               "HFVET_WEBHOOK_SECRET": WEBHOOK_SECRET, **extra}
        with child_server(env, Path(tmp) / "serve.log") as url:
            pid = _listener_pid(url)
            before = _hwm(pid)
            answers = _flood(url, clients, header_mib * 1024 * 1024)
            nested = _nested_webhook(url)
            return Outcome(mode, before, _hwm(pid), tuple(answers), nested, _healthy(url))


def _flood(url: str, clients: int, size: int) -> list[str]:
    answers = [""] * clients

    def one(i: int) -> None:
        answers[i] = _send_big_header(url, size)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def _send_big_header(url: str, size: int) -> str:
    """One request whose single header is ``size`` bytes, sent in 1 MiB pieces; the status line read back."""
    host, port = _address(url)
    piece = b"a" * (1024 * 1024)
    try:
        with socket.create_connection((host, port), timeout=120) as conn:
            with suppress(BrokenPipeError, ConnectionResetError):
                conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
                for _ in range(size // len(piece)):
                    conn.sendall(piece)
                conn.sendall(b"\r\n\r\n")
            return conn.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace") or "closed"
    except OSError as exc:
        return type(exc).__name__


def _nested_webhook(url: str) -> str:
    body = b"[" * 10_000 + b"]" * 10_000
    request = urllib.request.Request(f"{url}/webhooks/huggingface", data=body, method="POST",  # noqa: S310
                                     headers={"X-Webhook-Secret": WEBHOOK_SECRET,
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback only
            return str(response.status)
    except urllib.error.HTTPError as exc:
        return str(exc.code)
    except OSError as exc:
        return type(exc).__name__


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=10) as response:  # noqa: S310 - loopback only
            return bool(response.status == 200)
    except OSError:
        return False


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def _listener_pid(url: str) -> int:
    """The pid of the process serving ``url``'s port (`hfvet serve` runs as `python -m app serve --port N`)."""
    port = str(_address(url)[1])
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"serve" in argv and b"--port" in argv and argv[argv.index(b"--port") + 1] == port.encode():
                return int(entry.name)
    raise SystemExit(f"no process found serving {url}")


def _hwm(pid: int) -> int:
    """Peak resident memory (VmHWM) of ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise SystemExit(f"no VmHWM for pid {pid}")


def render(outcomes: list[Outcome]) -> str:
    modes = list(dict.fromkeys(o.mode for o in outcomes))
    rows, growth = [], {}
    for mode in modes:
        mine = [o for o in outcomes if o.mode == mode]
        growth[mode] = median([o.hwm_after - o.hwm_before for o in mine])
        statuses = sorted({a for o in mine for a in o.answers})
        rows.append([mode, str(len(mine)), human_bytes(median([o.hwm_before for o in mine])),
                     human_bytes(median([o.hwm_after for o in mine])), human_bytes(growth[mode]),
                     "; ".join(statuses), ", ".join(sorted({o.nested_answer for o in mine})),
                     f"{sum(o.healthy_after for o in mine)}/{len(mine)}"])
    on, off = growth[modes[0]], growth[modes[1]]
    return "\n".join([
        machine_info(["uvicorn", "httptools"]), "",
        table(["server", "rounds", "peak RSS before (median)", "peak RSS after", "growth", "attackers read",
               "nested webhook", "/healthz after"], rows), "",
        f"Peak-memory growth with the shipped limits: {human_bytes(on)}; without them {human_bytes(off)} "
        f"({ratio(off, on)} as much).",
    ])


if __name__ == "__main__":
    main()
