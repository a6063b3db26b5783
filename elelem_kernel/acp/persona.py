"""@Elelem in jupyter-ai 3's chat: a persona that runs `elelem-kernel acp`.

Registered under the `jupyter_ai.personas` entry point, which only jupyter-ai's persona
manager loads, so it is active exactly when jupyter-ai (with jupyter-ai-acp-client) is
installed, and needs no configuration: the chat starts the agent with this Python, in
the chat's folder, and talks ACP to it like to any other agent persona.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
from jupyter_ai_persona_manager import PersonaDefaults

AVATAR = Path(__file__).with_name("elelem.svg")


class ElelemAcpPersona(BaseAcpPersona):
    """The Elelem agent as a chat persona."""

    def __init__(self, *args: Any, **kwargs: Any):
        command = [sys.executable, "-m", "elelem_kernel.cli", "acp"]
        super().__init__(*args, executable=command, **kwargs)

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name="Elelem",
            description="The Elelem notebook agent (elelem-kernel) over ACP: files, shell, "
            "Python and notebooks, with approvals in the chat.",
            avatar_path=str(AVATAR),
            system_prompt="unused",
        )
