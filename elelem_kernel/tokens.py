"""The token estimate: how many tokens a request's messages and tools make, before any
server counted them.

One estimate for every part that needs one (the context meter, compaction, budgets, the
usage of a server that reports none, the demo model's own counts), so they agree.
Conservative, since a tokenizer splits digits and non-Latin text finer than prose:
`TEXT_CHARS` characters a token, digits `DIGIT_CHARS`, other scripts one each; an image
by its pixels (`images.entry_tokens`), not its base64.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from elelem_kernel.images import entry_tokens

#: Characters per estimated token: prose and code; digits (tokenizers split numbers into
#: single digits or groups of up to three); anything outside ASCII counts as a token.
TEXT_CHARS, DIGIT_CHARS = 3.5, 1.5


def estimate(
    messages: Sequence[Mapping[str, object]], tools: Sequence[Mapping[str, object]] | None = None
) -> int:
    """Estimated tokens of a request: its messages' and tools' JSON, counted conservatively,
    and each image a message carries by its pixels, not its base64."""
    texts, pictures = [], 0
    for m in messages:
        images = m.get("images")
        if images:
            found = images if isinstance(images, (list, tuple)) else []
            pictures += sum(entry_tokens(e) for e in found if isinstance(e, dict))
            m = {k: v for k, v in m.items() if k != "images"}
        texts.append(json.dumps(m, ensure_ascii=False, default=str))
    if tools:
        texts.append(json.dumps(tools, ensure_ascii=False))
    tokens = 0.0
    for text in texts:
        ascii_part = text.encode("ascii", "ignore")  # digits counted in one pass, not ten
        digits = len(ascii_part) - len(ascii_part.translate(None, b"0123456789"))
        wide = len(text) - len(ascii_part)
        tokens += (len(text) - digits - wide) / TEXT_CHARS + digits / DIGIT_CHARS + wide
    return int(-(-tokens // 1)) + pictures
