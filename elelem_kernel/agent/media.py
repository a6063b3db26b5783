"""Images a tool returns for the person: shown in its card and kept in the record.

A tool result may carry `"_images": [{"mime_type", "data"}]` (base64). The session takes
them out before the result reaches the model (which gets the tool's text, describing
them), checks them against an allowlist of raster types and a size bound, and hands them
to the card and the record. Anything else is dropped and said so in the result.
"""

from __future__ import annotations

import re
from typing import Any

KEY = "_images"
TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGES = 4  #: images kept per call
MAX_CHARS = 256_000  #: base64 characters kept per image (about 190 KB)
BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def take_images(result: dict[str, Any]) -> list[dict[str, str]]:
    """Remove `_images` from `result` (in place); the ones fit to show."""
    found = result.pop(KEY, None)
    if not isinstance(found, list):
        return []
    kept: list[dict[str, str]] = []
    dropped: list[str] = []
    for image in found:
        mime = image.get("mime_type") if isinstance(image, dict) else None
        data = image.get("data") if isinstance(image, dict) else None
        if mime not in TYPES or not isinstance(data, str) or not BASE64.match(data):
            dropped.append(f"{mime or 'unknown'}: not a PNG, JPEG, GIF or WebP image")
        elif len(data) > MAX_CHARS:
            dropped.append(f"{mime}: {len(data) * 3 // 4:,} bytes, more than the card shows")
        elif len(kept) == MAX_IMAGES:
            dropped.append(f"{mime}: more than {MAX_IMAGES} images")
        else:
            kept.append({"mime_type": mime, "data": data})
    if dropped:
        result["images_not_shown"] = dropped
    return kept
