"""When the corroborating peers run (docs/engines.md), and what each file's report says about it.

Samples are written here with inert payload strings; nothing is ever loaded.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from app.core import report_json
from app.core.findings import Severity
from app.core.formats import zip_reader
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.scanners.base import PeersMode
from app.core.scanners.modelscan_scanner import ModelscanScanner
from app.core.scanners.peers import opcode_guard
from app.core.scanners.peers.corroboration import SKIPPED_CLEAN
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.scanners.picklescan_scanner import PicklescanScanner
from app.examples.pickles import PickleWriter, TorchTensor, state_dict_pickle
from app.examples.torchfiles import write_torch_zip
from app.render.sarif import sarif_document
from app.render.text import TextRenderer
from app.services.vetting import scan_local
from app.settings import Settings, SettingsError
from app.sources.local import LocalSource

PEERS = ("picklescan", "modelscan")
TENSORS = [TorchTensor(f"layer.{i}.weight", "F32", (2, 2), str(i)) for i in range(3)]
PAYLOAD = ("os", "system", "echo pwned")


def _vet(folder: Path, peers: PeersMode = "auto", limits: Limits | None = None) -> Report:
    return vet(LocalSource(folder), all_scanners(), options=VetOptions(peers=peers, limits=limits, workers=1))


def _engines(report: Report, path: str) -> dict[str, str]:
    return next(f for f in report.files if f.path == path).engines


def _peer_findings(report: Report) -> list[str]:
    return [f.rule for f in report.findings if f.scanner in PEERS]


def _critical_from_peers(report: Report) -> set[str]:
    return {f.scanner for f in report.findings if f.scanner in PEERS and f.severity is Severity.CRITICAL}


def _write(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(data)
    return folder


def test_a_clean_complete_walk_skips_both_peers_and_says_why(tmp_path: Path) -> None:
    report = _vet(_write(tmp_path / "r", "model.pkl", state_dict_pickle(TENSORS)))
    assert _engines(report, "model.pkl") == {"picklescan": SKIPPED_CLEAN, "modelscan": SKIPPED_CLEAN}
    assert not _peer_findings(report)
    assert report.files[0].scanned and report.verdict.value == "approve"


def test_always_runs_the_peers_on_a_clean_file(tmp_path: Path) -> None:
    report = _vet(_write(tmp_path / "r", "model.pkl", state_dict_pickle(TENSORS)), peers="always")
    assert _engines(report, "model.pkl") == {p: "ran: HFVET_PEERS=always" for p in PEERS}


def test_a_clean_torch_zip_skips_the_peers(tmp_path: Path) -> None:
    write_torch_zip(tmp_path / "r" / "pytorch_model.bin", TENSORS)
    assert set(_engines(_vet(tmp_path / "r"), "pytorch_model.bin").values()) == {SKIPPED_CLEAN}


@pytest.mark.parametrize(
    ("label", "data", "reason"),
    [
        ("unknown import", PickleWriter().global_("mylib.layers", "Dense").op(b".").getvalue(),
         "hfvet's engine reported findings"),
        ("flagged call", state_dict_pickle(TENSORS, payload=PAYLOAD), "hfvet's engine reported findings"),
        ("truncated", state_dict_pickle(TENSORS)[:-7], "hfvet's engine reported findings"),
    ],
)
def test_peers_run_wherever_hfvet_said_anything(tmp_path: Path, label: str, data: bytes, reason: str) -> None:
    report = _vet(_write(tmp_path / "r", "model.pkl", data))
    assert _engines(report, "model.pkl") == {p: f"ran: {reason}" for p in PEERS}, label
    assert {f.scanner for f in report.findings} & set(PEERS) or label == "unknown import"


def test_the_flagged_call_is_corroborated_by_both_peers(tmp_path: Path) -> None:
    report = _vet(_write(tmp_path / "r", "model.pkl", state_dict_pickle(TENSORS, payload=PAYLOAD)))
    assert _critical_from_peers(report) == set(PEERS)


def test_formats_the_peers_read_their_own_way_always_run(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    np.savez(folder / "arrays.npz", a=np.zeros(3))
    engines = _engines(_vet(folder), "arrays.npz")
    assert engines and all(v.startswith("ran: ") and "always corroborated" in v for v in engines.values())


def test_a_scanner_without_the_peers_records_no_engines(tmp_path: Path) -> None:
    report = vet(LocalSource(_write(tmp_path / "r", "model.pkl", state_dict_pickle(TENSORS))), [PickleScanner()])
    assert report.files[0].engines == {}


def test_engines_round_trip_through_the_report_json(tmp_path: Path) -> None:
    report = _vet(_write(tmp_path / "r", "model.pkl", state_dict_pickle(TENSORS)))
    doc = report_json.dump(report)
    assert doc["files"][0]["engines"] == {"picklescan": SKIPPED_CLEAN, "modelscan": SKIPPED_CLEAN}
    assert report_json.load(doc).files == report.files
    del doc["files"][0]["engines"]  # a report written before the field existed still loads
    assert report_json.load(doc).files[0].engines == {}


def _count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(owner, name)

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls


def test_a_zip_directory_is_parsed_once_for_every_scanner_and_both_peers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_torch_zip(tmp_path / "r" / "pytorch_model.bin", TENSORS, payload=PAYLOAD)
    parses = _count_calls(monkeypatch, zip_reader, "_parse_directory")
    report = _vet(tmp_path / "r", peers="always")
    assert len(parses) == 1
    assert _critical_from_peers(report) == set(PEERS)


def test_the_opcode_guard_counts_a_stream_once_for_both_peers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = _count_calls(monkeypatch, opcode_guard, "count_pickle_ops")
    folder = _write(tmp_path / "r", "model.pkl", state_dict_pickle(TENSORS * 20))
    scanners: Sequence[object] = [PicklescanScanner(), ModelscanScanner()]
    report = vet(LocalSource(folder), scanners, options=VetOptions(limits=Limits(max_pickle_opcodes=200), workers=1))  # type: ignore[arg-type]
    assert len(counts) == 1
    assert {f.rule for f in report.findings} == {"limit-exceeded"}  # both peers refused, from the one count
    assert {f.scanner for f in report.findings} == set(PEERS)


def test_a_torch_zip_member_the_peers_unpickle_by_name_keeps_them_running(tmp_path: Path) -> None:
    path = tmp_path / "r" / "pytorch_model.bin"
    write_torch_zip(path, TENSORS)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("archive/extra.dat", b"plain bytes, no pickle")  # hfvet sniffs it; the peers unpickle it
    engines = _engines(_vet(tmp_path / "r"), "pytorch_model.bin")
    assert engines == {p: "ran: the peers unpickle members by name that hfvet's engine only sniffs" for p in PEERS}


def test_text_and_sarif_say_which_peers_ran(tmp_path: Path) -> None:
    folder = _write(tmp_path / "r", "clean.pkl", state_dict_pickle(TENSORS))
    _write(folder, "hostile.pkl", state_dict_pickle(TENSORS, payload=PAYLOAD))
    report = _vet(folder)
    text = TextRenderer().render(report)
    assert "picklescan ran on 1, skipped on 1 (clean walks)" in " ".join(text.split())
    engines = sarif_document(report)["runs"][0]["properties"]["engines"]
    assert engines["clean.pkl"]["modelscan"] == SKIPPED_CLEAN
    assert engines["hostile.pkl"]["modelscan"].startswith("ran: ")


def test_hfvet_peers_in_the_environment_reaches_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _write(tmp_path / "r", "model.pkl", state_dict_pickle(TENSORS))
    monkeypatch.setenv("HFVET_PEERS", "always")
    report = scan_local(folder, settings=Settings(), policy_path=Path("interim"))
    assert _engines(report, "model.pkl") == {p: "ran: HFVET_PEERS=always" for p in PEERS}
    monkeypatch.setenv("HFVET_PEERS", "sometimes")
    with pytest.raises(SettingsError, match=r"^HFVET_PEERS: "):  # named as the variable to fix
        Settings()


def test_a_member_zipfile_refuses_but_torch_reads_keeps_the_peers_running(tmp_path: Path) -> None:
    path = tmp_path / "r" / "pytorch_model.bin"
    data = state_dict_pickle(TENSORS)
    write_torch_zip(path, TENSORS)
    crc = zlib.crc32(data).to_bytes(4, "little")
    raw = path.read_bytes()
    assert raw.count(crc) == 2  # the local header and the central directory entry of data.pkl
    path.write_bytes(raw.replace(crc, (zlib.crc32(data) ^ 1).to_bytes(4, "little")))
    report = _vet(tmp_path / "r")
    reason = "ran: a member zipfile would refuse (CRC, flags, names) where torch reads it"
    assert _engines(report, "pytorch_model.bin") == {p: reason for p in PEERS}
    assert "scan-error" in {f.rule for f in report.findings if f.scanner == "modelscan"}
