"""Keep credentials out of messages: one way to mask the password of a URL.

Inventory URLs (``postgresql://user:password@host/db``) reach error messages, report
origins and Pulumi outputs; every one of them goes through :func:`mask_url` (or
:func:`mask_urls` for free text such as a database driver's error).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+")


def mask_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (for messages and logs)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable inventory URL>"
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def mask_urls(text: str) -> str:
    """``text`` with the password of every URL in it masked (see :func:`mask_url`)."""
    return _URL_IN_TEXT.sub(lambda m: mask_url(m.group(0)), text)
