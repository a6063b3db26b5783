"""The composition root: the one place that knows every part and puts them together.

`bundled` registers what ships with the package (the providers, the workspace tools, the
MCP servers) in the registry the way plugins register theirs; `workspace_tools` collects
the tools each module of `tools/` declares into a session's toolbox; `sessions` builds a
ready session; `turn_flags` declares a turn's flags for the two fronts that parse them (the
command line and the `%%elelem` magic). Nothing below this package imports it.
"""
