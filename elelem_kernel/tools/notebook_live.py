"""The notebook tools on the notebook open in the frontend, through a link to it.

The same vocabulary as the file forms (`notebooks.py`): `notebook_read` shows the cells as
the person sees them now (unsaved edits, outputs on screen), `notebook_edit` makes one
change through the frontend's notebook model (the person's undo, saving and real-time
collaboration see it as an edit), offered as a diff in the cell that the person accepts
or rejects unless `ask` is false. The link is anything with
`async request(op, timeout=..., **arguments)` (the kernel's `elelem.notebook` comm); the
frontend bounds what it sends (`clipped` marks a source cut short) and this side bounds
what reaches the model as the file forms do.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from elelem_kernel.tools.extras import Change

from elelem_kernel.errors import ToolError
from elelem_kernel.images import ImageEntry
from elelem_kernel.names import KERNEL_NAME
from elelem_kernel.tools.bounds import unified_diff
from elelem_kernel.tools.cell_outputs import HEAD_OUTPUTS, CellCuts, shorten
from elelem_kernel.tools.changes import MAX_TEXT, outputs_size
from elelem_kernel.tools.declaration import Result
from elelem_kernel.tools.namespace import run_python_async
from elelem_kernel.tools.notebook_disk import (
    CELL_TYPES,
    _text,
    cell_label,
    change_cells,
    find_cell,
    ordinal,
    read_cells,
    summarize_outputs,
)

READ_TIMEOUT = 30.0  #: seconds for the frontend to hand over the cells
#: What the model is told where there is no open notebook to act on.
NOT_REACHABLE = (
    "the open notebook is not reachable here (no JupyterLab >= 4.4 / Notebook >= 7.4 "
    "frontend with the elelem-kernel extension sent this turn); pass path to work on a "
    "notebook file, or use propose_cell to offer the person a cell"
)


class Link(Protocol):
    """The frontend side of the open notebook."""

    cell: str | None

    async def request(self, op: str, timeout: float | None = ..., **arguments: Any) -> Any: ...

    def unchanged_read(self) -> dict[str, object] | None:
        """The turn's last read's answer while the cells' code is unchanged since, or None."""
        ...


async def snapshot(
    link: Link, outputs: bool = True, reuse: bool = False
) -> tuple[NotebookNode, dict[str, object]]:
    """The open notebook as an nbformat node, and what the frontend said about it; with
    `reuse` and no `outputs`, the turn's last read while its code is unchanged."""
    import nbformat

    answer: object = link.unchanged_read() if reuse and not outputs else None
    if answer is None:
        answer = await _ask(link, "read", READ_TIMEOUT, outputs=outputs)
    found = answer.get("cells") if isinstance(answer, dict) else None
    if not isinstance(answer, dict) or not isinstance(found, list):
        raise ToolError("the open notebook sent no cells")
    cells = [_cell(c, outputs) for c in found if isinstance(c, dict)]
    nb = nbformat.from_dict({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    return nb, answer


async def read_open(link: Link, cells: list[int | str] | None, outputs: bool = True) -> Result:
    """`notebook_read` on the open notebook: its cells now, the turn's own cell marked."""
    nb, answer = await snapshot(link, outputs)
    rel = str(answer.get("path") or "the open notebook")
    shown = read_cells(nb, rel, cells, outputs)
    for entry in shown["cells"]:
        if link.cell is not None and entry.get("id") == link.cell:
            entry["this_turn"] = True
        if nb.cells[entry["index"]].metadata.get("clipped"):
            entry["clipped"] = "the source is longer than shown"
    result: Result = {
        "path": rel,
        "open": True,
        "unsaved_changes": bool(answer.get("dirty")),
    }
    result.update(shown)
    if shown.get("_images"):  # its cells show them: the card names them, no second copy
        result["_images"] = [{**image, "shown": "cell"} for image in shown["_images"]]
    result["kernel"] = answer.get("kernel")
    result["note"] = (
        "the notebook as the person sees it now; the cell marked this_turn is the prompt "
        "this turn runs from"
    )
    return result


async def edit_open(link: Link, ask: bool, turn: str | None = None, **change: Any) -> Result:
    """`notebook_edit` on the open notebook: one change, asked as a diff unless `ask` is
    false; the person's decision (and any reason) decides the result."""
    nb, answer = await snapshot(link, outputs=False, reuse=True)  # the page checks `before`
    rel = str(answer.get("path") or "the open notebook")
    before = [
        (c.get("id"), c.cell_type, _text(c.source), bool(c.metadata.get("clipped")))
        for c in nb.cells
    ]
    labels = {c.get("id"): cell_label(c, i) for i, c in enumerate(nb.cells)}
    turn_at = next((i for i, c in enumerate(nb.cells) if c.get("id") == link.cell), None)
    summary = change_cells(nb, rel, **change)
    action, index = summary["action"], summary["cell"]["index"]
    target_id = summary["cell"]["id"]
    label = labels.get(target_id) or f"a new cell, the {ordinal(index + 1)}"
    where = "above" if turn_at is None or index <= turn_at else "below"
    request: EditRequest = {
        "action": action,
        "ask": ask,
        "turn": turn,
        "label": label,
        "where": where,
    }
    summary["cell"]["shown_as"] = label
    if action == "insert":
        diff = _insert_request(request, nb, index, before)
    else:
        old = _editable(before, target_id, link, label)
        diff = _change_request(request, nb, index, target_id, old)
    decision = await _ask(link, "edit", None, **request)
    decision = decision if isinstance(decision, dict) else {}
    if decision.get("decision") == "gone":  # the page showing the diff was closed or reloaded
        return {"error": str(decision.get("reason") or "declined"), "declined": True}
    if decision.get("decision") == "rejected":
        reason = str(decision.get("reason") or "").strip()[:2_000]
        return {
            "error": "the person declined this edit"
            + (f": {reason}" if reason else " (no reason given)")
            + "; the notebook is unchanged",
            "declined": True,
        }
    if decision.get("decision") not in ("accepted", "applied"):
        raise ToolError("the open notebook did not apply the edit")
    undo = _undo_entry(request, target_id, index, before)
    _keep_outputs(undo, decision)
    return {
        "_undo": undo,
        **summary,
        "path": rel,
        "open": True,
        "decision": decision["decision"],
        "cells": len(nb.cells),
        "diff": diff,
    }


class EditRequest(TypedDict, total=False):
    """What `notebook_edit` asks the open notebook to do (shown to the person as a diff)."""

    action: str
    ask: bool
    turn: str | None
    label: str
    where: str
    index: int
    after: str | None
    new_id: str | None
    cell_type: str
    source: str
    cell: str | None
    before: str
    to: int


#: A cell of the open notebook before the edit: id, type, source, whether it was clipped.
Before = tuple[str | None, str, str, bool]


def _editable(before: list[Before], target_id: str | None, link: Link, label: str) -> Before:
    """The cell to change as it was; ToolError when it cannot be changed from here."""
    old = next(b for b in before if b[0] == target_id)
    if old[3]:
        raise ToolError(
            f"{label} is too long to edit through the notebook view; pass source "
            "to a smaller cell or edit the file with path"
        )
    if link.cell is not None and target_id == link.cell:
        raise ToolError("that is the cell this turn runs from; it cannot be changed now")
    return old


def _insert_request(
    request: EditRequest, nb: NotebookNode, index: int, before: list[Before]
) -> str:
    """Complete the frontend's request for an inserted cell; the diff shown for it."""
    made = nb.cells[index]
    anchor = before[index - 1][0] if index > 0 else None
    request["index"], request["after"], request["new_id"] = index, anchor, made.get("id")
    request["cell_type"], request["source"] = made.cell_type, _text(made.source)
    label = f"new {made.cell_type} cell, the {ordinal(index + 1)}"
    return unified_diff("", _text(made.source), label)


def _change_request(
    request: EditRequest, nb: NotebookNode, index: int, target_id: str | None, old: Before
) -> str:
    """Complete the frontend's request for a deleted, moved or changed cell; the diff
    shown for it."""
    _, old_type, old_source, _ = old
    request["cell"], request["before"] = target_id, old_source
    label = request["label"]
    if request["action"] == "delete":
        return unified_diff(old_source, "", f"{label} (deleted)")
    if request["action"] == "move":
        request["to"] = index
        return f"move {label} to be the {ordinal(index + 1)} cell"
    changed = nb.cells[index]
    request["source"], request["cell_type"] = _text(changed.source), changed.cell_type
    diff = unified_diff(old_source, _text(changed.source), label)
    if changed.cell_type != old_type:
        diff = f"cell type {old_type} -> {changed.cell_type}\n" + diff
    return diff


def _undo_entry(
    request: EditRequest, target_id: str | None, index: int, before: list[Before]
) -> Change:
    """What `/undo` needs to put the cell back as it was."""
    action = request["action"]
    undo: Change = {"kind": "cell", "action": action, "cell": target_id, "index": index}
    undo["label"] = request["label"]
    if action != "insert":
        from_index = next(i for i, b in enumerate(before) if b[0] == target_id)
        undo["cell_type"] = before[from_index][1]
        undo["from_index"] = from_index
    undo["before"] = None if action == "insert" else request.get("before")
    undo["after"] = None if action in ("delete", "move") else request.get("source")
    return undo


def _keep_outputs(undo: Change, decision: Mapping[str, object]) -> None:
    """Keep the changed code cell's outputs from before the edit, as the frontend sent
    them, so `/undo` puts them back with the source (bounded: too large, none kept)."""
    outputs = decision.get("outputs_before")
    if isinstance(outputs, list) and outputs_size(outputs) <= MAX_TEXT:
        undo["outputs"] = outputs
        count = decision.get("execution_count_before")
        undo["execution_count"] = count if isinstance(count, int) else None


def _cell(raw: Mapping[str, object], outputs: bool) -> dict[str, object]:
    """A frontend cell as a valid nbformat cell (only the fields the tools read)."""
    kind = raw.get("cell_type") if raw.get("cell_type") in CELL_TYPES else "raw"
    cell: dict[str, object] = {
        "cell_type": kind,
        "id": str(raw.get("id") or ""),
        "source": raw.get("source") if isinstance(raw.get("source"), str) else "",
        "metadata": {"clipped": True} if raw.get("clipped") else {},
    }
    if kind == "code":
        count = raw.get("execution_count")
        cell["execution_count"] = count if isinstance(count, int) else None
        found = raw.get("outputs") if outputs else None
        cell["outputs"] = (
            [o for o in found if isinstance(o, dict)] if isinstance(found, list) else []
        )
    return cell


async def _ask(link: Link, op: str, timeout: float | None, **arguments: Any) -> Any:
    """The frontend's answer; `ToolError` with its reason when there is none."""
    try:
        return await link.request(op, timeout=timeout, **arguments)
    except ToolError:
        raise
    except Exception as e:  # FrontendGone, or the frontend's own refusal
        raise ToolError(str(e)) from None


@dataclass(frozen=True)
class RunPlan:
    """Code cells of the open notebook to run, read once before the person is asked, so
    that what the approval shows is what runs: (index, id, source shown, code run) each."""

    path: str
    cells: tuple[tuple[int, str, str, str], ...]
    #: each cell as the person sees it (`cell [5]`, `the 6th cell`), in the same order
    labels: tuple[str, ...] = ()

    def label(self, position: int) -> str:
        return self.labels[position] if position < len(self.labels) else "a cell"


async def plan_open(link: Link, cells: list[int | str] | None) -> RunPlan:
    """The code cells `notebook_run` would run on the open notebook, as it is now (all of
    them but prompt cells when `cells` is None); `ToolError` when there are none."""
    nb, answer = await snapshot(link, outputs=False, reuse=True)
    rel = str(answer.get("path") or "the open notebook")
    elelem_kernel = answer.get("kernel") == KERNEL_NAME  # every cell a prompt but %%py ones
    chosen = sorted({find_cell(nb, c, rel) for c in cells}) if cells else range(len(nb.cells))
    plan, labels = [], []
    for i in chosen:
        cell = nb.cells[i]
        if cell.cell_type != "code":
            continue
        source = _text(cell.source)
        code = runnable(source, elelem_kernel)
        if code is None or cell.get("id") == link.cell:
            if cells:
                raise ToolError(
                    f"{cell_label(cell, i)} is a prompt cell; the agent never runs prompts (only code"
                    + (" cells starting with %%py" if elelem_kernel else " cells")
                    + ")"
                )
            continue
        if cell.metadata.get("clipped"):
            raise ToolError(f"{cell_label(cell, i)} is too long to run from here")
        plan.append((i, str(cell.get("id") or ""), source, code))
        labels.append(cell_label(cell, i))
    if not plan:
        raise ToolError("no code cells to run" + (f" among cells {cells}" if cells else ""))
    return RunPlan(rel, tuple(plan), tuple(labels))


def describe_plan(plan: RunPlan, timeout: float) -> str:
    """The approval preview of `plan`: each cell's whole source, as it will run."""
    head = f"run {len(plan.cells)} cell(s) of {plan.path} in your kernel's namespace"
    parts = [f"{head} ({timeout:g} s per cell), in this order, stopping at the first error:"]
    for position, (_, _, source, _) in enumerate(plan.cells):
        parts.append(f"--- {plan.label(position)} ---\n{source.rstrip()}")
    return "\n\n".join(parts)


async def run_open(
    link: Link,
    namespace: dict[str, object],
    cells: list[int | str] | None,
    timeout: float,
) -> Result:
    """`notebook_run` on the open notebook, read and run at once (`plan_open`, `run_plan`)."""
    return await run_plan(await plan_open(link, cells), link, namespace, timeout)


async def run_plan(
    plan: RunPlan, link: Link, namespace: dict[str, object], timeout: float
) -> Result:
    """Run the cells of `plan` (their code as read, never read again) in the person's
    namespace, in notebook order, stopping at the first error; their outputs go back to
    the model and into the cells (with an execution count, as if the person ran them)."""
    ran: list[Result] = []
    result: Result = {"path": plan.path, "open": True, "cells": ran}
    pictures: list[ImageEntry] = []
    for index, cell_id, _, code in plan.cells:
        try:
            running = run_python_async(namespace, _python(code), publish=False)
            outcome = await asyncio.wait_for(running, timeout)
        except TimeoutError:
            outcome = {
                "error": f"TimeoutError: the cell ran longer than {timeout:g} s and was stopped"
            }
        count = _next_count(namespace)
        outputs = _outputs(outcome, count)
        await _ask(
            link, "outputs", READ_TIMEOUT, cell=cell_id, outputs=outputs, execution_count=count
        )
        entry = {"index": index, "id": cell_id, "execution_count": count}
        entry["shown_as"] = f"cell [{count}]" if count is not None else plan.label(len(ran))
        entry["outputs"] = summarize_outputs(outputs, pictures)
        ran.append(entry)
        if "error" in outcome:
            result["error"] = (
                f"{entry['shown_as']} raised {outcome['error']}; later cells were not run"
            )
            result["not_run"] = [c[0] for c in plan.cells[len(ran) :]]
            break
    result["note"] = "Python variables the cells changed cannot be restored by /undo"
    if pictures:  # the cells show them: the card names them, the record keeps no copy
        result["_images"] = [{**p, "shown": "cell"} for p in pictures]
    return result


def _jsonable(data: Mapping[str, object]) -> dict[str, object]:
    """A display's mime bundle as JSON: bytes (a PNG from a formatter) as base64, text as
    text, anything else by its repr."""
    out: dict[str, object] = {}
    for mime, value in data.items():
        if isinstance(value, bytes):
            text = mime.startswith("text/") or mime.endswith(("+xml", "json"))
            value = value.decode("utf-8", "replace") if text else base64.b64encode(value).decode()
        elif not isinstance(value, (str, dict, list, int, float, bool)) and value is not None:
            value = repr(value)
        out[str(mime)] = value
    return out


def runnable(source: str, elelem_kernel: bool) -> str | None:
    """The code a cell runs, or None for a prompt cell (never run by the agent)."""
    first, _, rest = source.lstrip().partition("\n")
    if elelem_kernel:
        return rest if first.strip() == "%%py" else None
    if first.strip().startswith(("%%elelem", "%elelem")):
        return None
    return source


def _python(code: str) -> str:
    """IPython syntax (magics, `!commands`) as the plain Python that runs it."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return code
    return TransformerManager().transform_cell(code)


def _next_count(namespace: dict[str, object]) -> int | None:
    """An execution count for a cell the agent ran: the one after the running prompt
    cell's, which the shell then skips (so the person's next cell gets the one after)."""
    shell = namespace.get("get_ipython")
    ip = shell() if callable(shell) else None
    count = getattr(ip, "execution_count", None)
    if ip is None or not isinstance(count, int):
        return None
    ip.execution_count = count + 1
    return count + 1


def _outputs(outcome: Result, count: int | None) -> list[dict[str, object]]:
    """What the python run printed, displayed and returned, as nbformat outputs."""
    outputs: list[dict[str, object]] = []
    for name in ("stdout", "stderr"):
        if outcome.get(name):
            outputs.append({"output_type": "stream", "name": name, "text": outcome[name]})
    cuts = CellCuts()
    for data in (outcome.get("_displays") or [])[:HEAD_OUTPUTS]:
        shown: dict[str, object] = {
            "output_type": "display_data",
            "data": _jsonable(data),
            "metadata": {},
        }
        shorten(shown, cuts)
        outputs.append(shown)
    if "value" in outcome:
        outputs.append(
            {
                "output_type": "execute_result",
                "execution_count": count,
                "data": {"text/plain": outcome["value"]},
                "metadata": {},
            }
        )
    if "error" in outcome:
        ename, _, evalue = str(outcome["error"]).partition(": ")
        trace = outcome.get("traceback") or ""
        lines = trace.splitlines() if isinstance(trace, str) else [str(t) for t in trace]
        outputs.append(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": lines}
        )
    return outputs
