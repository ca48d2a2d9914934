"""Name native executables from their headers: ELF, PE/COFF, Mach-O (thin and fat), ``ar``.

Only fixed-size header fields are decoded; nothing here follows section tables.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

Reader = Callable[[int, int], bytes]  # (offset, length) -> bytes, short at end of data

MAX_PE_OFFSET = 1 << 20  # e_lfanew beyond this is not a PE header a loader would follow
MAX_FAT_ARCHES = 30  # Java class files share 0xCAFEBABE; their "count" is a version >= 45

_ELF_MACHINES = {
    2: "sparc", 3: "x86", 8: "mips", 20: "powerpc", 21: "powerpc64", 22: "s390x", 40: "arm",
    43: "sparc64", 50: "ia64", 62: "x86-64", 183: "aarch64", 190: "cuda", 224: "amdgpu",
    243: "riscv", 247: "bpf", 258: "loongarch",
}
_ELF_TYPES = {1: "relocatable object", 2: "executable", 3: "shared object", 4: "core dump"}
_PE_MACHINES = {
    0x14C: "x86", 0x8664: "x86-64", 0xAA64: "arm64", 0x1C0: "arm", 0x1C4: "armv7-thumb",
    0x200: "ia64", 0xEBC: "efi-bytecode", 0x5064: "riscv64", 0xA641: "arm64ec",
}
_PE_DLL = 0x2000
_MACHO_CPUS = {
    7: "x86", 0x01000007: "x86_64", 12: "arm", 0x0100000C: "arm64", 0x0200000C: "arm64_32",
    18: "ppc", 0x01000012: "ppc64",
}
_MACHO_TYPES = {
    1: "object", 2: "executable", 4: "core", 5: "preload", 6: "dylib", 7: "dylinker",
    8: "bundle", 9: "dylib stub", 10: "dSYM", 11: "kext bundle",
}
_MACHO_THIN = {
    b"\xfe\xed\xfa\xce": ">", b"\xfe\xed\xfa\xcf": ">", b"\xce\xfa\xed\xfe": "<", b"\xcf\xfa\xed\xfe": "<",
}
_MACHO_FAT = {b"\xca\xfe\xba\xbe": (">", 20), b"\xca\xfe\xba\xbf": (">", 32), b"\xbe\xba\xfe\xca": ("<", 20)}
AR_MAGIC = b"!<arch>\n"


@dataclass(frozen=True)
class ExecInfo:
    """What kind of native code a header announces, e.g. ``ELF 64-bit shared object``, ``x86-64``."""

    kind: str
    arch: str

    def describe(self) -> str:
        return f"{self.kind} ({self.arch})"


def identify(read: Reader) -> ExecInfo | None:
    """The executable a byte stream starts with, or None when it is not one we know."""
    head = read(0, 64)
    if head.startswith(b"\x7fELF"):
        return _elf(head)
    if head.startswith(b"MZ"):
        return _pe(read, head)
    if head[:4] in _MACHO_THIN:
        return _macho(head)
    if head[:4] in _MACHO_FAT:
        return _fat_macho(read, head)
    if head.startswith(AR_MAGIC):
        return ExecInfo("ar static archive", "object files")
    return None


def _elf(head: bytes) -> ExecInfo | None:
    if len(head) < 20:
        return None
    bits = {1: "32-bit", 2: "64-bit"}.get(head[4])
    order = {1: "<", 2: ">"}.get(head[5])
    if bits is None or order is None:
        return None
    e_type, e_machine = struct.unpack_from(order + "HH", head, 16)
    endian = "LSB" if order == "<" else "MSB"
    kind = f"ELF {bits} {endian} {_ELF_TYPES.get(e_type, f'type {e_type:#x}')}"
    return ExecInfo(kind, _ELF_MACHINES.get(e_machine, f"machine {e_machine}"))


def _pe(read: Reader, head: bytes) -> ExecInfo | None:
    if len(head) < 64:
        return None
    (lfanew,) = struct.unpack_from("<I", head, 60)
    if lfanew >= MAX_PE_OFFSET:
        return None
    coff = read(lfanew, 24)
    if len(coff) < 24 or coff[:4] != b"PE\x00\x00":
        return None
    machine, _sections, _stamp, _symtab, _nsyms, _opt_size, flags = struct.unpack_from("<HHIIIHH", coff, 4)
    kind = "PE DLL" if flags & _PE_DLL else "PE executable"
    return ExecInfo(kind, _PE_MACHINES.get(machine, f"machine {machine:#06x}"))


def _macho(head: bytes) -> ExecInfo | None:
    if len(head) < 16:
        return None
    order = _MACHO_THIN[head[:4]]
    cputype, _subtype, filetype = struct.unpack_from(order + "III", head, 4)
    bits = "64-bit" if head[:4] in (b"\xfe\xed\xfa\xcf", b"\xcf\xfa\xed\xfe") else "32-bit"
    kind = f"Mach-O {bits} {_MACHO_TYPES.get(filetype, f'type {filetype}')}"
    return ExecInfo(kind, _macho_cpu(cputype))


def _fat_macho(read: Reader, head: bytes) -> ExecInfo | None:
    order, entry_size = _MACHO_FAT[head[:4]]
    (count,) = struct.unpack_from(order + "I", head, 4)
    if count == 0 or count > MAX_FAT_ARCHES:
        return ExecInfo("Java class file or fat Mach-O with a bad arch count", f"{count} entries")
    table = read(8, count * entry_size)
    arches = [
        _macho_cpu(struct.unpack_from(order + "I", table, i * entry_size)[0])
        for i in range(len(table) // entry_size)
    ]
    return ExecInfo("Mach-O universal binary", ", ".join(arches) or "no arch entries")


def _macho_cpu(cputype: int) -> str:
    return _MACHO_CPUS.get(cputype, f"cpu {cputype:#x}")


def ar_members(read: Reader, size: int, max_members: int) -> list[tuple[str, int, int]]:
    """(name, data offset, data size) of the members of a ``!<arch>`` archive, headers only."""
    members: list[tuple[str, int, int]] = []
    offset = len(AR_MAGIC)
    while offset + 60 <= size and len(members) < max_members:
        header = read(offset, 60)
        if len(header) < 60 or header[58:60] != b"`\n":
            raise ValueError(f"bad ar member header at offset {offset}")
        name = header[:16].decode("latin-1").rstrip()
        length = int(header[48:58].decode("ascii").strip() or "0")
        members.append((name, offset + 60, length))
        offset += 60 + length + (length & 1)  # members are 2-byte aligned
    return members
