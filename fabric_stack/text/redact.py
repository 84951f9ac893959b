"""Keep credentials out of messages: one way to mask the secrets of a URL.

Inventory URLs (``postgresql://user:password@host/db``, or libpq's
``postgresql://host/db?user=fab&password=…``) and NetBox URLs
(``netbox+https://:TOKEN@host``) reach error messages, report origins and Pulumi
outputs; every one of them goes through :func:`mask_url` (or :func:`mask_urls` for
free text such as a database driver's error). Both the userinfo password and any
query parameter that carries a secret are replaced by ``***``.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

# A scheme starts only where no scheme character precedes it: otherwise a long run of
# letters without "://" is tried from each of its positions (quadratic: 66 s of CPU for a
# 200 KB line). With the look-behind each run is tried once, so masking is linear.
# (The run may start with digits or "+.-", which :func:`_mask_match` keeps as they are.)
_URL_IN_TEXT = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z0-9+.-]+://[^\s'\"]+")

SECRET_PARAMS = frozenset({"password", "passwd", "pass", "pwd", "sslpassword", "token", "secret"})
"""Query parameters whose value is a secret (libpq takes ``password`` and ``sslpassword``)."""

_SECRET_TEXT = re.compile(r"(?i)([?&;])(" + "|".join(sorted(SECRET_PARAMS)) + r")=[^&;#]*")

_SECRET_QUERY = re.compile(r"(?i)(^|[&;])(" + "|".join(sorted(SECRET_PARAMS)) + r")=[^&;#]*")


# libpq's keyword/value form (``host=db user=fab password='s 3'``: spaces around "=", a
# value quoted with '…' and backslash escapes) and ``--password=…`` in free text.
_SECRET_KEYWORD = re.compile(
    r"(?i)(?<![A-Za-z0-9_])(" + "|".join(sorted(SECRET_PARAMS)) + r")(\s*=\s*)(?!\*\*\*)"
    r"('(?:[^'\\]|\\.)*'?|[^\s'\"&;#]*)"
)


def mask_keywords(text: str) -> str:
    """``text`` with the value of every ``password=…`` (and the other secret keywords of
    :data:`SECRET_PARAMS`) replaced by ``***``, as libpq's keyword strings write them."""
    return _SECRET_KEYWORD.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


def mask_url(url: str) -> str:
    """The URL with any password or token (userinfo or query) replaced by ``***``; a libpq
    keyword string (``host=db password=…``) with its secret keywords masked."""
    if "://" not in url:
        return mask_keywords(url)
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # a bad IPv6 literal or port: mask by pattern, keep the rest readable
        head, sep, rest = url.partition("://")
        if sep and "@" in rest.split("/", 1)[0]:
            rest = "***@" + rest.split("@", 1)[1]
        return head + sep + _SECRET_TEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}=***", rest)
    netloc = parts.netloc
    if password is not None and "@" in netloc:
        # Everything after the first ':' of the userinfo is the password, encoded or not.
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}"
    query = _SECRET_QUERY.sub(lambda m: f"{m.group(1)}{m.group(2)}=***", parts.query)
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def mask_urls(text: str) -> str:
    """``text`` with the secrets of every URL in it masked (see :func:`mask_url`), and of
    every ``password=…`` keyword outside one (:func:`mask_keywords`)."""
    return mask_keywords(_URL_IN_TEXT.sub(_mask_match, text))


def _mask_match(m: re.Match[str]) -> str:
    # Punctuation that ends a sentence ("…/db: cannot connect") is not part of the URL.
    text = m.group(0)
    start = next((i for i, c in enumerate(text) if c.isalpha()), len(text))
    url = text[start:]  # a scheme starts with a letter: "1postgresql://…" is "1" and a URL
    core = url.rstrip(":,;.)")
    return text[:start] + mask_url(core) + url[len(core) :]


_SECRET_NAME = re.compile(r"(?i)TOKEN|PASSW|SECRET|CREDENTIAL|(?<![A-Z])KEY|APIKEY|AUTH")
"""Environment variable names whose value is a secret (NETBOX_TOKEN, PGPASSWORD, …)."""

_TOKEN_LIKE = re.compile(r"nbt_|[0-9a-fA-F]{32}|[A-Za-z0-9+/_=-]{40}")
"""A value that looks like an API token (NetBox v2 ``nbt_…``, 32+ hex, 40 base64)."""


def echo_env(name: str, value: str, limit: int = 40) -> str:
    """``NAME='value'`` for an error line, the value masked when it may be a secret.

    A value read from the environment is echoed back so the user sees which setting was
    wrong; a secret pasted into the wrong variable (a token in
    ``FABRIC_STACK_NETBOX_TIMEOUT``) must not be. The value is ``***`` when the name is a
    secret's (``*TOKEN*``, ``*PASSWORD*``, …) or the value looks like a token; URLs in it
    have their passwords masked (:func:`mask_urls`); at most ``limit`` characters.
    """
    if _SECRET_NAME.search(name) or _TOKEN_LIKE.search(value):
        return f"{name}=***"
    return f"{name}={mask_urls(value[:limit])!r}"
