"""The workspace tools: files, search, shell, the live Python namespace and notebooks, each
confined to the workspace root and bounded in what it returns. The "workspace" setup adds
them to every new session.
"""
