"""The agent: sessions and their turn loop, conversations and records, the toolbox, slash
commands, approvals and the registry that plugins configure.

It knows nothing of Jupyter, widgets or HTTP: it sees models through the Provider protocol
(`elelem_kernel.events`), tools through the toolbox, and views through a renderer callable.
"""
