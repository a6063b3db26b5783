"""Views of a turn: the terminal and `--json` renderers, the live widget, and the frozen
static output (HTML, Markdown, plain text) that a notebook keeps.

Views turn block events and records into something to read; they never call a model or run
a tool.
"""
