"""Every reading a loader takes of a file is vetted, and a file valid in two formats is a finding.

The cases come from the loaders' own code (see tests/samples/readings.py for each builder's
reasoning): torch.load's zip / tar / pickle-from-offset-0 order, numpy.load's pickle fallback,
pickle.load at offset 0 and zipfile's end-record search.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from app.core.findings import Finding, Severity
from app.core.formats.detect import Format, detect_format
from app.core.pipeline import RULE_POLYGLOT, VetOptions, vet
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.scanners.safetensors_scanner import SafetensorsScanner
from app.sources.local import LocalSource
from tests.samples import benign
from tests.samples import readings as samples

DANGEROUS = "pickle-dangerous-global"


def vet_one(tmp_path: Path, name: str, data: bytes) -> list[Finding]:
    (tmp_path / name).write_bytes(data)
    report = vet(LocalSource(tmp_path), [PickleScanner(), SafetensorsScanner()], options=VetOptions(workers=1))
    return list(report.findings)


def rules(findings: list[Finding], at_least: Severity = Severity.HIGH) -> set[str]:
    return {f.rule for f in findings if f.severity.rank >= at_least.rank}


# -- a safetensors file read as a pickle by the loader its name reaches

@pytest.mark.parametrize("name", ["pytorch_model.bin", "model.pt", "ckpt.pth", "last.ckpt", "weights.npy",
                                  "arrays.npz", "model.pkl", "model.joblib"])
def test_safetensors_bytes_unpickled_by_the_loader_of_its_name(tmp_path: Path, name: str) -> None:
    found = vet_one(tmp_path, name, samples.safetensors_read_as_pickle())
    assert not [f for f in found if f.scanner == SafetensorsScanner.name and f.severity.rank >= Severity.MEDIUM.rank]
    dangerous = [f for f in found if f.rule == DANGEROUS]
    assert dangerous and all(f.message.startswith("read as pickle by ") for f in dangerous)
    assert RULE_POLYGLOT in rules(found)


def test_a_safetensors_pickle_polyglot_is_flagged_under_its_own_name(tmp_path: Path) -> None:
    # No loader unpickles a .safetensors by name, but the bytes are a whole pickle that imports
    # os.system: a rename away from running. Valid in two formats is itself high.
    found = vet_one(tmp_path, "model.safetensors", samples.safetensors_read_as_pickle())
    assert RULE_POLYGLOT in rules(found)
    assert DANGEROUS in rules(found)


def test_a_benign_safetensors_named_bin_stays_quiet(tmp_path: Path) -> None:
    # The same layout without a payload: the pickle reading builds a dict and imports nothing.
    found = vet_one(tmp_path, "pytorch_model.bin", samples.safetensors_read_as_pickle(payload=False))
    assert rules(found, Severity.MEDIUM) == set(), found


@pytest.mark.parametrize("low_byte", [0x4E, 0x80, 0x56, 0x7D, 0x28])
def test_safetensors_whose_length_bytes_are_opcodes_is_no_polyglot(tmp_path: Path, low_byte: int) -> None:
    # 0x4E 0x2E... would be "N." (None, STOP) if the second byte were '.'; 0x80 is PROTO: a pickle
    # that imports nothing runs nothing, so a header length is never a second format.
    for name in ("model.safetensors", "pytorch_model.bin"):
        found = vet_one(tmp_path, name, samples.safetensors_plain(low_byte))
        assert rules(found, Severity.MEDIUM) == set(), (name, found)
        (tmp_path / name).unlink()


def test_none_stop_header_length_is_no_polyglot(tmp_path: Path) -> None:
    data = samples.safetensors_plain(0x4E, length=0x2E4E)  # the first bytes are "N." (None, STOP), then NULs
    assert data[:3] == b"N.\x00"
    assert detect_format(data, len(data)) == Format.SAFETENSORS
    assert RULE_POLYGLOT not in rules(vet_one(tmp_path, "model.safetensors", data))


# -- tar: a header that is also a pickle; torch's legacy tar records

def test_a_tar_whose_first_name_is_a_pickle(tmp_path: Path) -> None:
    found = vet_one(tmp_path, "model.pkl", samples.tar_named_by_a_pickle())
    assert {DANGEROUS, RULE_POLYGLOT} <= rules(found)


@pytest.mark.parametrize("where", ["storage-first", "storage", "views", "tensor", "pickle"])
@pytest.mark.parametrize("v7", [False, True], ids=["ustar", "v7"])
def test_every_record_pickle_of_a_legacy_tar_is_vetted(tmp_path: Path, where: str, v7: bool) -> None:
    # legacy_load unpickles each storage's and tensor's arguments between raw bytes; a walk of
    # stacked pickles stops at the first raw bytes. A V7 header (no magic) is opened by tarfile too.
    found = vet_one(tmp_path, "pytorch_model.bin", samples.torch_legacy_tar(where, v7=v7))
    assert DANGEROUS in rules(found), where


@pytest.mark.parametrize("v7", [False, True], ids=["ustar", "v7"])
def test_a_benign_legacy_tar_is_quiet(tmp_path: Path, v7: bool) -> None:
    data = samples.torch_legacy_tar(None, v7=v7)
    assert detect_format(data, len(data)) == Format.TAR
    found = vet_one(tmp_path, "pytorch_model.bin", data)
    # torch.FloatTensor (the tensors' original type) is not on the allowlist: a medium unknown import.
    assert rules(found) == set(), found


# -- a pickle with a zip appended

def test_a_pickle_with_a_zip_appended_has_its_zip_reading_vetted(tmp_path: Path) -> None:
    found = vet_one(tmp_path, "pytorch_model.bin", samples.pickle_then_zip())
    assert {DANGEROUS, RULE_POLYGLOT} <= rules(found)
    zipped = [f for f in found if f.rule == DANGEROUS]
    assert zipped[0].member == "archive/data.pkl" and "read as zip by zipfile" in zipped[0].message


def test_a_benign_pickle_zip_polyglot_is_still_high(tmp_path: Path) -> None:
    found = vet_one(tmp_path, "data.pkl", samples.pickle_then_benign_zip())
    assert rules(found) == {RULE_POLYGLOT}


# -- what must stay single-format

@pytest.mark.parametrize("name, build", [
    ("pytorch_model.bin", lambda: benign.torch_zip()),
    ("pytorch_model.bin", benign.torch_legacy),
    ("training_args.bin", lambda: pickle.dumps({"lr": 1e-4, "output_dir": "out"}, protocol=4)),
    ("weights.npy", lambda: benign.npy(benign.np.arange(10, dtype="f4"))),
    ("arrays.npz", lambda: benign.npz(True)),
    ("model.safetensors", benign._safetensors),
])
def test_ordinary_checkpoints_have_one_reading(tmp_path: Path, name: str, build: object) -> None:
    found = vet_one(tmp_path, name, build())  # type: ignore[operator]
    assert RULE_POLYGLOT not in rules(found)
    assert not [f for f in found if f.message.startswith("read as ")]
    assert rules(found, Severity.MEDIUM) == set(), found


# -- a zip inside a tar: a member, or a second archive

def _tar(members: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_a_zip_stored_as_the_last_tar_member_is_no_polyglot(tmp_path: Path) -> None:
    # A .nemo is a tar whose last member is often a torch zip: zipfile finds that member's end
    # record in the tar's tail and opens exactly the member, which the tar walk vets already.
    inner = _zip({"archive/data.pkl": pickle.dumps({"w": [1.0, 2.0]}, protocol=2)})
    found = vet_one(tmp_path, "model.nemo", _tar({"model_config.yaml": b"a: 1\n", "model_weights.ckpt": inner}))
    assert RULE_POLYGLOT not in rules(found)


def test_a_zip_appended_after_a_tar_is_a_polyglot(tmp_path: Path) -> None:
    # tarfile stops at the end-of-archive blocks; zipfile reads the appended archive by its end
    # record. Two tools, two different sets of files: each is vetted and the file is itself high.
    tar = _tar({"config.yaml": b"a: 1\n"})
    found = vet_one(tmp_path, "model.tar", tar + _zip({"payload.pkl": samples_payload()}))
    assert RULE_POLYGLOT in rules(found)
    assert DANGEROUS in rules(found)


def samples_payload() -> bytes:
    from tests.samples import hostile

    return hostile.by_protocol(2)
