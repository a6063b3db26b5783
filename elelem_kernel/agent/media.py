"""Images a tool returns: shown in its card, kept in the record, and sent to the model.

A tool result may carry `"_images": [{"mime_type", "data"}]` (base64): the python tool's
plots, `read` of an image file, notebook outputs, MCP image content. The session takes
them out of the result (`take_images`), fits at most `MAX_IMAGES` of them for a model
(`images.fit`: at most 1568 px and 1 MB, downscaled with Pillow when it is installed; in a
worker thread, so that the event loop and the person's stop are not held up) and hands them to the card, the
record and the tool message (`images`), where the result's text lists them in
`images_attached`. Anything else is dropped and said so in the result. An entry marked
`"shown": "cell"` is already in the cell's output (the python tool's plot in a kernel):
its card names it instead of showing it again.

Each request then sends (`for_request`) at most `MAX_PER_REQUEST` images, the newest
first, and only to a model that takes images (`takes_images`: the option `vision`, else
what the provider says, else `known_vision`); every image not sent leaves a one-line
placeholder in its tool result. Images of earlier turns are never sent again: their
history carries the placeholder (`conversation.turn_messages`).
"""

from __future__ import annotations

import json
import re
import threading

from elelem_kernel import images as img
from elelem_kernel.errors import ConfigError
from elelem_kernel.events import Message

KEY = "_images"
TYPES = tuple(img.TYPES)
BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
#: An `_images` entry's `"shown"` when the cell's own output already shows the image.
SHOWN_IN_CELL = "cell"
#: Images decoded and fitted per tool call (those that fail to fit count too).
MAX_IMAGES = 8
#: Why an image was left out when the person stopped the turn while it was being fitted.
INTERRUPTED = "not read: the turn was interrupted"
#: Images sent per request, the newest first.
MAX_PER_REQUEST = 8
#: The provider option that says whether the model takes images.
OPTION = "vision"
#: The provider option that sets how many images a request sends (`MAX_PER_REQUEST`).
LIMIT_OPTION = "max_images"
#: Models known to take images, by name (any provider); others get descriptions.
VISION_MODELS = re.compile(
    r"(claude-(3|sonnet|opus|haiku)|gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|chatgpt-4o|"
    r"(^|/)(o1|o3)(?!-mini)|(^|/)o4|gemini|llava|bakllava|vision|-vl\b|qwen2\.5vl|"
    r"qwen3-vl|gemma3(?!:1b)|gemma-3|pixtral|llama4|minicpm-v|moondream|mistral-small3\.[12]|"
    r"mistral-medium|granite3\.2-vision)",
    re.IGNORECASE,
)
#: Providers whose every model takes images.
VISION_PROVIDERS = frozenset({"demo"})


def take_images(
    result: dict[str, object], stop: threading.Event | None = None
) -> list[img.ImageEntry]:
    """Remove `_images` from `result` (in place); the ones fit to show and send, each
    `{"mime_type", "data", "width", "height"}`. The result's text lists them
    (`images_attached`) and says why any was left out (`images_not_shown`).

    Slow with large images (decoding and re-encoding them): the session runs
    `fit_images` in a worker thread, and sets `stop` to end it between two images."""
    found = result.pop(KEY, None)
    if not isinstance(found, list):
        return []
    kept, dropped = fit_images(found, stop)
    note(result, kept, dropped)
    return kept


def fit_images(
    found: list[object], stop: threading.Event | None = None
) -> tuple[list[img.ImageEntry], list[str]]:
    """The `_images` entries fit to send, and why the others were left out. At most
    `MAX_IMAGES` are decoded and fitted, those that fail to fit included (each costs the
    work); `stop`, when set, leaves the rest out."""
    kept: list[img.ImageEntry] = []
    dropped: list[str] = []
    decoded = 0
    for entry in found:
        if stop is not None and stop.is_set():
            dropped.append(INTERRUPTED)
            continue
        if decoded == MAX_IMAGES:
            dropped.append(f"more than {MAX_IMAGES} images from one call")
            continue
        image = (
            img.decode(entry.get("mime_type"), entry.get("data"))
            if isinstance(entry, dict)
            else "not an image entry"
        )
        if isinstance(image, img.Image):
            decoded += 1
            image = img.fit(image)
        if isinstance(image, str):
            dropped.append(image)
        else:
            kept.append(image.as_dict())
            if isinstance(entry, dict) and entry.get("shown") == SHOWN_IN_CELL:
                kept[-1]["shown"] = SHOWN_IN_CELL
    return kept, dropped


def note(result: dict[str, object], kept: list[img.ImageEntry], dropped: list[str]) -> None:
    """List the images kept (`images_attached`) and why others were not
    (`images_not_shown`) in the tool's `result`."""
    if kept:
        result["images_attached"] = [f"image {i}: {img.label(e)}" for i, e in enumerate(kept, 1)]
    if dropped:
        result["images_not_shown"] = dropped


def parse_vision(value: object) -> bool:
    """The `vision` option as a bool: on/off, true/false, yes/no, 1/0."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("on", "true", "yes", "1"):
        return True
    if text in ("off", "false", "no", "0", "none"):
        return False
    raise ConfigError(f"option {OPTION} must be on or off, not {value!r}")


def parse_limit(value: object) -> int:
    """The `max_images` option: a whole number, 0 or more."""
    try:
        number = int(value) if isinstance(value, (int, float, str)) else -1
    except ValueError:
        number = -1
    if isinstance(value, bool) or number < 0 or str(number) != str(value).strip():
        raise ConfigError(
            f"option {LIMIT_OPTION} must be a whole number (0 or more), not {value!r}"
        )
    return number


def known_vision(provider: str | None, model: str | None) -> bool:
    """Whether the model is known to take images (by provider, else by model name)."""
    if provider in VISION_PROVIDERS:
        return True
    return bool(model and VISION_MODELS.search(model))


def for_request(
    messages: list[Message], vision: bool, limit: int = MAX_PER_REQUEST
) -> list[Message]:
    """The messages as sent: at most `limit` images (the newest), none when `vision` is
    off; each image left out becomes a placeholder in its tool message's result."""
    sent = list(messages)
    count = 0
    for i in range(len(sent) - 1, -1, -1):
        message = sent[i]
        if message["role"] != "user" and message["role"] != "tool":
            continue
        images = message.get("images")
        if not images:
            continue
        newest = images[::-1]
        room = max(limit - count, 0) if vision else 0
        keep, left = newest[:room], newest[room:]
        count += len(keep)
        why = "the model takes no images" if not vision else f"over {limit} in a request"
        notes = [f"{img.placeholder(entry)} ({why})" for entry in left]
        if notes:
            message = message.copy()
            del message["images"]
            if keep:
                message["images"] = keep[::-1]
            message["content"] = annotate(message.get("content"), notes[::-1])
            sent[i] = message
    return sent


def annotate(content: object, notes: list[str]) -> str:
    """A tool result's JSON with `images_omitted` notes added (appended as text when the
    result is not a JSON object, e.g. cut in the record)."""
    text = str(content or "")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        data["images_omitted"] = list(data.get("images_omitted") or []) + notes
        return json.dumps(data, ensure_ascii=False)
    return text + "\n" + "\n".join(notes)


def without_data(images: list[img.ImageEntry]) -> list[img.ImageEntry]:
    """Recorded images without their base64, and where the notebook holds each: the
    output's HTML (the card), or the cell's own display output (`shown`), so the
    notebook stores each image once."""
    out = []
    for entry in images:
        if isinstance(entry, dict):
            kept = entry.copy()
            kept.pop("data", None)
            kept.pop("shown", None)
            if "data" in entry:
                shown = entry.get("shown") == SHOWN_IN_CELL
                kept["in"] = "display_data" if shown else "text/html"
            out.append(kept)
    return out
