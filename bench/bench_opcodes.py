"""Issue 13 item 2: opcode throughput of hfvet's own pickle engine vs ``pickletools.genops``.

    python bench/bench_opcodes.py [--reps 5] [--tensors 42000] [--zip-tensors 40000] [--out FILE]

Generates two benign pickles in memory, laid out the way ``torch.save`` (protocol 2) writes a
state dict: one ``torch._utils._rebuild_tensor_v2`` entry per tensor, every value memoized
(BINPUT / LONG_BINPUT), repeated globals and strings fetched back with BINGET, SETITEMS in
batches of 1,000. (a) is the bare pickle (~8.3 MB, ~1.35 M opcodes with the defaults); (b) is the
same layout as ``archive/data.pkl`` in a stored PyTorch zip with one storage member per tensor.

Per repetition, in alternating order: ``pickletools.genops`` over the bytes (only counting), the
engine's ``analyze_pickles`` over the same bytes, and for (b) the engine's whole container walk
of the zip (``ContainerWalker.scan``: directory, sniffing, data.pkl). Wall and CPU seconds
(``time.process_time``) per run; the table quotes medians and opcodes per wall/CPU second.
Nothing is ever unpickled; the pickles hold only names and integers.
"""

from __future__ import annotations

import io
import pickletools
import statistics
import struct
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchlib import emit, machine_info, make_parser, table

from app.core.findings import FindingSink
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import Format
from app.core.limits import Limits
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.walker import ContainerWalker

_BATCH = 1000  # pickle's _BATCHSIZE: SETITEMS every 1,000 dict items
_PROJECTIONS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")


class MemoWriter:
    """Protocol-2 opcodes with torch.save's memo use: every new value is memoized, repeats are GETs."""

    def __init__(self) -> None:
        self.out = bytearray(b"\x80\x02")
        self._memo: dict[object, int] = {}

    def _put(self) -> int:
        index = len(self._memo)
        self.out += b"q" + bytes([index]) if index < 256 else b"r" + struct.pack("<I", index)
        return index

    def _get(self, index: int) -> None:
        self.out += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)

    def memoized(self, key: object, write: Callable[[], None]) -> None:
        if key in self._memo:
            self._get(self._memo[key])
            return
        write()
        self._memo[key] = self._put()

    def fresh(self) -> None:
        self._memo[object()] = self._put()  # a value written once (a tuple, a call result)

    def global_(self, module: str, name: str) -> None:
        self.memoized(("g", module, name), lambda: self.out.extend(f"c{module}\n{name}\n".encode()))

    def string(self, text: str) -> None:
        data = text.encode()
        self.memoized(("s", text), lambda: self.out.extend(b"X" + struct.pack("<I", len(data)) + data))

    def integer(self, value: int) -> None:
        if value < 256:
            self.out += b"K" + bytes([value])
        elif value < 65536:
            self.out += b"M" + struct.pack("<H", value)
        else:
            self.out += b"J" + struct.pack("<i", value)


def _tensor(w: MemoWriter, key: str, shape: tuple[int, int]) -> None:
    # _rebuild_tensor_v2((storage persistent id), 0, size, stride, False, OrderedDict())
    w.global_("torch._utils", "_rebuild_tensor_v2")
    w.out += b"(("  # the call's arguments, then the persistent id tuple
    w.string("storage")
    w.global_("torch", "BFloat16Storage")
    w.string(key)
    w.string("cpu")
    w.integer(shape[0] * shape[1])
    w.out += b"t"
    w.fresh()
    w.out += b"QK\x00"  # BINPERSID, offset 0
    w.integer(shape[0])
    w.integer(shape[1])
    w.out += b"\x86"  # TUPLE2
    w.fresh()
    w.integer(shape[1])
    w.integer(1)
    w.out += b"\x86"
    w.fresh()
    w.out += b"\x89"  # NEWFALSE
    w.global_("collections", "OrderedDict")
    w.out += b")R"
    w.fresh()
    w.out += b"t"
    w.fresh()
    w.out += b"R"
    w.fresh()


def state_dict(tensors: int, tiny: bool = False) -> bytes:
    """A torch.save-style state dict pickle of ``tensors`` small BF16 matrices (``tiny``: 2 x 2 each)."""
    w = MemoWriter()
    w.global_("collections", "OrderedDict")
    w.out += b")R"
    w.fresh()
    for start in range(0, tensors, _BATCH):
        w.out += b"("
        for i in range(start, min(start + _BATCH, tensors)):
            layer, proj = divmod(i, len(_PROJECTIONS))
            w.string(f"model.layers.{layer}.{_PROJECTIONS[proj]}.weight")
            _tensor(w, str(i), (2, 2) if tiny else (64 + i % 7, 128))
        w.out += b"u"
    w.out += b"."
    return bytes(w.out)


def torch_zip(tensors: int) -> tuple[bytes, bytes]:
    """(the zip, its data.pkl): a stored PyTorch archive with one tiny storage per tensor.

    Each tensor is 2 x 2 BF16, the 8 bytes its record holds: a storage declaring more than its
    record is a finding (torch-storage-size-mismatch), and the walk is meant to find nothing."""
    pkl = state_dict(tensors, tiny=True)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", pkl)
        zf.writestr("archive/byteorder", b"little")
        for i in range(tensors):
            zf.writestr(f"archive/data/{i}", b"\x00" * 8)
        zf.writestr("archive/version", b"3\n")
    return out.getvalue(), pkl


def genops_count(data: bytes) -> int:
    count = 0
    for _ in pickletools.genops(data):
        count += 1
    return count


def engine_walk(data: bytes) -> int:
    sink = FindingSink("bench.pkl", "hfvet-pickle")
    result = analyze_pickles(io.BytesIO(data), sink, Limits())
    if sink.findings:
        raise SystemExit(f"unexpected findings on the benign pickle: {sink.findings[:3]}")
    return result.opcodes


def zip_walk(data: bytes) -> int:
    sink = FindingSink("pytorch_model.bin", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(data), Format.PYTORCH_ZIP, "pytorch_model.bin")
    if sink.findings:
        raise SystemExit(f"unexpected findings on the benign zip: {sink.findings[:3]}")
    return 0


@dataclass
class Timings:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def timed(run: Callable[[], object], into: Timings) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    into.cpu.append(time.process_time() - cpu)
    into.wall.append(time.perf_counter() - wall)


def main() -> int:
    parser = make_parser(__doc__)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tensors", type=int, default=42_000, help="tensors in pickle (a)")
    parser.add_argument("--zip-tensors", type=int, default=40_000, help="tensors (and members) in zip (b)")
    parser.add_argument("--label", default="", help="shown in the heading (before/after)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    big = state_dict(args.tensors)
    zipped, data_pkl = torch_zip(args.zip_tensors)
    ops = {"a": genops_count(big), "b": genops_count(data_pkl)}
    cases: dict[str, tuple[str, int, Callable[[], object]]] = {
        "genops (a)": ("a", ops["a"], lambda: genops_count(big)),
        "engine (a)": ("a", ops["a"], lambda: engine_walk(big)),
        "genops (b) data.pkl": ("b", ops["b"], lambda: genops_count(data_pkl)),
        "engine (b) data.pkl": ("b", ops["b"], lambda: engine_walk(data_pkl)),
        "engine (b) whole zip walk": ("b", ops["b"], lambda: zip_walk(zipped)),
    }
    if engine_walk(big) != ops["a"] or engine_walk(data_pkl) != ops["b"]:
        raise SystemExit("the engine's opcode count differs from pickletools.genops")
    timings = {name: Timings() for name in cases}
    for rep in range(args.reps):
        order = list(cases) if rep % 2 == 0 else list(reversed(cases))  # alternate who runs first
        for name in order:
            timed(cases[name][2], timings[name])
    rows = []
    for name, (_, count, _) in cases.items():
        wall, cpu = statistics.median(timings[name].wall), statistics.median(timings[name].cpu)
        rows.append([name, f"{count:,}", f"{wall:.3f}", f"{cpu:.3f}", f"{count / wall / 1e6:.2f}",
                     f"{count / cpu / 1e6:.2f}"])
    sizes = f"(a) {len(big):,} bytes; (b) data.pkl {len(data_pkl):,} bytes in a {len(zipped):,}-byte zip"
    markdown = "\n".join([
        f"### Opcode throughput {args.label}".rstrip(), "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {sizes}; {args.reps} repetitions, alternating.",
        machine_info([]), "",
        table(["run", "opcodes", "wall s (median)", "CPU s (median)", "M op/s wall", "M op/s CPU"], rows), "",
    ])
    emit(markdown, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
