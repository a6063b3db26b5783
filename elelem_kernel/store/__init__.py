"""The notebook as the store: turn records read from notebooks and rebuilt into
conversations, turns appended as cells, the ACP sessions' notebooks, what proves a record
was written by this person's sessions, and the person's own data folder.

The fronts use `store.notebook` (and `store.acp_sessions`); nothing here knows Jupyter,
a view or a model.
"""
