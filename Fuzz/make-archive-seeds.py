#!/usr/bin/env python3
"""Writes the seed corpora of the archive and tool-output fuzz targets (Fuzz/corpus/{tar,gzip,zip,pdfinfo}/):
small valid archives made by Python's tarfile/zipfile/gzip, and the hostile inputs of
Tests/KioskEditionsTests/HostileArchiveTests.swift built byte by byte with valid checksums and CRCs.
Each file starts with the target's selector byte (see the targets' headers). Run from anywhere:
    python3 Fuzz/make-archive-seeds.py
"""
import gzip
import io
import os
import struct
import tarfile
import zipfile
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


# --- tar -----------------------------------------------------------------------------------------

def tar_header(name, size_field, type_=b"0"):
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:108] = b"0000644\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = size_field
    h[136:148] = b"00000000000\0"
    h[156:157] = type_
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def pad(data):
    return data + b"\0" * ((512 - len(data) % 512) % 512)


def base256(value, first=0x80):
    return bytes([first, 0, 0, 0]) + value.to_bytes(8, "big")


def octal(value):
    return b"%011o\0" % value


def pax_record(key, value):
    body = b" %s=%s\n" % (key.encode(), value.encode())
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length += 1
    return str(length).encode() + body


END = b"\0" * 1024


def python_tar(fmt=tarfile.USTAR_FORMAT, mode="w", long=False):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode, format=fmt) as t:
        for name, data in [("issue.json", b"{}"), ("pdf/001.pdf", b"%PDF-1.4\n" + b"x" * 600)]:
            info = tarfile.TarInfo(("x" * 120 + "/" if long else "") + name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        d = tarfile.TarInfo("jpg")
        d.type = tarfile.DIRTYPE
        t.addfile(d)
    return out.getvalue()


valid_tar = python_tar()
write("tar", "valid-ustar", b"\x00" + valid_tar)
write("tar", "valid-pax-long", b"\x01" + python_tar(tarfile.PAX_FORMAT, long=True))
write("tar", "valid-gnu-long", b"\x00" + python_tar(tarfile.GNU_FORMAT, long=True))
write("tar", "valid-gzipped", b"\x02" + valid_tar)
write("tar", "hostile-base256-int64-max", b"\x00" + tar_header("issue.json", base256(2**63 - 1)) + END)
write("tar", "hostile-base256-negative", b"\x00" + tar_header("issue.json", base256(2**64 - 1, 0xFF)) + END)
write("tar", "hostile-octal-8gib", b"\x00" + tar_header("issue.json", octal(0o77777777777)) + END)
write("tar", "hostile-pax-size-overflow",
      b"\x01" + tar_header("PaxHeader", octal(len(pax_record("size", "9" * 23))), b"x") + pad(pax_record("size", "9" * 23))
      + tar_header("issue.json", octal(2)) + pad(b"{}") + END)
write("tar", "hostile-pax-short-record",
      b"\x00" + tar_header("PaxHeader", octal(2), b"x") + pad(b"1 ") + tar_header("issue.json", octal(2)) + pad(b"{}") + END)
write("tar", "hostile-longname-huge", b"\x00" + tar_header("././@LongLink", base256(2**63 - 1), b"L") + END)

# --- gzip ----------------------------------------------------------------------------------------

def gzip_member(payload, extra=None, name=None, hcrc=False, method=8):
    flags = (2 if hcrc else 0) | (4 if extra is not None else 0) | (8 if name is not None else 0)
    out = bytes([0x1F, 0x8B, method, flags, 0, 0, 0, 0, 0, 3])
    if extra is not None:
        out += struct.pack("<H", len(extra)) + extra
    if name is not None:
        out += name + b"\0"
    if hcrc:
        out += struct.pack("<H", zlib.crc32(out) & 0xFFFF)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return out + c.compress(payload) + c.flush() + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


tar_small = tar_header("issue.json", octal(2)) + pad(b"{}") + END
write("gzip", "raw-valid-targz", b"\x01" + gzip.compress(valid_tar, mtime=0))
write("gzip", "raw-two-members", b"\x01" + gzip_member(tar_small[:700]) + gzip_member(tar_small[700:]))
write("gzip", "raw-header-fields", b"\x01" + gzip_member(tar_small, extra=b"AB\x02\x00hi", name=b"issue.tar", hcrc=True))
write("gzip", "raw-broken-trailer", b"\x02" + gzip_member(tar_small)[:-8] + b"\0" * 8)
write("gzip", "raw-truncated", b"\x02" + gzip_member(tar_small)[:40])
write("gzip", "raw-huge-extra-truncated", b"\x02" + bytes([0x1F, 0x8B, 8, 4, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF, 1, 2, 3]))
write("gzip", "raw-bad-method", b"\x02" + gzip_member(tar_small, method=7))
# Descriptions (selector 0): header flags, [extra length, extra], members, trailing length, payload.
write("gzip", "description-plain", b"\x00" + b"\x00" + b"\x02" + b"\x00" + b"hello gzip " * 20)
write("gzip", "description-fields", b"\x00" + bytes([0x0F, 5]) + b"extra" + bytes([4]) + b"name" + bytes([3]) + b"com"
      + bytes([3, 2]) + b"\0\0" + b"payload" * 30)
write("gzip", "description-lying-extra", b"\x00" + bytes([0x81, 3]) + b"abc" + struct.pack("<H", 0xFFFF) + bytes([1, 0]) + b"x" * 50)
write("gzip", "tar-in-members", b"\x03" + bytes([2]) + valid_tar)

# --- ZIP -----------------------------------------------------------------------------------------

def python_zip(compression, force_zip64=False):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as z:
        for name, data in [("issue.json", b"{}"), ("pdf/001.pdf", b"%PDF-1.4\n" + b"x" * 600), ("jpg/", b"")]:
            with z.open(name, "w", force_zip64=force_zip64) as f:
                f.write(data)
    return out.getvalue()


write("zip", "raw-stored", b"\x01" + python_zip(zipfile.ZIP_STORED))
write("zip", "raw-deflated", b"\x01" + python_zip(zipfile.ZIP_DEFLATED))
write("zip", "raw-zip64-extra", b"\x01" + python_zip(zipfile.ZIP_DEFLATED, force_zip64=True))
write("zip", "raw-deflated-unfixed-end", b"\x02" + python_zip(zipfile.ZIP_DEFLATED))


def le16(v): return struct.pack("<H", v)
def le32(v): return struct.pack("<I", v)
def le64(v): return struct.pack("<Q", v)


def zip64_claiming(count=2**64 - 1, size=0, offset=30, record=30):
    stub = le32(0x04034B50) + b"\0" * 26
    rec = le32(0x06064B50) + le64(44) + le16(45) + le16(45) + le32(0) + le32(0) + le64(count) + le64(count) + le64(size) + le64(offset)
    loc = le32(0x07064B50) + le32(0) + le64(record) + le32(1)
    end = le32(0x06054B50) + le16(0) + le16(0) + le16(0xFFFF) + le16(0xFFFF) + le32(0xFFFFFFFF) + le32(0xFFFFFFFF) + le16(0)
    return stub + rec + loc + end


def one_entry_zip(extra=b"", size=2, compressed=2, local=0, extra_length=None):
    data = b"{}"
    name = b"issue.json"
    crc = zlib.crc32(data)
    lh = le32(0x04034B50) + le16(20) + le16(0) * 4 + le32(crc) + le32(2) + le32(2) + le16(len(name)) + le16(0) + name + data
    ch = (le32(0x02014B50) + le16(3 << 8 | 20) + le16(20) + le16(0) * 4 + le32(crc) + le32(compressed) + le32(size)
          + le16(len(name)) + le16(len(extra) if extra_length is None else extra_length) + le16(0) * 3 + le32(0o100644 << 16)
          + le32(local) + name + extra)
    return lh + ch + le32(0x06054B50) + le16(0) * 2 + le16(1) * 2 + le32(len(ch)) + le32(len(lh)) + le16(0)


write("zip", "hostile-zip64-count", b"\x02" + zip64_claiming())
write("zip", "hostile-eocd-alone", b"\x02" + le32(0x06054B50) + le16(0) * 2 + le16(0xFFFF) * 2 + le32(0) * 2 + le16(0))
write("zip", "hostile-extra-past-directory", b"\x02" + one_entry_zip(extra=le16(1) + le16(0xFFF0), size=0xFFFFFFFF))
write("zip", "hostile-zip64-offset", b"\x02" + one_entry_zip(extra=le16(1) + le16(8) + le64(2**64 - 16), local=0xFFFFFFFF))
write("zip", "hostile-size-overflow", b"\x02" + one_entry_zip(extra=le16(1) + le16(16) + le64(2**63 - 1) * 2,
                                                             size=0xFFFFFFFF, compressed=0xFFFFFFFF))
# Descriptions (selector 0): shape, then per entry: kind, name length, name, data length (2 bytes), data, overrides.
write("zip", "description-two-entries", b"\x00" + bytes([0x01]) + bytes([0x00, 9]) + b"issue.json" + le16(2) + b"{}"
      + bytes([0x01, 10]) + b"pdf/001.pdf" + le16(40) + b"%PDF-" + b"x" * 35)
write("zip", "description-zip64-edges", b"\x00" + bytes([0x0C]) + bytes([0x1E, 3]) + b"a.pd" + le16(3) + b"abc"
      + bytes([3, 4, 5]) + bytes([0]) + bytes([6]))

# --- pdfinfo and content checks --------------------------------------------------------------------

pdfinfo = ("Title:           Evil\nPage 1 size:\nPages: 7\nPage    1 size: 1 x 1 pts\nCustom Metadata: no\n"
           "Metadata Stream: no\nTagged:          no\nUserProperties:  no\nSuspects:        no\nForm:            none\n"
           "JavaScript:      no\nPages:           1\nEncrypted:       no\nPage    1 size:  595 x 842 pts (A4)\n"
           "Page    1 rot:   0\nFile size:       568 bytes\nOptimized:       no\nPDF version:     1.7\n").encode()
write("pdfinfo", "pdfinfo-title-injection", b"\x00" + pdfinfo)
write("pdfinfo", "pdfinfo-plain", b"\x28" + pdfinfo.replace(b"Evil\nPage 1 size:\nPages: 7\nPage    1 size: 1 x 1 pts", b"Plain"))
write("pdfinfo", "title-page-size", b"\x01" + b"Evil\nPage 1 size:")
write("pdfinfo", "title-pages", b"\x24" + b"x\nPages: 99999999999999999999\nPage    1 size: nan x inf pts")
write("pdfinfo", "startxref-19-digits", b"\x02" + b"%PDF-1.7\n" + b" " * 40 + b"startxref\n9999999999999999999\n%%EOF\n")
write("pdfinfo", "startxref-fine", b"\x02" + b"%PDF-1.7\n" + b" " * 40 + b"startxref\n12\n%%EOF\n")
write("pdfinfo", "jpeg-frame", b"\x03" + bytes([0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 10, 0, 10, 3]) + b"\0" * 200 + bytes([0xFF, 0xD9]))
write("pdfinfo", "sections", bytes([4 + 5 * 8]) + b'[{"id": 1, "name": "Portada", "pages": "1-2"}, {"id": 2, "name": "Esports", "pages": "3-5"}]')
write("pdfinfo", "outline", bytes([3 * 8]) + b"\x7f" + b"\xff" * 7 + b"\x04Evil" + b"\0" * 7 + b"\x01\x03Two")
print("seeds written under", ROOT)
