"""Reading a kernel cache export archive (``ascendemu cache import``) in bounded memory.

An archive comes from elsewhere, so it is read as hostile: each member's header is checked (a regular
file with a plain entry file name, within the careful reader's size limit for its kind, no more files
or bytes in all than the named limits below) before any of its data is read, and the data is then
copied in chunks to a private staging directory, never held in memory whole; the entries are then
read back from there one at a time by the one careful reader (``hal.binary``). A 7 MB gzip archive
of gigabytes of zeros is thus refused from its headers, at the cost of decompressing it once.

tarfile itself reads a header's extra records (pax headers, GNU long names, sparse maps) into memory
at sizes the archive declares, and keeps every header it has read. So the (decompressed) stream it
reads from is metered: at most MAX_HEADER_BYTES per member for its headers, at most its declared size
for its data; and the list of headers seen is emptied after each (only the current one matters).
"""
from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import re
import tarfile
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

from ascendemu.errors import InvalidParamError
from ascendemu.hal.binary import MAX_FILE_BYTES
from ascendemu.units import format_bytes

# A member of an export archive: a plain entry file name, so no directory part and no path traversal.
ARCHIVE_MEMBER = re.compile(r"[A-Za-z0-9_]+\.(o|json|info)")
# An archive with more files than this is no export of a kernel cache (a small CNN needs ~100).
MAX_ARCHIVE_FILES = 3 * 20_000
# Bytes of all members together (staged on disk): a kernel object is a few KB (the largest the
# examples build is ~15 KB), so 20,000 entries fit many times over; gigabytes are a decompression bomb.
MAX_ARCHIVE_BYTES = 1 << 30
# Header bytes read for one member: a 512-byte block, and a pax record or GNU long name of an export
# needs well under 1 KB; more is an archive that makes tarfile read its own size into memory.
MAX_HEADER_BYTES = 64 << 10
# Member data is copied to the staging directory in chunks of this size.
COPY_CHUNK_BYTES = 1 << 20
# Plain files only: no links, directories, devices, FIFOs, nor sparse or continued files.
PLAIN_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE)
MEMBER_KINDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.DIRTYPE: "a directory",
                tarfile.CHRTYPE: "a character device", tarfile.BLKTYPE: "a block device", tarfile.FIFOTYPE: "a FIFO",
                tarfile.GNUTYPE_SPARSE: "a sparse file", tarfile.CONTTYPE: "a contiguous file"}
# Compressed archives by their first bytes (what `tarfile.open(mode="r:*")` accepts).
DECOMPRESSORS = ((b"\x1f\x8b", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")), (b"BZh", bz2.BZ2File),
                 (b"\xfd7zXZ\x00", lzma.LZMAFile))
# What a damaged archive or compressed stream raises while it is read.
READ_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError)
STAGED_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class _Metered:
    """The archive's decompressed bytes as tarfile reads them, refusing to read past an allowance."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self.left = 0
        self.what = ""

    def allow(self, size: int, what: str) -> None:
        self.left, self.what = size, what

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > self.left:
            wanted = "everything left" if size is None or size < 0 else f"{size} bytes"
            raise InvalidParamError(f"{self.what} would read {wanted}, over the {self.left} bytes it may (a tar "
                                    f"header bomb? a member's headers may take {format_bytes(MAX_HEADER_BYTES)}, "
                                    f"MAX_HEADER_BYTES; an export's take 512 bytes)")
        data = self.stream.read(size)
        self.left -= len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.stream.seek(offset, whence)      # forward only: the decompressors skip in bounded chunks

    def tell(self) -> int:
        return self.stream.tell()


@contextlib.contextmanager
def _decompressed(archive: Path) -> Iterator[BinaryIO]:
    with open(archive, "rb") as raw:
        head = raw.read(6)
        raw.seek(0)
        opener = next((cls for magic, cls in DECOMPRESSORS if head.startswith(magic)), None)
        if opener is None:
            yield raw
        else:
            with opener(raw) as stream:
                yield stream


def scan_archive(archive: Path, staging: Path | None = None) -> dict[str, set[str]]:
    """Entry name -> the suffixes (``.o``, ``.json``, ``.info``) ``archive`` holds for it. Every member's
    header is checked before its data is read; with ``staging``, each member is copied there as
    ``<staging>/<member name>`` (mode 0600) in chunks. The archive is refused whole (InvalidParamError
    naming the member and the limit) unless every member is a regular file with a plain entry file
    name, at most the reader's limit for its kind, and it holds at most MAX_ARCHIVE_FILES files and
    MAX_ARCHIVE_BYTES in all."""
    if not archive.is_file():
        raise InvalidParamError(f"{archive} is not a regular file")
    entries: dict[str, set[str]] = {}
    count = total = 0
    try:
        with _decompressed(archive) as stream:
            metered = _Metered(stream)
            metered.allow(MAX_HEADER_BYTES, "the first member's header")
            with tarfile.open(fileobj=metered, mode="r:") as tar:
                while (member := tar.next()) is not None:
                    tar.members.clear()          # tarfile keeps every header it read: only this one matters
                    count += 1
                    total += member.size
                    stem, suffix = _check_member(member, entries, count, total)
                    entries.setdefault(stem, set()).add(suffix)
                    if staging is not None:
                        metered.allow(member.size, f"member {member.name!r}")
                        _copy_member(tar, member, staging / member.name)
                    metered.allow(MAX_HEADER_BYTES, f"the header after member {member.name!r}")
    except READ_ERRORS as exc:
        raise InvalidParamError(f"it is not a readable tar archive ({type(exc).__name__}: {exc})") from None
    return entries


def _check_member(member: tarfile.TarInfo, entries: dict[str, set[str]], count: int,
                  total: int) -> tuple[str, str]:
    """(entry name, suffix) of an acceptable member (the ``count``-th, ``total`` bytes so far), else
    InvalidParamError saying what is wrong with it."""
    name = member.name
    if member.type not in PLAIN_TYPES or member.sparse is not None:
        kind = MEMBER_KINDS.get(member.type, "a sparse file" if member.sparse is not None
                                else f"of tar type {member.type!r}")
        raise InvalidParamError(f"member {name!r} is {kind}; an export holds regular files only")
    if not ARCHIVE_MEMBER.fullmatch(name):
        raise InvalidParamError(f"member {name!r} is not an entry file name (<name>.o/.json/.info, no directories)")
    stem, suffix = os.path.splitext(name)
    limit = MAX_FILE_BYTES[suffix]
    if member.size > limit:
        raise InvalidParamError(f"member {name!r} has {member.size} bytes, over the {limit}-byte limit for a "
                                f"{suffix} file")
    if suffix in entries.get(stem, ()):
        raise InvalidParamError(f"member {name!r} appears twice")
    if count > MAX_ARCHIVE_FILES:
        raise InvalidParamError(f"it holds more than {MAX_ARCHIVE_FILES} files (member {name!r})")
    if total > MAX_ARCHIVE_BYTES:
        raise InvalidParamError(f"its members up to {name!r} hold {format_bytes(total)}, over the "
                                f"{format_bytes(MAX_ARCHIVE_BYTES)} limit (MAX_ARCHIVE_BYTES) of an export")
    return stem, suffix


def _copy_member(tar: tarfile.TarFile, member: tarfile.TarInfo, path: Path) -> None:
    """Copy ``member``'s data to the new file ``path`` (mode 0600) in chunks."""
    source = tar.extractfile(member)
    fd = os.open(path, STAGED_FILE_FLAGS, 0o600)
    with os.fdopen(fd, "wb") as target:
        left = member.size
        while left:
            chunk = source.read(min(COPY_CHUNK_BYTES, left))
            if not chunk:
                raise InvalidParamError(f"member {member.name!r} ends {left} bytes before the size its header says")
            target.write(chunk)
            left -= len(chunk)
