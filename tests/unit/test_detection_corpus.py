"""The detection corpus registry is well formed, and the side-by-side table renders and splices."""

from __future__ import annotations

import pickletools
from io import BytesIO

import pytest

from bench import detection_table as table
from tests.corpus import benign_shapes, torch_writer
from tests.corpus.registry import Case, all_cases, register

CASES = all_cases()


def test_every_case_is_well_formed() -> None:
    assert len({case.key for case in CASES}) == len(CASES)
    for case in CASES:
        assert case.kind in ("hostile", "benign"), case.key
        if case.kind == "benign":
            assert case.vendor in ("approve", "review"), case.key
            assert (case.reason is not None) == (case.vendor == "review"), case.key  # a review says why
        else:
            assert case.vendor is None and case.reason is None, case.key


@pytest.mark.parametrize("case", CASES, ids=[case.key for case in CASES])
def test_every_case_builds_a_repo(case: Case) -> None:
    files = case.files()
    assert files and all(isinstance(data, bytes) and data for data in files.values())
    assert all(not path.startswith("/") and ".." not in path.split("/") for path in files)


def test_a_case_registers_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register(CASES[0])


def test_the_legacy_checkpoint_is_five_pickles_then_raw_storages() -> None:
    # Parsed with pickletools (never unpickled): magic, protocol, sys_info, the state dict, the keys.
    data = torch_writer.save_legacy(benign_shapes._bert_state_dict(24))
    stream = BytesIO(data)
    ends = []
    for _ in range(5):
        ends.append(max(pos for _, _, pos in pickletools.genops(stream)) + 1)
        stream.seek(ends[-1])
    persistent = sum(op.name == "BINPERSID" for op, _, _ in pickletools.genops(BytesIO(data[ends[2]:ends[3]])))
    assert persistent == 16 * 24 + 7
    raw = sum(len(t.raw()) for t in benign_shapes._bert_state_dict(24).values())
    assert len(data) - ends[4] == persistent * 8 + raw  # an 8-byte count before each storage


def _fake() -> list[table.CaseResult]:
    hostile = {tool: table.Outcome("caught", "3 dangerous") for tool in table.TOOLS}
    hostile["modelscan"] = table.Outcome("missed")
    benign = {tool: table.Outcome("clean") for tool in table.TOOLS}
    benign["picklescan"] = table.Outcome("false alarm", "1 dangerous")
    return [table.CaseResult("fam-b", "text|pipe", "benign", benign),
            table.CaseResult("fam-a", "p2", "hostile", hostile)]


def test_the_table_has_a_summary_and_one_table_per_family_hostile_first() -> None:
    out = table.render(_fake())
    assert out.index("### fam-a (hostile, 1 cases)") < out.index("### fam-b (benign, 1 cases)")
    assert "| fam-a | hostile | 1 | 1 caught | 1 caught | 1 caught | 0 caught, 1 missed |" in out
    assert "| p2 | caught (3 dangerous) | caught (3 dangerous) | caught (3 dangerous) | **missed** |" in out
    assert "| text\\|pipe | clean | clean | **false alarm** (1 dangerous) | clean |" in out
    assert "| **total** | 1 clean | 1 clean | 0 clean, 1 false alarm | 1 clean |" in out


def test_splice_replaces_only_the_generated_section() -> None:
    doc = f"intro\n{table.BEGIN}\nold\n{table.END}\noutro\n"
    assert table.splice(doc, "new") == f"intro\n{table.BEGIN}\n\nnew\n\n{table.END}\noutro\n"


def test_the_detection_doc_has_the_generated_section() -> None:
    doc = (table.ROOT / "docs" / "detection.md").read_text()
    assert 0 <= doc.index(table.BEGIN) < doc.index(table.END)
    assert "### Summary" in doc[doc.index(table.BEGIN) : doc.index(table.END)]
