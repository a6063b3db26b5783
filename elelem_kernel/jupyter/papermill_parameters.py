"""papermill's parameters in Elelem-kernel notebooks: a `%%py` cell.

papermill writes `-p NAME VALUE` as a cell of code in the notebook's language, with a
translator it picks by kernel name or language. For the Elelem kernel (language "elelem")
it has none, so it stopped with "No parameter translator functions specified". Here the
parameters become Python under a `%%py` line: the kernel runs that as Python, so they land
in the namespace that `%%py` cells and the agent's `python` and `variables` tools share,
and no prompt made of `x = 1` ever reaches the model.

papermill (2.7) reads no entry point for translators, but it loads its `papermill.engine`
entry points when it is imported. So this module is registered as the engine "elelem"
(papermill's own nbclient engine under another name: `--engine elelem` runs exactly as the
default does) and registers the translator as it is imported. It must never raise there:
an error would stop papermill for every notebook.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from elelem_kernel.names import KERNEL_NAME

if TYPE_CHECKING:
    from nbformat import NotebookNode

#: The first line of the injected cell: the Elelem kernel runs the rest as Python.
MAGIC = "%%py"


class ElelemEngine:
    """papermill's nbclient engine, unchanged (papermill calls these as class methods)."""

    @classmethod
    def execute_notebook(
        cls, nb: NotebookNode, kernel_name: str | None, **kwargs: Any
    ) -> NotebookNode:
        done: NotebookNode = _nbclient().execute_notebook(nb, kernel_name, **kwargs)
        return done

    @classmethod
    def nb_kernel_name(cls, nb: NotebookNode, name: str | None = None) -> str:
        return str(_nbclient().nb_kernel_name(nb, name))

    @classmethod
    def nb_language(cls, nb: NotebookNode, language: str | None = None) -> str:
        return str(_nbclient().nb_language(nb, language))


def _nbclient() -> Any:
    from papermill.engines import NBClientEngine

    return NBClientEngine


def register() -> None:
    """Register the translator for the kernel "elelem" (and its language) with papermill."""
    from papermill.translators import PythonTranslator, papermill_translators

    class ElelemTranslator(PythonTranslator):
        """Python assignments under a `%%py` line."""

        @classmethod
        def codify(cls, parameters: dict[str, object], comment: str = "Parameters") -> str:
            return f"{MAGIC}\n{super().codify(parameters, comment)}"

        @classmethod
        def inspect(cls, parameters_cell: NotebookNode) -> list[object]:
            """The parameters of a `%%py` cell tagged "parameters" (`papermill --help-notebook`)."""
            first, _, rest = parameters_cell["source"].lstrip().partition("\n")
            source = rest if first.strip() == MAGIC else parameters_cell["source"]
            return list(super().inspect({**parameters_cell, "source": source}))

    papermill_translators.register(KERNEL_NAME, ElelemTranslator)


# Registered on import, after ElelemEngine exists: importing papermill here loads its engine
# entry points, this module among them, before the import below returns.
try:
    register()
except Exception as error:  # papermill must run for other notebooks whatever happens here
    warnings.warn(
        f"elelem-kernel: papermill parameters for the Elelem kernel are off: {error}",
        stacklevel=1,
    )
