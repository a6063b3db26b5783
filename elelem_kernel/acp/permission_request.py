"""The ACP approval channel: `session/request_permission` with the card's own preview.

The call's `tool_call` update is sent first (ACP's turn flow: the call, then the
question about it); then the client is shown the call (title, kind, the file it touches),
exactly what will run as the notebook's card and the terminal show it (the tool's
preview, with the CAUTION line of a sensitive call), and for file changes the diff. Options: allow once, allow always (not
offered for a sensitive call, which is asked every time) and reject once. A client that
cancels the request, answers with an unknown option or fails answers "no".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from elelem_kernel.acp.messages import (
    PermissionKind,
    PermissionOption,
    ToolCall,
    ToolContent,
    text_content,
)
from elelem_kernel.acp.updates import Updates, acp_kind, fenced, title
from elelem_kernel.agent.approval import ApprovalRequest, Decision, decision_for

if TYPE_CHECKING:
    from elelem_kernel.acp.client import AcpClient

OPTIONS: dict[str, tuple[str, PermissionKind]] = {
    "allow": ("Allow once", "allow_once"),
    "always": ("Allow always", "allow_always"),
    "deny": ("Reject", "reject_once"),
}

log = logging.getLogger("elelem_kernel.acp")


class AcpApprover:
    """Asks the ACP client; `updates` is the running turn's view (for its diffs)."""

    def __init__(self, client: AcpClient, session_id: str, updates: Callable[[], Updates | None]):
        self.client = client
        self.session_id = session_id
        self.updates = updates

    async def approve(self, request: ApprovalRequest) -> Decision:
        """Ask the client and return its answer."""
        content: list[ToolContent] = [text_content(fenced(request.preview))]
        view = self.updates()
        if view is not None:
            await view.flush()  # the client knows the call before it is asked about it
        watched = view.calls.get(request.id) if view is not None else None
        diff = view.diff_before(request.id) if view is not None else None
        if diff is not None:
            content.insert(0, diff)
        call: ToolCall = {
            "toolCallId": view.client_id(request.id) if view is not None else request.id,
            "title": title(request.name, request.arguments),
            "kind": watched.kind if watched else acp_kind(request.name, request.kind),
            "status": "pending",
            "content": content,
            "rawInput": request.arguments,
        }
        locations = view.locations(watched) if view is not None and watched else None
        if locations is not None:
            call["locations"] = locations
        offered = [d for d in OPTIONS if not (d == "always" and request.sensitive)]
        options: list[PermissionOption] = [
            {"optionId": d, "name": OPTIONS[d][0], "kind": OPTIONS[d][1]} for d in offered
        ]
        try:
            chosen = await self.client.request_permission(self.session_id, call, options)
        except Exception as e:  # a client that cannot ask: the call does not run
            log.warning("permission request for %s failed: %s", request.name, e)
            return "deny"
        decision = decision_for(chosen) if chosen is not None else None
        if decision and chosen in offered:
            return decision
        return "deny"
