"""What `elelem-kernel ask -p echo hi` imports, pinned as `%load_ext` is
(tests/jupyter/test_magics.py): an echo turn needs the parser, a session, its toolbox's
declarations and the terminal renderer, and nothing a review, an MCP server, a notebook or
the python tool needs. A module that joins this path fails here: import it where it is
used (a lazy import, with the comment that says why), or add it below if the turn uses it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, sys
before = set(sys.modules)
sys.argv = ["elelem-kernel", "ask", "-p", "echo", "hi"]
from elelem_kernel.cli import main
try:
    main()
except SystemExit as end:
    assert not end.code, end.code
print(json.dumps(sorted(set(sys.modules) - before)))
"""

#: The package's modules an echo turn imports, exactly.
PACKAGE = {
    "elelem_kernel",
    "elelem_kernel._version",
    "elelem_kernel.agent",
    "elelem_kernel.agent.accounts",
    "elelem_kernel.agent.approval",
    "elelem_kernel.agent.blocks",
    "elelem_kernel.agent.budget",
    "elelem_kernel.agent.catalog",
    "elelem_kernel.agent.command_table",
    "elelem_kernel.agent.commands",
    "elelem_kernel.agent.context",
    "elelem_kernel.agent.fitting",
    "elelem_kernel.agent.front",
    "elelem_kernel.agent.policy",
    "elelem_kernel.agent.conversation",
    "elelem_kernel.agent.media",
    "elelem_kernel.agent.model_facts",
    "elelem_kernel.agent.pricing",
    "elelem_kernel.agent.record",
    "elelem_kernel.agent.registry",
    "elelem_kernel.schema_check",
    "elelem_kernel.agent.session",
    "elelem_kernel.agent.system_prompt",
    "elelem_kernel.agent.toolbox",
    "elelem_kernel.agent.toolset",
    "elelem_kernel.agent.trust",
    "elelem_kernel.agent.turn",
    "elelem_kernel.agent.usage",
    "elelem_kernel.agent.window_commands",
    "elelem_kernel.assembly",
    "elelem_kernel.assembly.bundled",
    "elelem_kernel.assembly.sessions",
    "elelem_kernel.assembly.turn_flags",
    "elelem_kernel.assembly.workspace_tools",
    "elelem_kernel.cli",
    "elelem_kernel.cli.ask_command",
    "elelem_kernel.cli.parser",
    "elelem_kernel.cli.session_from_flags",
    "elelem_kernel.cli.signals",
    "elelem_kernel.errors",
    "elelem_kernel.events",
    "elelem_kernel.findings",
    "elelem_kernel.images",
    "elelem_kernel.mcp",
    "elelem_kernel.mcp.attachment",
    "elelem_kernel.mcp.config",
    "elelem_kernel.names",
    "elelem_kernel.options",
    "elelem_kernel.providers",
    "elelem_kernel.providers.echo",
    "elelem_kernel.redaction",
    "elelem_kernel.render",
    "elelem_kernel.render.call_text",
    "elelem_kernel.render.footer",
    "elelem_kernel.render.terminal_view",
    "elelem_kernel.store",
    "elelem_kernel.store.data_folder",
    "elelem_kernel.store.day_spend",
    "elelem_kernel.store.record_format",
    "elelem_kernel.sync",
    "elelem_kernel.text",
    "elelem_kernel.tokens",
    "elelem_kernel.tools",
    "elelem_kernel.tools.bounds",
    "elelem_kernel.tools.capture",
    "elelem_kernel.tools.changes",
    "elelem_kernel.tools.children",
    "elelem_kernel.tools.declaration",
    "elelem_kernel.tools.file_tools",
    "elelem_kernel.tools.globs",
    "elelem_kernel.tools.listing",
    "elelem_kernel.tools.namespace",
    "elelem_kernel.tools.notebook_tools",
    "elelem_kernel.tools.notebook_disk",
    "elelem_kernel.tools.protected",
    "elelem_kernel.tools.pyregex",
    "elelem_kernel.tools.regular_files",
    "elelem_kernel.tools.search",
    "elelem_kernel.tools.shell",
    "elelem_kernel.tools.workspace",
    "elelem_kernel.visible",
}

#: Everything else it may import beyond what Python starts with (3.11's names; private
#: modules and asyncio's parts are left out, as they differ between versions). Not among
#: them: email, importlib.metadata and .resources, zipfile, csv, calendar, html, shlex,
#: httpx; nor tempfile, random, hashlib, ctypes (only a tool that writes, hashes or stops a
#: python call needs them) or uuid (a turn's id is os.urandom's).
OTHERS = {
    *("argparse", "array", "ast", "asyncio", "atexit", "base64", "binascii", "bz2"),
    *("collections.abc", "concurrent", "concurrent.futures", "concurrent.futures.thread"),
    *("contextlib", "contextvars", "copy", "dataclasses", "datetime", "dis"),
    *("errno", "fcntl", "fnmatch", "gettext", "heapq", "importlib"),
    *("importlib.machinery", "inspect", "ipaddress", "linecache", "locale"),
    *("logging", "lzma", "math", "ntpath", "opcode", "pathlib", "platform", "queue"),
    *("select", "selectors", "shutil", "signal", "socket", "ssl", "string", "struct"),
    *("subprocess", "textwrap", "threading", "token", "tokenize", "traceback"),
    *("typing", "typing.io", "typing.re", "unicodedata", "urllib", "urllib.parse"),
    *("warnings", "weakref", "zlib"),
}


def imported_by_an_echo_turn(tmp_path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
    env["HOME"] = str(tmp_path)  # no plugins, trust store or MCP config of the person's
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_echo_turn_imports_only_what_it_uses(tmp_path):
    modules = imported_by_an_echo_turn(tmp_path)
    ours = {m for m in modules if m.split(".")[0] == "elelem_kernel"}
    assert sorted(ours - PACKAGE) == [], "new on the CLI's path"
    assert sorted(PACKAGE - ours) == [], "no longer on the CLI's path: take it off the list"
    others = {
        "asyncio" if m.startswith("asyncio.") else m
        for m in modules
        if m.split(".")[0] != "elelem_kernel" and not m.startswith("_") and "._" not in m
    }
    assert sorted(others - OTHERS) == []
