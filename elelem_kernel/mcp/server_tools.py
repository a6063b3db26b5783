"""MCP tools as toolbox tools: `mcp__SERVER__TOOL`, kinds from annotations, bounded results.

Kinds: `readOnlyHint: true` is read, `destructiveHint: false` is write, anything else is
execute, so modes and approvals treat them as they treat the built-in tools. A result's
text goes to the model cut to RESULT_CHARS (saying so); `structuredContent` is used when
present; images go to the card (and to the model where its provider takes images in tool
results, else it gets their description); other content is described; `isError` makes a
failed call. Values of
the server's `env` and `headers` are replaced by `[redacted]` before anyone sees a result,
in dict keys as well as values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from elelem_kernel.agent.media import KEY as IMAGES
from elelem_kernel.agent.toolbox import Tool
from elelem_kernel.images import ImageEntry
from elelem_kernel.mcp.config import PREFIX, ServerConfig
from elelem_kernel.redaction import forms_of, redact
from elelem_kernel.text import clip, shorten

if TYPE_CHECKING:
    from mcp.types import CallToolResult, ContentBlock
    from mcp.types import Tool as RemoteTool

RESULT_CHARS = 50_000  #: characters of text a call hands the model
DESCRIPTION_CHARS = 2_000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class McpTool(Tool):
    """A tool of an MCP server, with the server's own input schema."""

    server: str = ""
    remote: str = ""  #: the tool's name on its server
    input_schema: dict[str, object] = field(default_factory=dict)

    @property
    def schema(self) -> dict[str, object]:
        schema = {k: v for k, v in self.input_schema.items() if k != "$schema"}
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, with characters providers refuse replaced, 64 at most."""
    return _UNSAFE.sub("_", f"{PREFIX}{server}__{tool}")[:64]


def kind_of(annotations: object) -> str:
    """read, write or execute from a tool's annotations (execute when it says nothing)."""
    if annotations is None:
        return "execute"
    if getattr(annotations, "read_only_hint", None) is True:
        return "read"
    if getattr(annotations, "destructive_hint", None) is False:
        return "write"
    return "execute"


def preview(server: str, remote: str, arguments: Mapping[str, object]) -> str:
    """What the approval shows: the server, the tool and the arguments."""
    args = json.dumps(arguments, ensure_ascii=False, indent=2)
    return f"MCP server {server}, tool {remote}\narguments: {args}"


def make_tool(
    config: ServerConfig,
    remote: RemoteTool,
    call: Callable[[ServerConfig, str, dict[str, object]], Awaitable[dict[str, object]]],
) -> McpTool:
    """A toolbox tool for the SDK's Tool `remote` of server `config`; `call(config, tool,
    arguments)` runs it."""
    name = tool_name(config.name, remote.name)
    description = (remote.description or remote.title or remote.name).strip()
    if len(description) > DESCRIPTION_CHARS:
        description = shorten(description, DESCRIPTION_CHARS)
    schema = remote.input_schema if isinstance(remote.input_schema, dict) else {}
    server, tool = config.name, remote.name

    async def run(arguments: dict[str, object]) -> dict[str, object]:
        return await call(config, tool, arguments)

    kind = kind_of(remote.annotations)
    label = {"read": "read-only", "write": "writes", "execute": "may change or delete things"}
    return McpTool(
        name=name,
        description=f"[MCP server {server}, {label[kind]}] {description}",
        params=dict(schema.get("properties") or {}),
        fn=run,
        required=tuple(schema.get("required") or ()),
        kind=kind,
        preview=lambda args: preview(server, tool, args),
        server=server,
        remote=tool,
        input_schema=schema,
    )


def convert(result: CallToolResult, secrets: list[str] | None = None) -> dict[str, object]:
    """A CallToolResult as a tool result dict (see the module doc)."""
    texts, media, images = _parts(result.content or [])
    text = "\n".join(texts)
    if result.is_error:
        out: dict[str, object] = {
            "error": clip(text, RESULT_CHARS, "\n")
            or "the tool reported an error without a message"
        }
    else:
        out = _answer(text, result.structured_content)
    if media:
        out["media"] = media
        shown = [m for m in media if m["type"] == "image"]
        if shown:
            kinds = ", ".join(str(m["mime_type"]) for m in shown)
            out["note"] = f"{len(shown)} image(s) returned ({kinds}), shown in the tool's card"
    out = redact(out, forms_of(secrets or []))
    if images:
        out[IMAGES] = images
    return out


def _parts(
    content: Sequence[ContentBlock],
) -> tuple[list[str], list[dict[str, str | int]], list[ImageEntry]]:
    """A result's content items as `(texts, media, images)`: the texts (a text resource
    headed by its URI), what each other item is, and the images to show."""
    texts: list[str] = []
    media: list[dict[str, str | int]] = []
    images: list[ImageEntry] = []
    from mcp import types  # lazy: a result means the SDK is installed

    for item in content:
        if isinstance(item, types.TextContent):
            texts.append(item.text)
        elif isinstance(item, (types.ImageContent, types.AudioContent)):
            size = len(item.data or "") * 3 // 4
            media.append({"type": item.type, "mime_type": item.mime_type, "bytes": size})
            if isinstance(item, types.ImageContent):
                images.append({"mime_type": item.mime_type, "data": item.data or ""})
        elif isinstance(item, types.EmbeddedResource):
            resource = item.resource
            text = getattr(resource, "text", None)
            if text is not None:
                texts.append(f"[resource {resource.uri}]\n{text}")
            else:
                media.append({"type": "resource", "uri": str(resource.uri)})
        elif isinstance(item, types.ResourceLink):
            media.append({"type": "resource_link", "uri": str(item.uri), "name": item.name})
        else:
            media.append({"type": str(getattr(item, "type", "")) or "unknown"})
    return texts, media, images


def _answer(text: str, structured: Mapping[str, object] | None) -> dict[str, object]:
    """A result that is not an error: its structured content when it fits (with the text
    too when that says something else), else the text, cut."""
    out: dict[str, object] = {}
    if structured is not None and len(json.dumps(structured, default=str)) > RESULT_CHARS:
        structured = None  # too big to pass whole: the cut text stands in for it
        out["note"] = "the structured result was too large; its text is given, cut"
    if structured is not None:
        out["structured"] = structured
        if text and not _same_json(text, structured):
            out["content"] = clip(text, RESULT_CHARS, "\n")
    else:
        out["content"] = clip(text, RESULT_CHARS, "\n")
    return out


def _same_json(text: str, value: object) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False
