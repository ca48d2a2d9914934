"""Structure of the generated example repos and benchmark files.

Only static parsing here (struct, json, zipfile directories, pickletools.genops): nothing is
ever unpickled or loaded.
"""

from __future__ import annotations

import hashlib
import json
import pickletools
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from app.core.formats.detect import HEAD_BYTES, detect_format, refine_zip
from app.examples import EXAMPLES, build_example, build_examples, example
from app.examples.minimum import minimum_report
from app.examples.pickles import TorchTensor
from app.examples.safetensors_writer import DTYPE_BYTES
from app.examples.synthetic_deepseek import DeepseekRepoSpec, ensure_deepseek_hub_repo
from app.examples.synthetic_pickle import PickleRepoSpec, ensure_pickle_repo
from app.examples.torchfiles import write_torch_legacy, write_torch_zip

ROOT = Path(__file__).resolve().parents[2]
NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
QUANTFARM = "quantfarm/Llama-3.1-8B-Instruct-pt"
NVLDIA = "nvldia/DeepSeek-V4-Flash-NVFP4"
NEMOTRON = "nvidia/Nemotron-Mini-Custom-Code"
OFFICIAL_LINKS = {
    "https://github.com/NVIDIA/Model-Optimizer",
    "https://huggingface.co/deepseek-ai/DeepSeek-V4-Flash",
    "https://github.com/vllm-project/vllm",
    "https://github.com/sgl-project/sglang",
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("examples")
    build_examples(path)
    return path


def repo(root: Path, repo_id: str) -> Path:
    return root / repo_id


def read_safetensors_header(path: Path) -> tuple[int, dict[str, Any]]:
    with path.open("rb") as fh:
        (length,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(length))
    return length, header


def global_names(pickle_bytes: bytes) -> list[str]:
    return [str(arg) for op, arg, _ in pickletools.genops(pickle_bytes) if op.name == "GLOBAL"]


def content_digest(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


# --- the catalogue ---------------------------------------------------------------------------

def test_every_example_is_written_with_hub_metadata(root: Path) -> None:
    assert {ex.repo_id for ex in EXAMPLES} == {NVIDIA, CANADA, QUANTFARM, NVLDIA, NEMOTRON}
    for ex in EXAMPLES:
        meta = json.loads((ex.path(root) / ".hub.json").read_text())
        assert meta["author"] == ex.org
        assert re.fullmatch(r"[0-9a-f]{24}", meta["_id"])
        assert {"createdAt", "lastModified", "downloads", "likes", "tags", "cardData"} <= meta.keys()
        assert (ex.path(root) / "config.json").is_file()
        assert ex.description


def test_unknown_example_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="no example repo"):
        build_example(tmp_path, "nvidia/does-not-exist")


def test_snapshot_layout_leaves_out_hub_metadata(tmp_path: Path) -> None:
    ex = build_example(tmp_path, NVIDIA, hub_meta=False)
    assert not (ex.path(tmp_path) / ".hub.json").exists()
    assert (ex.path(tmp_path) / "README.md").is_file()


def test_builds_are_deterministic_and_replace_old_content(tmp_path: Path, root: Path) -> None:
    stale = tmp_path / CANADA / "stale.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text("left over")
    build_example(tmp_path, CANADA)
    assert not stale.exists()
    assert content_digest(tmp_path / CANADA) == content_digest(repo(root, CANADA))


def test_lookalike_copies_vendor_content_under_another_author(root: Path) -> None:
    vendor, copy = content_digest(repo(root, NVIDIA)), content_digest(repo(root, NVLDIA))
    vendor.pop(".hub.json")
    copy.pop(".hub.json")
    assert vendor == copy
    assert json.loads((repo(root, NVLDIA) / ".hub.json").read_text())["author"] == "nvldia"


def test_expectations_are_consistent() -> None:
    assert example(NVIDIA).expected_verdict.value == "approve"
    assert example(NEMOTRON).expected_verdict.value == "review"
    for repo_id in (CANADA, QUANTFARM, NVLDIA):
        assert example(repo_id).expected_verdict.value == "reject"
    assert "pickle-dangerous-global" in example(QUANTFARM).expected_rules
    assert {"executable-binary", "forked-code", "binary-download"} <= set(example(CANADA).expected_rules)


# --- safetensors -----------------------------------------------------------------------------

def all_shards(root: Path) -> list[Path]:
    return sorted(root.rglob("*.safetensors"))


def test_safetensors_headers_parse_and_offsets_tile_the_data(root: Path) -> None:
    shards = all_shards(root)
    assert len(shards) >= 3 * 2 + 2 + 1
    for shard in shards:
        length, header = read_safetensors_header(shard)
        assert length % 8 == 0
        header.pop("__metadata__")
        end = 0
        for info in header.values():
            start, stop = info["data_offsets"]
            assert start == end
            count = 1
            for dim in info["shape"]:
                count *= dim
            assert stop - start == DTYPE_BYTES[str(info["dtype"])] * count
            end = stop
        assert shard.stat().st_size == 8 + length + end
        assert detect_format(shard.read_bytes()[:HEAD_BYTES], shard.stat().st_size) == "safetensors"


def test_index_weight_map_points_at_real_shards(root: Path) -> None:
    indexed = [ex for ex in EXAMPLES if ex.repo_id != QUANTFARM]
    for ex in indexed:
        index = json.loads((ex.path(root) / "model.safetensors.index.json").read_text())
        weight_map: dict[str, str] = index["weight_map"]
        shards = {name: read_safetensors_header(ex.path(root) / name)[1] for name in set(weight_map.values())}
        on_disk = {p.name for p in ex.path(root).glob("*.safetensors")}
        assert set(shards) == on_disk
        listed = {(t, shard) for shard, header in shards.items() for t in header if t != "__metadata__"}
        assert listed == set(weight_map.items())
        shard_paths = ex.path(root).glob("*.safetensors")
        data = [p.stat().st_size - 8 - read_safetensors_header(p)[0] for p in shard_paths]
        assert index["metadata"]["total_size"] == sum(data)


def test_vendor_repo_is_nvfp4(root: Path) -> None:
    path = repo(root, NVIDIA)
    dtypes = {info["dtype"] for shard in path.glob("*.safetensors")
              for name, info in read_safetensors_header(shard)[1].items() if name != "__metadata__"}
    assert {"U8", "F8_E4M3", "BF16", "F32"} <= dtypes
    assert len(list(path.glob("model-0000?-of-00003.safetensors"))) == 3
    config = json.loads((path / "config.json").read_text())
    assert "auto_map" not in config
    assert config["quantization_config"]["quant_algo"] == "NVFP4"
    assert json.loads((path / "hf_quant_config.json").read_text())["producer"]["name"] == "modelopt"
    template = json.loads((path / "tokenizer_config.json").read_text())["chat_template"]
    assert "{% for message in messages %}" in template


def test_vendor_card_links_only_to_official_code(root: Path) -> None:
    card = (repo(root, NVIDIA) / "README.md").read_text()
    assert card.startswith("---\n") and "base_model: deepseek-ai/DeepSeek-V4-Flash" in card
    assert set(re.findall(r"https?://[^\s)\"'>]+", card)) == OFFICIAL_LINKS
    assert "vllm serve nvidia/DeepSeek-V4-Flash-NVFP4 --tensor-parallel-size 8" in card


# --- the third-party quant -------------------------------------------------------------------

def test_third_party_quant_ships_remote_code_binaries_and_forks(root: Path) -> None:
    path = repo(root, CANADA)
    auto_map = json.loads((path / "config.json").read_text())["auto_map"]
    assert auto_map["AutoModelForCausalLM"] == "modeling_deepseek.DeepseekV4ForCausalLM"
    for ref in auto_map.values():
        assert (path / f"{ref.split('.')[0]}.py").is_file()
    modeling = (path / "modeling_deepseek.py").read_text()
    for capability in ("import subprocess", 'ctypes.CDLL("./libfp8_moe.so")', "urllib.request.urlretrieve"):
        assert capability in modeling
    card = (path / "README.md").read_text()
    assert "pip install git+https://github.com/canada-quant-dev/vllm.git@w4a16-fp8-mtp" in card
    assert "releases/download/v0.3/fp8_moe-0.3-cp311-cp311-linux_x86_64.whl" in card
    assert "wget https://github.com/canada-quant-dev/fp8-kernels/releases/download/v0.3/libfp8_moe.so" in card
    assert "canada-quant-dev/sglang" in card
    install = (path / "install.sh").read_text()
    assert "wget" in install and "chmod +x" in install and "pip install" in install


def test_shared_object_is_a_valid_x86_64_elf_dyn(root: Path) -> None:
    data = (repo(root, CANADA) / "libfp8_moe.so").read_bytes()
    assert 200 < len(data) < 2048
    assert detect_format(data[:HEAD_BYTES], len(data)) == "elf"
    (ident, e_type, machine, version, _entry, phoff, shoff, _flags, ehsize, phentsize, phnum, shentsize,
     shnum, shstrndx) = struct.unpack_from("<16sHHIQQQIHHHHHH", data)
    assert ident[:4] == b"\x7fELF" and ident[4] == 2 and ident[5] == 1
    assert (e_type, machine, version, ehsize, phentsize, shentsize) == (3, 62, 1, 64, 56, 64)
    assert phoff + phnum * phentsize <= len(data) and shoff + shnum * shentsize == len(data)
    assert shstrndx < shnum
    segments = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
    types = {seg[0]: seg for seg in segments}
    assert set(types) == {1, 2}  # PT_LOAD, PT_DYNAMIC
    dyn_offset, dyn_size = types[2][2], types[2][5]
    assert types[1][2] == 0 and dyn_offset + dyn_size <= types[1][5]
    tags = dict(struct.unpack_from("<qQ", data, dyn_offset + i) for i in range(0, dyn_size, 16))
    soname_at = tags[5] + tags[14]  # DT_STRTAB + DT_SONAME
    assert data[soname_at:data.index(b"\x00", soname_at)] == b"libfp8_moe.so"


# --- the trojaned pickle checkpoint ----------------------------------------------------------

def test_pickle_checkpoint_is_a_pytorch_zip_with_a_system_call(root: Path) -> None:
    path = repo(root, QUANTFARM) / "pytorch_model.bin"
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert zf.testzip() is None  # every CRC matches
        data_pkl = zf.read("pytorch_model/data.pkl")
        assert zf.read("pytorch_model/version") == b"3\n"
    assert refine_zip(names) == "pytorch-zip"
    ops = list(pickletools.genops(data_pkl))
    globals_ = global_names(data_pkl)
    assert "posix system" in globals_
    assert "torch._utils _rebuild_tensor_v2" in globals_ and "collections OrderedDict" in globals_
    assert "echo pwned" in [arg for _op, arg, _pos in ops]
    # every persistent id names a storage member that exists
    keys = [arg for op, arg, _ in ops if op.name == "BINUNICODE" and f"pytorch_model/data/{arg}" in names]
    storages = [n for n in names if n.startswith("pytorch_model/data/")]
    assert sum(op.name == "BINPERSID" for op, _a, _p in ops) == len(storages) == len(set(keys))
    assert ops[-1][0].name == "STOP"


def test_pickle_payload_sits_between_benign_entries() -> None:
    from app.examples.pickles import state_dict_pickle

    tensors = [TorchTensor(f"t{i}", "F32", (2, 2), str(i)) for i in range(4)]
    clean = global_names(state_dict_pickle(tensors))
    hostile = global_names(state_dict_pickle(tensors, payload=("posix", "system", "echo pwned")))
    assert "posix system" not in clean
    assert hostile.index("posix system") > hostile.index("torch._utils _rebuild_tensor_v2")
    assert len(hostile) == len(clean) + 1


# --- the vendor remote-code repo -------------------------------------------------------------

def test_vendor_remote_code_is_plain_modules(root: Path) -> None:
    path = repo(root, NEMOTRON)
    auto_map = json.loads((path / "config.json").read_text())["auto_map"]
    for ref in auto_map.values():
        assert (path / f"{ref.split('.')[0]}.py").is_file()
    code = (path / "modeling_nemotron_mini.py").read_text()
    assert "class NemotronMiniForCausalLM" in code
    for risky in ("subprocess", "ctypes", "os.system", "urllib", "eval(", "exec("):
        assert risky not in code


# --- benchmark-scale (sparse) builders -------------------------------------------------------

def test_sparse_zip64_checkpoint_reads_like_a_torch_zip(tmp_path: Path) -> None:
    tensors = [TorchTensor(f"w{i}", "BF16", (2048, 4096), str(i)) for i in range(280)]  # 16 MiB each
    path = tmp_path / "big.bin"
    layout = write_torch_zip(path, tensors, sparse=True)
    assert layout.file_size > 2**32  # offsets past 4 GiB need ZIP64 records
    assert path.stat().st_blocks * 512 < 50 * 2**20  # sparse: the storages cost no disk
    with zipfile.ZipFile(path) as zf:
        last = zf.getinfo("archive/data/279")
        assert last.header_offset > 2**32 and last.file_size == 2048 * 4096 * 2
        assert global_names(zf.read("archive/data.pkl")).count("torch._utils _rebuild_tensor_v2") == 280


def test_member_over_4gib_gets_zip64_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.examples.zipwriter as zipwriter

    monkeypatch.setattr(zipwriter, "crc32_of_zeros", lambda _size: 0)  # skip hashing 4.5 GB of zeros
    path = tmp_path / "huge.bin"
    write_torch_zip(path, [TorchTensor("w", "U8", (3, 1_500_000_000), "0")], sparse=True)
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("archive/data/0").file_size == 4_500_000_000
        assert zf.read("archive/version") == b"3\n"


def test_legacy_checkpoint_has_five_leading_pickles_then_storages(tmp_path: Path) -> None:
    tensors = [TorchTensor(f"w{i}", "F32", (4, 8), str(i)) for i in range(3)]
    path = tmp_path / "legacy.pt"
    layout = write_torch_legacy(path, tensors)
    data = path.read_bytes()
    assert detect_format(data[:HEAD_BYTES], len(data)) == "torch-legacy"
    with path.open("rb") as fh:
        for _ in range(5):
            assert [op.name for op, _a, _p in pickletools.genops(fh)][-1] == "STOP"
        assert fh.tell() == layout.pickles_length
        assert struct.unpack("<Q", fh.read(8)) == (32,)
    assert len(data) == layout.pickles_length + 3 * (8 + 32 * 4)


def test_minimum_counts_headers_directories_and_pickles_only(tmp_path: Path) -> None:
    spec = PickleRepoSpec(zip_files=1, zip_bytes=200_000_000, zip_tensors=50, legacy_bytes=50_000_000,
                          legacy_tensors=20)
    assert ensure_pickle_repo(tmp_path / "repo", spec) is True
    assert ensure_pickle_repo(tmp_path / "repo", spec) is False  # stamped: not rebuilt
    report = minimum_report("bench/repo", tmp_path / "repo")
    zip_path = tmp_path / "repo" / "pytorch_model-00001-of-00001.bin"
    with zipfile.ZipFile(zip_path) as zf:
        starts = [*sorted(i.header_offset for i in zf.infolist()), zf.start_dir]
        spans = {i.filename: starts[starts.index(i.header_offset) + 1] - i.header_offset
                 for i in zf.infolist()}
        tail = zip_path.stat().st_size - zf.start_dir
    stem = zip_path.stem
    expected = tail + spans[f"{stem}/data.pkl"] + spans[f"{stem}/version"]
    assert report["files"][zip_path.name] == {"size": zip_path.stat().st_size, "minimum": expected,
                                              "kind": "pytorch-zip"}
    assert report["files"]["config.json"]["minimum"] == report["files"]["config.json"]["size"]
    assert report["minimum_bytes"] < report["repo_bytes"] / 100


def test_generators_never_replace_a_directory_they_did_not_make(tmp_path: Path) -> None:
    precious = tmp_path / "snapshot" / "model.safetensors"
    precious.parent.mkdir()
    precious.write_bytes(b"real weights")
    with pytest.raises(FileExistsError, match="not generated here"):
        ensure_pickle_repo(precious.parent, PickleRepoSpec(zip_files=0, legacy_files=0))
    assert precious.read_bytes() == b"real weights"


def test_deepseek_shaped_repo_keeps_counts_when_scaled(tmp_path: Path) -> None:
    small = dict(shards=3, tensors_per_shard=400, zip_bytes=20_000_000, legacy_bytes=10_000_000,
                 zip_tensors=30, legacy_tensors=10, vocab=500)
    sizes, counts = [], []
    for scale in (0.02, 0.01):
        spec = DeepseekRepoSpec(scale=scale, **small)
        path, built = ensure_deepseek_hub_repo(tmp_path / str(scale), "bench/ds", spec)
        assert built
        shards = sorted(path.glob("model-*-of-00003.safetensors"))
        headers = [read_safetensors_header(s)[1] for s in shards]
        counts.append([len(h) - 1 for h in headers])
        sizes.append(sum(s.stat().st_size for s in shards))
        names = [n for h in headers for n in h]
        expert_scale = re.compile(r"model\.layers\.\d+\.mlp\.experts\.\d+\.gate_proj\.weight_scale_2")
        assert any(expert_scale.fullmatch(n) for n in names)
        meta = json.loads((path / ".hub.json").read_text())
        assert set(meta["sha256"]) == {s.name for s in shards} | {
            "original/pytorch_model-00001-of-00002.bin", "original/pytorch_model-00002-of-00002.bin",
            "original/legacy_checkpoint-1.pt"}
        assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in meta["sha256"].values())
    assert counts[0] == counts[1] and min(counts[0]) >= 400
    assert sizes[1] < sizes[0]


def test_generator_cli_writes_minimum_next_to_the_repo(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "bench" / "gen_deepseek_repo.py"), str(tmp_path), "--repo", "bench/ds",
           "--scale", "0.001", "--shards", "2", "--tensors-per-shard", "100", "--zip-gb", "0.01",
           "--zip-tensors", "5", "--legacy-gb", "0.01", "--legacy-tensors", "5", "--vocab", "100"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    printed = json.loads(out.stdout)
    saved = json.loads((tmp_path / "bench" / "ds.minimum.json").read_text())
    assert printed["minimum_bytes"] == saved["minimum_bytes"] > 0
    assert not (tmp_path / "bench" / "ds" / "ds.minimum.json").exists()
    assert ".hub.json" not in saved["files"]
