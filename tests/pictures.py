"""Real images for tests, made with the standard library (no Pillow needed)."""

from __future__ import annotations

import base64
import struct
import zlib


def png(width: int = 4, height: int = 3, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid RGB PNG of one colour, `width` × `height` pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(colour) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def png64(width: int = 4, height: int = 3) -> str:
    """`png()` as base64 text, as tool results carry it."""
    return base64.b64encode(png(width, height)).decode("ascii")


def entry(width: int = 4, height: int = 3) -> dict:
    """An `_images` entry of a `width` × `height` PNG, measured as the session does."""
    return {
        "mime_type": "image/png",
        "data": png64(width, height),
        "width": width,
        "height": height,
    }
