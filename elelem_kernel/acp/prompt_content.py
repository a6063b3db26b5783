"""A `session/prompt`'s content blocks as a turn's prompt: its text and its images.

Text is taken as is; a `resource_link` becomes a Markdown link and an embedded text
`resource` is fenced under its URI, each on lines of its own. An `image` block (base64
`data` and `mimeType`, optional `uri`), and an embedded `resource` whose blob is an image,
is decoded and fitted for a model as a tool's images are (`images.decode`, `images.fit`:
PNG, JPEG, GIF or WebP, at most 1568 px and 1 MB) and leaves a line in the text where it
stood, `[image 1: 800×600 PNG]`, so the prompt says where each image was and a saved
session keeps it after its data (stored once, in the turn's output) is gone from the
record.

Nothing is dropped quietly: a prompt with an image that cannot be read or fitted, with
more than `MAX_IMAGES`, or for a model that takes no images is refused whole with a
message saying what and why (`PromptError`), and the client keeps the prompt to send again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from elelem_kernel import images as img
from elelem_kernel.acp.params import Params
from elelem_kernel.acp.updates import fenced
from elelem_kernel.agent import media
from elelem_kernel.errors import PromptError
from elelem_kernel.images import ImageEntry
from elelem_kernel.options import from_env

if TYPE_CHECKING:
    from elelem_kernel.acp.messages import Json
    from elelem_kernel.agent.session import Session

#: Images one prompt may carry: those a request sends at most (`media.MAX_PER_REQUEST`).
MAX_IMAGES = media.MAX_PER_REQUEST


@dataclass
class Prompt:
    """A prompt as a turn takes it: its text and its images (`_images` entries, fitted)."""

    text: str
    images: list[ImageEntry] = field(default_factory=list)


@dataclass
class _Pending:
    """An image block waiting to be decoded: its place among the parts and its name."""

    place: int
    mime: str
    data: str
    name: str


async def read_prompt(blocks: list[Json]) -> Prompt:
    """The prompt the content `blocks` (ACP's JSON) make; `PromptError` when one cannot be
    taken, an invalid-params `RpcError` when a block lacks a field its type needs. Images
    are fitted in a worker thread (a large one takes seconds to re-encode)."""
    parts: list[str] = []
    pending: list[_Pending] = []
    for n, item in enumerate(blocks):
        block = Params(item, f"invalid params: session/prompt: prompt[{n}]")
        kind = block.values.get("type")
        if kind == "text":
            parts.append(block.text("text"))
        elif kind == "image":
            uri = _name(block.maybe_text("uri"))
            pending.append(_Pending(len(parts), block.text("mimeType"), block.text("data"), uri))
            parts.append("")
        elif kind == "resource_link":
            parts.append(f"\n[{block.text('name')}]({block.text('uri')})\n")
        elif kind == "resource":
            resource = block.child("resource")
            where, mime_type = resource.text("uri"), resource.maybe_text("mimeType")
            if resource.values.get("text") is not None:
                parts.append(f"\n{where}:\n{fenced(resource.text('text'))}\n")
            elif mime_type is not None and mime_type in img.TYPES:
                blob = resource.text("blob")
                pending.append(_Pending(len(parts), mime_type, blob, _name(where)))
                parts.append("")
            else:
                parts.append(f"\n[{where} ({mime_type or 'binary'}): not included]\n")
        else:
            raise PromptError(
                f"prompt content of type {kind!r} is not accepted: send text, image, "
                "resource or resource_link blocks"
            )
    if len(pending) > MAX_IMAGES:
        raise PromptError(
            f"the prompt has {len(pending)} images; a prompt takes at most {MAX_IMAGES}: "
            "send the others in a later prompt"
        )
    fitted = await asyncio.to_thread(_fit_all, pending) if pending else []
    problems = [f"image {n}: {f}" for n, f in enumerate(fitted, 1) if isinstance(f, str)]
    if problems:
        raise PromptError("the prompt was not sent: " + "; ".join(problems))
    images = [f for f in fitted if isinstance(f, dict)]
    for n, (entry, image) in enumerate(zip(pending, images, strict=True), 1):
        name = f", {entry.name}" if entry.name else ""
        parts[entry.place] = f"\n[image {n}: {img.label(image)}{name}]\n"
    return Prompt("".join(parts).strip("\n"), images)


def _fit_all(pending: list[_Pending]) -> list[ImageEntry | str]:
    """Each pending image decoded and fitted (an entry), or why it cannot be (a line)."""
    out: list[ImageEntry | str] = []
    for entry in pending:
        image = img.decode(entry.mime, entry.data)
        if isinstance(image, img.Image):
            image = img.fit(image)
        out.append(image if isinstance(image, str) else image.as_dict())
    return out


def _name(uri: str | None) -> str:
    """The file name at the end of an image's URI, if it has one (`shot.png`)."""
    if not isinstance(uri, str) or uri.startswith("data:"):
        return ""
    return uri.rstrip("/").rsplit("/", 1)[-1][:80]


async def refusal(session: Session, images: list[ImageEntry]) -> str | None:
    """Why `session`'s model cannot be sent these images now, or None when it can: a
    model that takes none (`ModelFacts.takes_images`), or fewer than the prompt has (the
    option `max_images`)."""
    if not images:
        return None
    model = session.model or f"the {session.provider_name} provider's default model"
    if not await session.facts.takes_images():
        return (
            f"{model} takes no images, so the prompt was not sent: switch to a model "
            f"that takes images (/model NAME), or, if this one does, say so "
            f"(/option {media.OPTION} on)"
        )
    limit = {**from_env(), **session.facts.options}.get(media.LIMIT_OPTION)
    if limit is not None and media.parse_limit(limit) < len(images):
        return (
            f"the option {media.LIMIT_OPTION} is {limit}: this session sends at most that many "
            f"images a request, and the prompt has {len(images)}"
        )
    return None
