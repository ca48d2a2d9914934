"""The pure lineage comparison and the tensor layout digests."""

from __future__ import annotations

from app.core.provenance.lineage import CommitContent, ContentFile, check_base, claimed_base, mirror_of
from app.core.report_json import load
from app.core.tensor_layout import combine, layout_of_header

HEADER = {"__metadata__": {"format": "pt"},
          "a.weight": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, 32]},
          "b.weight": {"dtype": "BF16", "shape": [4], "data_offsets": [32, 40]}}


def _cast(header: dict[str, object], dtype: str) -> dict[str, object]:
    return {k: v if k == "__metadata__" else {**v, "dtype": dtype} for k, v in header.items()}  # type: ignore[dict-item]


def test_shards_add_up_to_the_layout_of_one_file_whatever_the_split() -> None:
    whole = layout_of_header(HEADER)
    first = layout_of_header({"a.weight": HEADER["a.weight"]})
    second = layout_of_header({"b.weight": HEADER["b.weight"]})
    assert combine([first, second]) == whole and whole.tensors == 2 and whole.dtypes == ("BF16",)


def test_a_cast_keeps_names_and_shapes_but_not_the_typed_digest() -> None:
    bf16, fp8 = layout_of_header(HEADER), layout_of_header(_cast(HEADER, "F8_E4M3"))
    assert (bf16.names, bf16.shapes) == (fp8.names, fp8.shapes) and bf16.typed != fp8.typed


def test_the_first_listed_base_model_is_the_claim() -> None:
    assert claimed_base({"cardData": {"base_model": ["a/b", "c/d"]}}) == "a/b"
    assert claimed_base({"cardData": {"base_model": "not-a-repo"}}) is None
    assert claimed_base({}) is None


def test_a_commit_sharing_too_few_bytes_is_no_mirror() -> None:
    config = ContentFile("c.json", 1, None, "b" * 40)
    vendor = CommitContent("nvidia/x", "a" * 40, (ContentFile("w.bin", 100, "1" * 64), config))
    copy = (ContentFile("w.bin", 100, "2" * 64), config)
    assert mirror_of(copy, [vendor], repo="third/copy") is None
    same = (ContentFile("w.bin", 100, "1" * 64), config, ContentFile("x", 2, "3" * 64))
    fact = mirror_of(same, [vendor], repo="third/copy")
    assert fact is not None and (fact.identical, fact.total, fact.added) == (2, 3, ["x"])


def test_a_repo_of_the_same_org_is_never_a_mirror_source_but_the_best_other_is() -> None:
    weights, config, card = ContentFile("w.bin", 100, "1" * 64), ContentFile("c.json", 1, "2" * 64), \
        ContentFile("README.md", 1, "3" * 64)
    full = CommitContent("nvidia/x", "a" * 40, (weights, config, card))
    lite = CommitContent("NVIDIA/x-lite", "b" * 40, (weights, config, ContentFile("README.md", 1, "4" * 64)))
    assert mirror_of(lite.files, [full], repo=lite.repo) is None
    assert mirror_of(full.files, [lite], repo=full.repo) is None
    fact = mirror_of(full.files, [lite, full], repo="third/copy")
    assert fact is not None and fact.repo == "nvidia/x" and fact.changed == []


def test_a_base_sharing_only_the_template_digest_is_partial() -> None:
    base = CommitContent("b/base", "a" * 40, (ContentFile("tokenizer_config.json", 1, None, "c" * 40),),
                         frozenset({"t"}))
    this = CommitContent("x/y", "b" * 40, (ContentFile("tokenizer_config.json", 1, None, "d" * 40),),
                         frozenset({"t"}))
    fact, new = check_base(this, "b/base", base)
    assert fact.status == "partial" and fact.shared == ["template"] and new == ["tokenizer_config.json"]


def test_an_unvetted_base_leaves_nothing_new() -> None:
    this = CommitContent("x/y", "b" * 40, (ContentFile("w.bin", 1, "1" * 64), ContentFile("m.py", 1, "2" * 64)))
    fact, new = check_base(this, "b/unvetted", None)
    assert fact.status == "not-vetted" and new == []


def test_a_report_from_before_lineage_loads_without_it() -> None:
    old = {"verdict": "approve", "reasons": [], "policy": {"name": "p"}, "findings": [],
           "files": [{"path": "m.safetensors", "size": 1, "format": "safetensors", "scanned": True}],
           "stats": {"files": 1, "repo_bytes": 1, "bytes_read": 1, "seconds": 0}}
    report = load(old)
    assert report.lineage is None and report.files[0].layout is None
