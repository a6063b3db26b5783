"""MCP tool servers: the tools people configured in `.mcp.json`, offered to the agent.

`config` reads the files, `hub` runs the servers (each one's client session lives on one
background event loop for the life of the process, its `connection`), `tools` turns their
tools into toolbox tools named `mcp__SERVER__TOOL`, and `attachment` keeps a session's
toolbox in step with them (the composition root attaches one to every session). Nothing
here is imported until a session is set up, and the `mcp` SDK only when a server is
configured.
"""
