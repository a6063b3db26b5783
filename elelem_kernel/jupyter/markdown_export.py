"""nbconvert's `--to elelem-markdown`: Markdown whose code fences hold any prompt.

nbconvert's Markdown template fences every input cell with exactly three backticks, so a
prompt holding a ```` ``` ```` block ends that fence early and the rest of the page turns
into code. CommonMark closes a fence only with a backtick run at least as long as the one
that opened it, so this exporter opens each input with one backtick more than the longest
run in the cell (three at least). An output that has `text/markdown` is written as that
Markdown, before its `text/html`: a turn's frozen output and a slash command's answer carry
both, and nbconvert's own Markdown exporter picks their inline-styled HTML (the shipped
quickstart: 29 KB that way, 9.7 KB this way). The rest is nbconvert's own Markdown template.

`--to markdown` stays nbconvert's for every notebook, and so does `--to script` (the Elelem
kernel names nbconvert's own exporter in its `language_info`, so a shared notebook converts
where elelem-kernel is not installed). Only nbconvert imports this module (through the
`nbconvert.exporters` entry point).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from jinja2 import DictLoader
from nbconvert.exporters import MarkdownExporter
from traitlets import default
from traitlets.config import Config

#: The template's name; it extends the Markdown template (`index.md.j2`) it sits beside.
NAME = "elelem-markdown.md.j2"

TEMPLATE = """{%- extends 'index.md.j2' -%}
{% block input %}
{%- set fence = cell.source | elelem_fence -%}
{{ fence }}
{%- if 'magics_language' in cell.metadata  -%}
    {{ cell.metadata.magics_language}}
{%- elif 'name' in nb.metadata.get('language_info', {}) -%}
    {{ nb.metadata.language_info.name }}
{%- endif %}
{{ cell.source}}
{{ fence }}
{% endblock input %}
"""


def fence(source: str) -> str:
    """A backtick fence longer than every backtick run in `source` (three at least)."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    return "`" * max(3, longest + 1)


class ElelemMarkdownExporter(MarkdownExporter):
    """nbconvert's Markdown, with input fences that a cell's own backticks cannot close."""

    export_from_notebook = "Markdown (Elelem)"

    @default("extra_loaders")
    def _extra_loaders_default(self) -> list[Any]:
        return [DictLoader({NAME: TEMPLATE})]

    @property
    def default_config(self) -> Config:
        config: Config = super().default_config.copy()
        priority = [t for t in config.NbConvertBase.display_data_priority if t != "text/markdown"]
        config.merge(
            Config({"NbConvertBase": {"display_data_priority": ["text/markdown", *priority]}})
        )
        return config

    @default("template_file")
    def _template_file_default(self) -> str:
        return NAME

    def default_filters(self) -> Iterator[tuple[str, Any]]:
        yield from super().default_filters()
        yield ("elelem_fence", fence)
