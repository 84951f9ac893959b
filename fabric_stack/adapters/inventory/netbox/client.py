"""A small NetBox REST client (standard library only): token auth, pagination, bulk writes.

NetBox's list endpoints take a JSON list for bulk create (POST), bulk update
(PATCH, each item with its ``id``) and bulk delete (DELETE, a list of
``{"id": …}``); each bulk request is one database transaction on the server, so
a killed client never leaves half a request applied. Tokens: a v2 token
(``nbt_KEY.SECRET``, NetBox ≥ 4.5) is sent as ``Bearer``, a legacy 40-character
v1 token as ``Token``. Every failure is an :class:`InventoryError` of one line
that never contains the token.

:class:`~.fake.FakeNetBox` is an in-memory stand-in with the same interface for fast
unit tests; the tests against a real NetBox (``-m netbox``) are the proof.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import quote, urlencode, urlsplit

from fabric_stack.adapters.inventory.netbox.branching import BRANCH_HEADER, branch_schema
from fabric_stack.adapters.inventory.netbox.http import (
    READ_TIMEOUT_S,
    WRITE_TIMEOUT_S,
    Answer,
    Budget,
    check_base,
    check_same_origin,
    check_token,
    decode,
    exchange,
    shown,
)
from fabric_stack.adapters.inventory.netbox.retry import (
    MAX_RETRY_AFTER_S,
    VANISHED_END,
    notice,
    retry_after,
    wait_before_retry,
)
from fabric_stack.adapters.inventory.netbox.shapes import check_objects
from fabric_stack.errors import InventoryError, NetBoxHttpError
from fabric_stack.spec.model import MAX_GPUS

PAGE = 1000
"""Objects per GET page (NetBox's MAX_PAGE_SIZE defaults to 1000)."""

CHUNK = 500
"""Objects per bulk write: enough to amortise a request, few enough for its timeout."""

DELETE_RETRY_S = (1.0, 3.0, 10.0)
"""Waits before a refused bulk DELETE whose objects are all still there is tried again."""

MAX_OBJECTS = 8 * MAX_GPUS
"""Most objects one list read accepts: the largest fabric the tool plans (``MAX_GPUS``) has
fewer than eight cables, interfaces or addresses per GPU. A ``count`` above it, or more
pages than the count needs, is not a real answer (a pagination that never ends)."""

Query = Mapping[str, str | int | Sequence[str | int]]

FIELDS = {
    "dcim/cables": "id,label,status,type,length,length_unit,a_terminations,b_terminations,"
    "custom_fields",
    "dcim/devices": "id,name,site,role,device_type,rack,status,custom_fields",
    "dcim/interfaces": "id,name,device,type,cable,custom_fields",
    "ipam/prefixes": "id,prefix,status,description,scope_type,scope_id,vlan,custom_fields",
    "ipam/vlans": "id,vid,name,status,site,custom_fields",
    "dcim/sites": "id,name,slug,status,custom_fields",
}
"""Fields read per endpoint (NetBox's ``?fields=``): serializing a full cable costs NetBox
about ten times more than these fields (measured: 50 cables 4.4 s full, 0.7 s selected)."""


def _written(endpoint: str, objs: Sequence[Mapping[str, Any]]) -> str:
    """``endpoint/?fields=…`` naming the written keys: NetBox then answers with those only
    (the selection also limits what it accepts, so it must cover every written key)."""
    keys = sorted({k for o in objs for k in o} | {"id"})
    return f"{endpoint.strip('/')}/?fields={','.join(keys)}"


class NetBoxApi(Protocol):
    """What the NetBox inventory needs of a client (the real one and the fake)."""

    def select(self, endpoint: str, query: Query | None = None) -> list[dict[str, Any]]:
        """Every object of ``endpoint`` (``dcim/devices``) matching ``query``, all pages."""
        ...

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Bulk create; returns the created objects."""
        ...

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Bulk partial update (each with ``id``); returns the updated objects."""
        ...

    def delete(self, endpoint: str, ids: Iterable[int]) -> None:
        """Bulk delete by id (ids already gone are ignored)."""
        ...

    def count(self, endpoint: str, query: Query | None = None) -> int:
        """How many objects of ``endpoint`` match ``query``."""
        ...


def split_netbox_url(url: str) -> tuple[str, str]:
    """(API base ``http(s)://host[:port][/path]``, token) of ``netbox+http(s)://[:TOKEN@]host…``."""
    if not url.startswith(("netbox+http://", "netbox+https://")):
        raise InventoryError(
            f"NetBox URL {mask_token(url)!r}: expected netbox+https://HOST or netbox+http://HOST"
        )
    try:
        parts = urlsplit(url[len("netbox+") :])
        port = f":{parts.port}" if parts.port else ""
    except ValueError as exc:  # a bad IPv6 literal, a port out of range
        raise InventoryError(f"NetBox URL {mask_token(url)!r}: {exc}") from None
    if not parts.hostname:
        raise InventoryError(f"NetBox URL {mask_token(url)!r}: no host")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}", parts.password or ""


def url_with_token(url: str, token: str) -> str:
    """``netbox+http(s)://HOST…`` with ``token`` as its password (what the providers receive)."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://:{quote(token.strip(), safe='')}@{rest}"


def mask_token(url: str) -> str:
    """``url`` with the token (the userinfo) replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest.split("/", 1)[0]:
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


_TOKEN_WORDS = ("token", "credential", "authenticat", "permission", "not authorized")


def refuses_token(status: int, detail: Any) -> bool:
    """Whether an HTTP error is NetBox refusing the API token (or its rights), not the request.

    401 always is. A 403 is only when its message speaks of the token, credentials,
    authentication or permission, and it is not a bulk request's per-object report: NetBox
    answers a bulk DELETE naming an object deleted meanwhile by another request with
    ``403 {"detail": "1 of 1 objects could not be deleted.", "errors": [...]}`` (NetBox
    4.7.3, ``netbox/api/viewsets/mixins.py``, ``BulkDestroyModelMixin``), which says
    nothing about the token.
    """
    if status == 401:
        return True
    if status != 403 or not isinstance(detail, Mapping) or "errors" in detail:
        return False
    text = str(detail.get("detail", "")).lower()
    return any(word in text for word in _TOKEN_WORDS)


def results_of(page: Any, where: str) -> list[dict[str, Any]]:
    """The ``results`` of a list page; InventoryError unless it is a list of objects."""
    if not isinstance(page, dict) or "results" not in page:
        raise InventoryError(
            f"{where}: expected a NetBox list page (an object with results), got "
            f"{type(page).__name__}; is this NetBox's API URL?"
        )
    return objects_of(page["results"], f"{where}: results")


def objects_of(value: Any, where: str) -> list[dict[str, Any]]:
    """``value`` if it is a list of JSON objects; InventoryError naming what it is instead."""
    if not isinstance(value, list) or not all(isinstance(o, dict) for o in value):
        raise InventoryError(f"{where}: expected a list of objects, got {type(value).__name__}")
    return value


def count_of(page: Any, where: str) -> int:
    """The ``count`` of a list page; InventoryError unless it is a whole number."""
    got = page.get("count") if isinstance(page, dict) else None
    if not isinstance(got, int) or isinstance(got, bool) or got < 0:
        raise InventoryError(f"{where}: expected a list page with a whole-number count")
    return got


def _bounded_count(page: Any, where: str) -> int:
    """A page's ``count`` (0 when it gives none); InventoryError when it is not a whole
    number or more than any real NetBox holds (:data:`MAX_OBJECTS`)."""
    got = page.get("count") if isinstance(page, dict) else None
    if got is None:
        return 0
    if not isinstance(got, int) or isinstance(got, bool) or not 0 <= got <= MAX_OBJECTS:
        raise InventoryError(
            f"{where}: count {str(got)[:24]!r} is not a whole number from 0 to {MAX_OBJECTS:,} "
            "(no NetBox of a fabric the tool plans holds more; is this NetBox's API?)"
        )
    return got


def _check_page(size: int, pages: int, count: int, limit: int, where: str) -> None:
    """Refuse a page longer than the ``limit`` asked for, or one more page than ``count``
    needs (two spare: objects created while reading): pagination that would never end."""
    if size > limit:
        raise InventoryError(f"{where}: {size:,} results on a page of at most {limit:,}")
    needed = -(-max(count, 1) // limit) + 2
    if pages >= min(needed, -(-MAX_OBJECTS // limit)):
        raise InventoryError(
            f"{where}: page {pages + 1:,} of a list whose count is {count:,} "
            f"({limit:,} a page): pagination that does not end, refused"
        )


class NetBoxClient:
    """Talk to NetBox at ``base`` (``http://127.0.0.1:8000``) with API ``token``.

    The transport (:mod:`.http`) bounds every request in time and size, never
    follows a redirect, and sends the token only to ``base``'s origin.

    ``branch`` names a netbox-branching branch every request then works in (the
    ``X-NetBox-Branch`` header, :mod:`.branching`); ``create_branch`` makes it when it is
    missing (writes do, reads never). It is looked up at the first request.
    """

    def __init__(
        self,
        base: str,
        token: str,
        timeout: float | None = None,
        budget: Budget | None = None,
        *,
        branch: str = "",
        create_branch: bool = False,
    ) -> None:
        self.base = check_base(base.rstrip("/"))
        if not token:
            raise InventoryError(
                f"NetBox {self.base}: no API token (set NETBOX_TOKEN, --netbox-token-file, "
                "or the Pulumi secret fabric:netboxToken)"
            )
        check_token(self.base, token)
        self.timeout = timeout  # None: READ_TIMEOUT_S for a GET, WRITE_TIMEOUT_S for a write
        self.budget = budget if budget is not None else Budget()
        self.branch, self.create_branch = branch, create_branch
        self._branch_header: dict[str, str] | None = None if branch else {}
        scheme = "Bearer" if token.startswith("nbt_") else "Token"
        self._headers = {
            "Authorization": f"{scheme} {token}",
            "Accept": "application/json",
            "Content-Type": "application/json",
        }

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One API call; JSON in and out. ``path`` is below ``/api/`` or a full next-page URL.

        A PostgreSQL deadlock inside NetBox (two bulk cable writes tracing paths through the
        same switch; a switch's delete cascading into cables their bundle deletes at the same
        time, seen in the killed-up test's destroy) rolled the whole request back, so it is
        retried, backing off (six tries, about 30 s in all), and so is a GET or DELETE that
        met a cable end a concurrent delete removed (:data:`.retry.VANISHED_END`, a NetBox 500
        with netbox-branching enabled); a 429 or 503 is retried after
        its ``Retry-After`` (:mod:`.retry`). Each wait is a line on a terminal.
        """
        waited, deadlocks = 0.0, 0
        while True:
            try:
                return self._request(method, path, body)
            except InventoryError as exc:
                wait = wait_before_retry(exc, waited, deadlocks, method)
                if wait is None:
                    raise
                wait = min(wait, self.budget.left(f"netbox {self.base}"))
                deadlocks += "deadlock detected" in str(exc) or VANISHED_END in str(exc)
                why = getattr(exc, "status", "") or "deadlock"
                notice(f"netbox {self.base}: {method} answered {why}; trying again in {wait:g} s")
                time.sleep(wait)
                waited += wait

    def url_of(self, path: str) -> str:
        """The full URL of ``path`` (below ``/api/``, or a full URL on this origin)."""
        if "://" in path:
            check_same_origin(self.base, path, "URL")
            return path
        return f"{self.base}/api/{path.lstrip('/')}"

    def _on_branch(self) -> dict[str, str]:
        """The branch header (empty on main), the branch looked up (or made) the first time."""
        if self._branch_header is None:
            schema = branch_schema(
                lambda m, p, b: self._request(m, p, b, main=True),
                self.base,
                self.branch,
                self.create_branch,
            )
            self._branch_header = {BRANCH_HEADER: schema}
        return self._branch_header

    def _request(self, method: str, path: str, body: Any = None, *, main: bool = False) -> Any:
        url = self.url_of(path)
        data = None if body is None else json.dumps(body).encode()
        wait = self.timeout or (READ_TIMEOUT_S if method == "GET" else WRITE_TIMEOUT_S)
        headers = self._headers if main else {**self._headers, **self._on_branch()}
        answer = exchange(method, url, headers, data, self.budget, wait)
        where = f"netbox {method} {shown(url)}"
        if 300 <= answer.status < 400:
            # Never followed: the Authorization header would go along to wherever it points.
            to = shown(answer.location)
            raise InventoryError(
                f"{where}: answered a redirect ({answer.status}) to {to!r}, not followed "
                "(the token goes only to the configured URL; give the URL it names)"
            )
        if answer.status >= 400:
            raise self._http_error(method, url, answer)
        return decode(answer, where)

    def _http_error(self, method: str, url: str, answer: Answer) -> NetBoxHttpError:
        try:
            detail: Any = json.loads(answer.body or b"null")
        except (ValueError, RecursionError):
            detail = None
        where = url.replace(self.base, "").split("?")[0]
        if refuses_token(answer.status, detail):
            text = detail.get("detail", "") if isinstance(detail, dict) else ""
            return NetBoxHttpError(
                f"NetBox {self.base}: the API token was refused ({answer.status} {text}); "
                "check NETBOX_TOKEN / fabric:netboxToken and that the token may write".replace(
                    " )", ")"
                ),
                answer.status,
                auth=True,
            )
        brief = json.dumps(detail)[:300] if detail is not None else answer.reason
        if detail is None and answer.body.lstrip()[:1] == b"<":
            brief = f"{answer.reason}, an HTML page: is this NetBox's API URL?"
        wait = retry_after(answer.retry_after) if answer.status in (429, 503) else None
        if wait is not None and wait > MAX_RETRY_AFTER_S:
            brief += f" (Retry-After {wait:g} s: longer than the {MAX_RETRY_AFTER_S:g} s waited)"
        return NetBoxHttpError(
            f"NetBox {self.base}: {method} {where} failed ({answer.status}): {brief}",
            answer.status,
            retry_after=wait,
        )

    def status(self) -> dict[str, Any]:
        """``/api/status/`` (NetBox version and friends); proves the URL and the token."""
        got = self.request("GET", "status/")
        self.request("GET", "dcim/sites/?limit=1")  # status/ is readable without a token
        if got is not None and not isinstance(got, dict):
            raise InventoryError(f"netbox GET {self.url_of('status/')}: expected a JSON object")
        return dict(got or {})

    def select(self, endpoint: str, query: Query | None = None) -> list[dict[str, Any]]:
        """Every object of ``endpoint`` matching ``query`` (all pages)."""
        q = dict(query or {})
        q.setdefault("limit", PAGE)
        asked = q["limit"]
        limit = int(asked) if isinstance(asked, int) and asked > 0 else PAGE
        if endpoint.strip("/") in FIELDS and "brief" not in q:
            q.setdefault("fields", FIELDS[endpoint.strip("/")])
        out: list[dict[str, Any]] = []
        page: str | None = f"{endpoint.strip('/')}/?{urlencode(q, doseq=True)}"
        seen: set[str] = set()
        most = 0  # the largest count any page gave
        while page:
            url = self.url_of(page)
            got = self.request("GET", page)
            where = f"netbox GET {shown(url)}"
            results = results_of(got, where)
            most = max(most, _bounded_count(got, where))
            _check_page(len(results), len(seen), most, limit, where)
            out.extend(check_objects(page, results, f"{where}: results"))
            seen.add(url)
            page = self._next_page(got, url, seen)
        return out

    def _next_page(self, got: Mapping[str, Any], url: str, seen: set[str]) -> str | None:
        """The ``next`` link of a page, checked: a loop, another origin or a non-HTTP link
        would never end or would send the token elsewhere."""
        nxt = got.get("next")
        if nxt is None or nxt == "":
            return None
        where = f"netbox GET {shown(url)}"
        if not isinstance(nxt, str) or "://" not in nxt:
            raise InventoryError(f"{where}: next {nxt!r} is not an absolute http(s) URL")
        check_same_origin(self.base, nxt, "next page")
        if nxt in seen:
            raise InventoryError(f"{where}: next {nxt!r} was read before (a pagination loop)")
        return nxt

    def count(self, endpoint: str, query: Query | None = None) -> int:
        """How many objects match (one request: ``limit=1``, read ``count``)."""
        q = {**dict(query or {}), "limit": 1, "brief": 1}
        got = self.request("GET", f"{endpoint.strip('/')}/?{urlencode(q, doseq=True)}")
        return count_of(got, f"netbox GET {self.url_of(endpoint.strip('/') + '/')}")

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Bulk create in chunks of :data:`CHUNK`."""
        out: list[dict[str, Any]] = []
        for i in range(0, len(objs), CHUNK):
            chunk = list(objs[i : i + CHUNK])
            path = _written(endpoint, chunk)
            got = self.request("POST", path, chunk)
            where = f"netbox POST {self.url_of(endpoint)}"
            out.extend(check_objects(path, objects_of(got, where), where))
        return out

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Bulk PATCH in chunks of :data:`CHUNK` (each object carries its ``id``)."""
        out: list[dict[str, Any]] = []
        for i in range(0, len(objs), CHUNK):
            chunk = list(objs[i : i + CHUNK])
            path = _written(endpoint, chunk)
            got = self.request("PATCH", path, chunk)
            where = f"netbox PATCH {self.url_of(endpoint)}"
            out.extend(check_objects(path, objects_of(got, where), where))
        return out

    def delete(self, endpoint: str, ids: Iterable[int]) -> None:
        """Bulk DELETE in chunks of :data:`CHUNK`; objects already gone are not an error."""
        todo = sorted(set(ids))
        for i in range(0, len(todo), CHUNK):
            self._delete_chunk(endpoint.strip("/"), todo[i : i + CHUNK])

    def _delete_chunk(self, endpoint: str, ids: list[int]) -> None:
        """Delete ``ids``; when NetBox refuses the batch, retry with those still there.

        Another request (a cascade from a device another resource deleted, a parallel
        ``destroy``) may delete some of them first. NetBox 4.7.3 then refuses the whole
        batch (one transaction): with 400 ("Object with ID n does not exist") when an id was
        gone before the request, with 403 ("1 of 1 objects could not be deleted") when it
        went during it, 404 on a single-object URL. The same 403 comes when a *related*
        object goes during the delete (a switch's cables deleted by their bundle while the
        switch's delete cascades to its interfaces: seen in the real destroy test), and then
        the object is still there. So each refusal is checked by reading which ids remain:
        fewer means delete the rest; all of them means wait and try again, a few times, before
        the refusal stands (a protected object). A refused token is never retried.
        """
        waits = iter(DELETE_RETRY_S)
        while ids:
            try:
                self.request("DELETE", f"{endpoint}/", [{"id": n} for n in ids])
                return
            except NetBoxHttpError as exc:
                if exc.auth or exc.status not in (400, 403, 404, 409):
                    raise
                left = sorted(
                    int(o["id"]) for o in self.select(endpoint, {"id": ids, "fields": "id"})
                )
                if len(left) == len(ids):
                    wait = next(waits, None)
                    if wait is None:
                        raise
                    time.sleep(wait)
                ids = left
