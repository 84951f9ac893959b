"""When a refused NetBox request is tried again, and how long to wait first.

NetBox behind a rate limiter answers ``429 Too Many Requests``, and a NetBox restarting
behind its proxy ``503 Service Unavailable``, both with ``Retry-After`` (seconds, or an HTTP
date: RFC 9110 §10.2.3): the request was not carried out, so it is tried again after the
wait the server asked for, up to :data:`RETRY_TOTAL_S` of waiting per request. A
PostgreSQL deadlock inside NetBox (``500`` naming ``deadlock detected``) rolled the request
back, so it is retried too, backing off. So is a GET or DELETE that met a cable end being
deleted by a concurrent request (:data:`VANISHED_END`). Nothing else is: another 5xx may
have half-run.
Each wait is one line on a terminal's stderr (:func:`notice`); a pipe or a log gets none,
so the one-line contract of a failure holds there.
"""

from __future__ import annotations

import sys
import time
from email.utils import parsedate_to_datetime

from fabric_stack.errors import InventoryError, NetBoxHttpError

RETRY_TOTAL_S = 120.0
"""Most seconds one request waits in all for 429/503 answers before the refusal stands."""

MAX_RETRY_AFTER_S = 60.0
"""A longer ``Retry-After`` is not waited for: the refusal is reported (naming the wait)."""

UNSAID_WAIT_S = 2.0
"""Wait after a 429 or 503 without ``Retry-After``."""

DEADLOCK_TRIES = 5
"""Retries of a request NetBox rolled back on a database deadlock (about 30 s in all)."""


VANISHED_END = "'NoneType' object has no attribute '_meta'"
"""NetBox 4.7.3's 500 (``AttributeError``) for a cable whose end was deleted by a concurrent
request while this one read it: ``GET dcim/cables`` loads the cables' CableTermination rows
and then the terminating interfaces in a second query (``Cable.objects.prefetch_related(
'terminations__termination')``, dcim/api/views.py); an interface deleted (with its device)
in between leaves ``termination`` None, and ``GenericObjectSerializer.to_representation``
(netbox/api/serializers/generic.py) calls ``ObjectType.objects.get_for_model(None)``, which
reads ``None._meta``. A bulk DELETE met the same error (netbox-branching enabled; its
traceback was not captured) and is atomic in NetBox (``perform_bulk_destroy``: the whole
batch rolls back), so retrying either changes nothing twice. Seen in a whole-stack ``pulumi
destroy`` with the netbox-branching plugin enabled (its change-diff bookkeeping lengthens
every delete), where cable bundles read their cables while a switch's delete cascades."""

RETRIED_ON_VANISHED_END = ("GET", "DELETE")
"""Methods retried after :data:`VANISHED_END`: a read, and a bulk delete NetBox rolled back."""


def retry_after(text: str, now: float | None = None) -> float | None:
    """Seconds of a ``Retry-After`` value (whole seconds or an HTTP date), or None."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        return float(min(int(text[:12]), 10**9))
    try:
        when = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def wait_before_retry(
    exc: InventoryError, waited: float, deadlocks: int, method: str = "GET"
) -> float | None:
    """Seconds to wait before trying the ``method`` request that raised ``exc`` again; None:
    do not. ``deadlocks``: the rolled-back tries so far (deadlocks and vanished ends)."""
    vanished = method in RETRIED_ON_VANISHED_END and VANISHED_END in str(exc)
    if vanished or "deadlock detected" in str(exc):
        return 0.5 * 2 ** (deadlocks + 1) if deadlocks < DEADLOCK_TRIES else None
    if not isinstance(exc, NetBoxHttpError) or exc.status not in (429, 503) or exc.auth:
        return None
    wait = UNSAID_WAIT_S if exc.retry_after is None else exc.retry_after
    if wait > MAX_RETRY_AFTER_S or waited + wait > RETRY_TOTAL_S:
        return None
    return wait


def notice(text: str) -> None:
    """``text`` as one line on stderr when it is a terminal (a pipe or a log gets nothing)."""
    if sys.stderr.isatty():
        sys.stderr.write(f"{text}\n")
        sys.stderr.flush()


__all__ = [
    "MAX_RETRY_AFTER_S",
    "RETRIED_ON_VANISHED_END",
    "RETRY_TOTAL_S",
    "VANISHED_END",
    "notice",
    "retry_after",
    "wait_before_retry",
]
