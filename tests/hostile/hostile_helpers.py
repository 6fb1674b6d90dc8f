"""Helpers of the hostile-input corpus: decompression bombs built cheaply (nothing is expanded to build them). The
CLI run in-process is ``cli_helpers.cli`` (tests/cli/cli_helpers.py), shared by the whole suite.

A deflate block that ends in a full flush is byte-aligned and depends on no earlier data, so one compressed
MiB of zeros repeated N times is a valid raw deflate stream of N MiB: a 3 GiB member costs 3 MB to write.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

MIB = 1 << 20


def zero_blocks(mib: int) -> tuple[bytes, int]:
    """(raw deflate stream, its decompressed size) for ``mib`` MiB of zero bytes."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(b"\0" * MIB) + c.flush(zlib.Z_FULL_FLUSH)
    return block * mib + c.flush(zlib.Z_FINISH), mib * MIB


def gzip_bomb(path: Path, mib: int) -> Path:
    """A gzip file of ``mib`` MiB of zeros (wrong CRC: a reader that gets to the end is already too late)."""
    stream, size = zero_blocks(mib)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    path.write_bytes(header + stream + struct.pack("<II", 0, size & 0xFFFFFFFF))
    return path


def zip_with_bomb(path: Path, members: dict[str, bytes], bomb: str, mib: int, *, claimed: int | None = None
                  ) -> Path:
    """A zip holding ``members`` (stored) and a deflated member ``bomb`` that expands to ``mib`` MiB of zeros;
    the archive's size fields say ``claimed`` bytes (default: the true size)."""
    stream, size = zero_blocks(mib)
    claimed = size if claimed is None else claimed
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(bomb, stream)  # stored as is, then relabelled as deflated below
    data = bytearray(path.read_bytes())
    name = bomb.encode()
    local = data.find(b"PK\x03\x04" + b"\0" * 0, 0)
    while True:  # the local header of the bomb
        n, = struct.unpack_from("<H", data, local + 26)
        if data[local + 30:local + 30 + n] == name:
            break
        local = data.find(b"PK\x03\x04", local + 4)
    struct.pack_into("<H", data, local + 8, zipfile.ZIP_DEFLATED)
    struct.pack_into("<I", data, local + 22, claimed)
    central = data.find(b"PK\x01\x02")
    while True:
        n, = struct.unpack_from("<H", data, central + 28)
        if data[central + 46:central + 46 + n] == name:
            break
        central = data.find(b"PK\x01\x02", central + 4)
    struct.pack_into("<H", data, central + 10, zipfile.ZIP_DEFLATED)
    struct.pack_into("<I", data, central + 24, claimed)
    path.write_bytes(bytes(data))
    return path
