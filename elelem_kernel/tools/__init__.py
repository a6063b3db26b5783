"""The workspace tools: files, search, shell, the live Python namespace and notebooks, each
confined to the workspace root and bounded in what it returns. Each module declares its
own tools (`declaration.py`); the composition root's "workspace" setup adds them to every
new session.
"""
