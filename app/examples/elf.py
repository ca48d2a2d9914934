"""A minimal but well-formed x86-64 ELF shared object (ET_DYN), built with struct.

It has the pieces a loader and `readelf` expect: ELF header, PT_LOAD and PT_DYNAMIC program
headers, .hash/.dynsym/.dynstr/.text/.dynamic sections, a section header table, one exported
function whose body is a single `ret`. A few hundred bytes, no behaviour.
"""

from __future__ import annotations

import struct

ELF_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
PROGRAM_HEADER = struct.Struct("<IIQQQQQQ")
SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")
SYMBOL = struct.Struct("<IBBHQQ")

ET_DYN, EM_X86_64 = 3, 62
PT_LOAD, PT_DYNAMIC = 1, 2
SHT_PROGBITS, SHT_STRTAB, SHT_HASH, SHT_DYNAMIC, SHT_DYNSYM = 1, 3, 5, 6, 11
DT_NULL, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, DT_SONAME = 0, 4, 5, 6, 10, 11, 14
_PF_RWX, _PF_RW = 7, 6  # one RWX segment keeps the layout trivial; .dynamic is in it
_SHF_WA, _SHF_A, _SHF_AX = 3, 2, 6


def _align(data: bytearray, to: int) -> int:
    data += b"\x00" * (-len(data) % to)
    return len(data)


def shared_object(soname: str = "libfp8_moe.so", symbol: str = "fp8_moe_gemm") -> bytes:
    """Bytes of the shared object; addresses equal file offsets (base 0)."""
    dynstr = b"\x00" + soname.encode() + b"\x00" + symbol.encode() + b"\x00"
    soname_at, symbol_at = 1, 2 + len(soname)
    shstrtab = b"\x00.hash\x00.dynsym\x00.dynstr\x00.text\x00.dynamic\x00.shstrtab\x00"

    body = bytearray(b"\x00" * (ELF_HEADER.size + 2 * PROGRAM_HEADER.size))
    hash_at = _align(body, 8)
    body += struct.pack("<5I", 1, 2, 1, 0, 0)  # nbucket=1, nchain=2, bucket[0]=1, chains
    dynsym_at = _align(body, 8)
    body += SYMBOL.pack(0, 0, 0, 0, 0, 0)
    symbol_entry_at = len(body)
    body += SYMBOL.pack(symbol_at, 0x12, 0, 4, 0, 1)  # GLOBAL FUNC in section 4 (.text)
    dynstr_at = _align(body, 8)
    body += dynstr
    text_at = _align(body, 16)
    body += b"\xc3"  # ret
    struct.pack_into("<Q", body, symbol_entry_at + 8, text_at)  # st_value
    dynamic_at = _align(body, 8)
    tags = [(DT_HASH, hash_at), (DT_STRTAB, dynstr_at), (DT_SYMTAB, dynsym_at), (DT_STRSZ, len(dynstr)),
            (DT_SYMENT, SYMBOL.size), (DT_SONAME, soname_at), (DT_NULL, 0)]
    for tag, value in tags:
        body += struct.pack("<qQ", tag, value)
    dynamic_size = len(body) - dynamic_at
    shstr_at = len(body)
    body += shstrtab
    sh_at = _align(body, 8)

    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (1, SHT_HASH, _SHF_A, hash_at, hash_at, 20, 2, 0, 8, 4),
        (7, SHT_DYNSYM, _SHF_A, dynsym_at, dynsym_at, 2 * SYMBOL.size, 3, 1, 8, SYMBOL.size),
        (15, SHT_STRTAB, _SHF_A, dynstr_at, dynstr_at, len(dynstr), 0, 0, 1, 0),
        (23, SHT_PROGBITS, _SHF_AX, text_at, text_at, 1, 0, 0, 16, 0),
        (29, SHT_DYNAMIC, _SHF_WA, dynamic_at, dynamic_at, dynamic_size, 3, 0, 8, 16),
        (38, SHT_STRTAB, 0, 0, shstr_at, len(shstrtab), 0, 0, 1, 0),
    ]
    for s in sections:
        body += SECTION_HEADER.pack(*s)

    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\x00" * 8  # 64-bit, little endian, SysV
    ELF_HEADER.pack_into(
        body, 0, ident, ET_DYN, EM_X86_64, 1, 0, ELF_HEADER.size, sh_at, 0,
        ELF_HEADER.size, PROGRAM_HEADER.size, 2, SECTION_HEADER.size, len(sections), 6,
    )
    load_end = shstr_at
    PROGRAM_HEADER.pack_into(body, ELF_HEADER.size, PT_LOAD, _PF_RWX, 0, 0, 0, load_end, load_end, 0x1000)
    PROGRAM_HEADER.pack_into(body, ELF_HEADER.size + PROGRAM_HEADER.size, PT_DYNAMIC, _PF_RW,
                             dynamic_at, dynamic_at, dynamic_at, dynamic_size, dynamic_size, 8)
    return bytes(body)
