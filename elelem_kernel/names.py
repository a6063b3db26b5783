"""The names Jupyter knows elelem-kernel by, each spelled once.

A leaf: the kernel, its kernelspec install, the notebooks the CLI writes, the views that
freeze a turn and the readers that restore one use these from every layer. (The JupyterLab
extension spells them again in TypeScript: `labextension/src`.)
"""

from __future__ import annotations

#: The Elelem kernel's name: its kernelspec, its `implementation` and its language
#: (`language_info.name`) are all called this; a notebook naming either is an Elelem notebook.
KERNEL_NAME = "elelem"
#: What the launcher and the notebook's kernel picker show for the Elelem kernel.
KERNEL_DISPLAY_NAME = "Elelem"
#: The key under which a turn's frozen output carries its record: `metadata["elelem"]`.
RECORD_KEY = "elelem"
