"""GGUF data offsets read as the loaders read them: vocab-only files, and alignment keys loaders disagree on.

llama.cpp: ggml/src/gguf.cpp, gguf_init_from_file_impl (alignment: one UINT32 power of two, else the
file is refused; the data section is padded to it only when n_tensors > 0). gguf (GGUFReader):
the same type and power-of-two checks, duplicate keys refused. candle: candle-core/src/quantized/
gguf_file.rs, Content::read (any integer type up to 32 bits, no power-of-two check, else 32).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gguf import GGUFValueType

from app.core.formats.blobs import BytesBlob
from app.core.formats.gguf_header import GGUFHeader, MalformedGGUF, read_gguf
from tests.corpus.wild_shapes import gguf_file, kv_scalar, kv_string, kv_tokens, tensor_info


def _header(data: bytes) -> GGUFHeader:
    return read_gguf(BytesBlob(data), 1 << 20)


def test_a_vocab_only_file_ending_after_its_metadata_is_well_formed() -> None:
    # The shape of llama.cpp's models/ggml-vocab-*.gguf: no tensors, no padding after the token list.
    data = gguf_file([kv_string("general.architecture", "llama"), kv_tokens(["<s>", "</s>", "hello"])], pad=False)
    assert len(data) % 32  # the padded data offset lies past the end of the file
    header = _header(data)
    assert (header.tensor_count, header.differentials) == (0, [])
    assert header.facts["data_offset"] == len(data)  # gguf.cpp: no padding without tensors


def test_tensor_data_past_the_end_is_still_malformed() -> None:
    data = gguf_file([kv_string("general.architecture", "llama")], [tensor_info("a", [1024])], data=64)
    with pytest.raises(MalformedGGUF, match="past the end of the file"):
        _header(data)


def test_a_uint32_power_of_two_alignment_is_read_alike_by_every_loader() -> None:
    data = gguf_file([kv_scalar("general.alignment", GGUFValueType.UINT32, 64)], [tensor_info("a", [16])],
                     data=64, alignment=64)
    header = _header(data)
    assert header.differentials == [] and header.facts["data_offset"] % 64 == 0


@pytest.mark.parametrize(("kvs", "why", "candle"), [
    # int32 64: llama.cpp/gguf refuse (not uint32); candle aligns the data to 64.
    ([kv_scalar("general.alignment", GGUFValueType.INT32, 64)], "not uint32", 64),
    # uint32 48: llama.cpp/gguf refuse (not a power of two); candle pads to 48.
    ([kv_scalar("general.alignment", GGUFValueType.UINT32, 48)], "not a power of two", 48),
    # Two keys: llama.cpp/gguf refuse the duplicate; candle's HashMap keeps the last one.
    ([kv_scalar("general.alignment", GGUFValueType.UINT32, 32), kv_scalar("general.alignment", GGUFValueType.UINT32,
                                                                         128)], "appears 2 times", 128),
    # uint64: refused by llama.cpp/gguf; candle ignores the type and uses 32.
    ([kv_scalar("general.alignment", GGUFValueType.UINT64, 64)], "not uint32", 32),
], ids=["int32", "not-power-of-two", "duplicate", "uint64"])
def test_an_alignment_the_loaders_read_differently_is_a_differential(kvs: list[bytes], why: str, candle: int) -> None:
    data = gguf_file(kvs, [tensor_info("a", [16])], data=256, alignment=candle)
    header = _header(data)
    [differential] = header.differentials
    assert why in differential and f"aligned to {candle}" in differential
    assert header.facts["data_offset"] % candle == 0


@pytest.mark.parametrize(("kv", "tensors"), [
    (kv_scalar("general.alignment", GGUFValueType.UINT32, 0), 1),  # candle divides by zero: nobody loads it
    (kv_scalar("general.alignment", GGUFValueType.INT32, 64), 0),  # no tensors, nothing mapped: llama.cpp refuses
], ids=["zero", "int32-without-tensors"])
def test_an_alignment_every_loader_refuses_stays_malformed(kv: bytes, tensors: int) -> None:
    infos = [tensor_info("a", [16])] * tensors
    with pytest.raises(MalformedGGUF, match=r"general\.alignment"):
        _header(gguf_file([kv], infos, data=64 * tensors))


def test_the_scanner_reports_the_differential_as_critical(tmp_path: Path) -> None:
    from app.core.findings import Severity
    from app.core.pipeline import VetOptions, vet
    from app.core.scanners.template_scanner import TemplateScanner
    from app.sources.local import LocalSource

    kv = kv_scalar("general.alignment", GGUFValueType.UINT32, 48)
    (tmp_path / "m.gguf").write_bytes(gguf_file([kv], [tensor_info("a", [16])], data=256, alignment=48))
    report = vet(LocalSource(tmp_path), [TemplateScanner()], options=VetOptions(workers=1))
    [finding] = [f for f in report.findings if f.rule == "parser-differential"]
    assert finding.severity is Severity.CRITICAL and "candle" in finding.message
