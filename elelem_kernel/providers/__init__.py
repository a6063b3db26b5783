"""Models: the offline stub, echo and demo providers, and the HTTP ones (anthropic, openai,
responses, ollama) over the one small httpx layer in `http.py`.

Providers know nothing of tools, Jupyter or views: they turn messages into events.
"""
