"""Image facts: what kind and how big an image is, fitting it for a model, describing it.

Used by the tools that produce images (python, read, notebook outputs), by the session
that sends them and by the providers that put them on the wire. The type and size are read
from the file's own header (PNG, JPEG, GIF, WebP), so nothing here needs Pillow; with
Pillow installed (matplotlib brings it) an image larger than `MAX_SIDE` on its long side
is downscaled and re-encoded, and any image is re-encoded when that makes it smaller.
Without Pillow an image under `MAX_BYTES` passes as it is and a larger one is described.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # annotations only (Python 3.10 has no typing.NotRequired)
    from typing_extensions import NotRequired

from elelem_kernel.text import human_size

#: The raster types a model takes, by MIME type, with their short names.
TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}
#: Longest side sent to a model (the size past which Anthropic scales images down).
MAX_SIDE = 1568
#: Bytes of one image sent to a model, after fitting.
MAX_BYTES = 1_000_000
#: Bytes of an image taken in at all (fitting a larger one costs too much memory).
MAX_INPUT_BYTES = 30_000_000
#: Pixels of an image that is decoded to fit it (about 100 MB at 4 bytes a pixel).
MAX_PIXELS = 25_000_000
#: Pixels per token of an image (Anthropic's rule: width × height / 750).
PIXELS_PER_TOKEN = 750

#: Where the notebook holds a recorded image (`in`: a keyword, so only this form names it).
_Where = TypedDict("_Where", {"in": str}, total=False)


class ImageEntry(_Where):
    """An image: in a tool result (`_images`), a message, a record (`$defs/call` images).
    `data` is base64, left out of a record when the notebook holds the image (`in`:
    `text/html` or `display_data`); `shown`: `cell` (the cell's output shows it)."""

    mime_type: str
    data: NotRequired[str]
    width: NotRequired[int]
    height: NotRequired[int]
    shown: NotRequired[str]


@dataclass(frozen=True)
class Image:
    """One raster image: its MIME type, bytes and pixel size (0 × 0 when unreadable)."""

    mime_type: str
    data: bytes
    width: int = 0
    height: int = 0

    @property
    def kind(self) -> str:
        return TYPES.get(self.mime_type, self.mime_type)

    def describe(self) -> str:
        """`640×480 PNG, 12 KB`."""
        size = f"{self.width}×{self.height} " if self.width and self.height else ""
        return f"{size}{self.kind}, {human_size(len(self.data), 'rough')}"

    def tokens(self) -> int:
        """Estimated tokens a model spends on this image."""
        return tokens(self.width, self.height)

    def as_dict(self) -> ImageEntry:
        """The form tool results and messages carry (`_images` entries)."""
        return {
            "mime_type": self.mime_type,
            "data": base64.b64encode(self.data).decode("ascii"),
            "width": self.width,
            "height": self.height,
        }


def tokens(width: int, height: int) -> int:
    """Tokens of a `width` × `height` image as sent (after fitting to `MAX_SIDE`)."""
    if width <= 0 or height <= 0:
        return 1_600  # unknown size: about what a full-size image costs
    scale = min(1.0, MAX_SIDE / max(width, height))
    return max(1, round(width * scale * height * scale / PIXELS_PER_TOKEN))


def sniff(data: bytes) -> str | None:
    """The MIME type the bytes start like (PNG, JPEG, GIF, WebP), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def size_of(mime: str, data: bytes) -> tuple[int, int]:
    """Width and height from the image's header; (0, 0) when it cannot be read."""
    try:
        if mime == "image/png" and data[12:16] == b"IHDR":
            w, h = struct.unpack(">II", data[16:24])
            return int(w), int(h)
        if mime == "image/gif":
            w, h = struct.unpack("<HH", data[6:10])
            return int(w), int(h)
        if mime == "image/webp":
            return _webp_size(data)
        if mime == "image/jpeg":
            return _jpeg_size(data)
    except struct.error:
        pass
    return 0, 0


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return 0, 0


def _jpeg_size(data: bytes) -> tuple[int, int]:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return 0, 0
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        i += 2 + length
    return 0, 0


def decode(mime: object, data: object) -> Image | str:
    """An `Image` from a MIME type and base64 text, or why it is not one (one line)."""
    if mime not in TYPES:
        return f"{mime or 'unknown type'}: not a PNG, JPEG, GIF or WebP image"
    if not isinstance(data, str):
        return f"{mime}: no base64 data"
    if len(data) * 3 // 4 > MAX_INPUT_BYTES:
        return f"{mime}: {human_size(len(data) * 3 // 4, 'rough')}, more than an image may be"
    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return f"{mime}: the data is not valid base64"
    return from_bytes(raw, str(mime))


def from_bytes(raw: bytes, mime: str | None = None) -> Image | str:
    """An `Image` from raw bytes (type sniffed when not given), or why it is not one."""
    found = sniff(raw)
    if found is None:
        return f"{mime or 'data'}: not a PNG, JPEG, GIF or WebP image"
    width, height = size_of(found, raw)
    return Image(found, raw, width, height)


def fit(image: Image) -> Image | str:
    """`image` ready for a model: at most `MAX_SIDE` px and `MAX_BYTES`, or why not.

    With Pillow: downscaled when larger than `MAX_SIDE`, and re-encoded (PNG, or JPEG for
    an image without transparency: plots and photos) when that makes it smaller. Without
    Pillow: passed when under the limits, else described. An image of more than
    `MAX_PIXELS` is described without being decoded (memory stays bounded).
    """
    too_big = max(image.width, image.height) > MAX_SIDE
    if not too_big and len(image.data) <= MAX_BYTES:
        return image
    if image.width * image.height > MAX_PIXELS:
        return f"{image.describe()}: too many pixels to fit for a model"
    try:
        from PIL import Image as pillow
    except ImportError:
        if len(image.data) <= MAX_BYTES:
            return image  # the model scales it down itself
        return f"{image.describe()}: larger than a model is sent (install Pillow to downscale)"
    try:
        return _refit(pillow, image)
    except Exception as e:  # a corrupt or unsupported image: say so, never crash the turn
        return f"{image.describe()}: could not be read ({type(e).__name__})"


def _refit(PIL: Any, image: Image) -> Image | str:
    with PIL.open(io.BytesIO(image.data)) as opened:
        if opened.width * opened.height > MAX_PIXELS:  # a size our header reading missed
            return f"{image.describe()}: too many pixels to fit for a model"
        if opened.format == "JPEG":
            opened.draft("RGB", (MAX_SIDE, MAX_SIDE))  # decode at a fraction of the size
        opened.load()
        picture = opened
        if picture.mode in ("RGBA", "LA") and picture.getextrema()[-1][0] == 255:
            picture = picture.convert(picture.mode[:-1])  # opaque: the alpha says nothing
        if max(picture.size) > MAX_SIDE:
            scale = MAX_SIDE / max(picture.size)
            size = (max(1, round(picture.width * scale)), max(1, round(picture.height * scale)))
            picture = picture.resize(size, PIL.LANCZOS)
        candidates = [image] if max(image.width, image.height) <= MAX_SIDE else []
        candidates.append(_encode(picture, "PNG"))
        if "A" not in picture.getbands() and picture.mode != "P":
            candidates.append(_encode(picture, "JPEG"))
    best = min(candidates, key=lambda c: len(c.data))
    if len(best.data) > MAX_BYTES:
        return f"{image.describe()}: larger than what is sent to a model, even downscaled"
    return best


def _encode(picture: Any, kind: str) -> Image:
    out = io.BytesIO()
    if kind == "JPEG":
        picture.convert("RGB").save(out, "JPEG", quality=85)
    else:
        if picture.mode not in ("RGB", "RGBA", "L", "LA", "P"):
            picture = picture.convert("RGBA")
        picture.save(out, "PNG")  # optimize=True costs seconds on a large plot
    mime = "image/jpeg" if kind == "JPEG" else "image/png"
    width, height = picture.size
    return Image(mime, out.getvalue(), width, height)


def label(entry: Mapping[str, object]) -> str:
    """`640×480 PNG` for an `_images` entry (a recorded or pending image)."""
    mime = str(entry.get("mime_type") or "")
    width, height = entry.get("width"), entry.get("height")
    size = f"{width}×{height} " if isinstance(width, int) and isinstance(height, int) else ""
    return f"{size}{TYPES.get(mime, mime or 'image')}"


def placeholder(entry: Mapping[str, object], turn: int | None = None) -> str:
    """`[image from turn 3: 640×480 PNG, omitted]`: an image not sent again."""
    where = f" from turn {turn}" if turn else ""
    return f"[image{where}: {label(entry)}, omitted]"


def entry_tokens(entry: Mapping[str, object]) -> int:
    """Estimated tokens of an `_images` entry (its `width` and `height` when known)."""
    width, height = entry.get("width"), entry.get("height")
    if isinstance(width, int) and isinstance(height, int):
        return tokens(width, height)
    return tokens(0, 0)
