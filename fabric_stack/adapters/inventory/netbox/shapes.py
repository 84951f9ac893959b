"""The shapes of the NetBox objects the store reads, checked at the client before any use.

Every object a list page or a bulk write answers with goes through the typed model of
its endpoint (:func:`check_objects`): a missing or non-integer ``id``, a site given as a
string, a position, ASN, rack or GUID of the wrong type is one
:class:`~fabric_stack.errors.InventoryError` line naming the request, the object (its index
and id) and the field, never a ``KeyError`` or ``TypeError`` three modules later. The
models only say what a field must be *when present* (a ``?fields=`` selection leaves the
others out) except ``id``, which every NetBox object has; unknown fields are kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from fabric_stack.errors import InventoryError

Id = Annotated[int, Field(strict=True, ge=1, le=2**63 - 1)]
"""A NetBox primary key: a JSON whole number (a string ``"7"`` is not one)."""

Number = Annotated[float, Field(allow_inf_nan=False, ge=-1e9, le=1e9)]
"""A NetBox decimal (rack position, length), which it may give as ``1.0`` or ``"1.0"``."""


class _Loose(BaseModel):
    """Unknown fields are kept: NetBox versions add fields, the store reads few."""

    model_config = ConfigDict(extra="allow")


class Ref(_Loose):
    """A nested object (``site``, ``rack``, ``device``…): at least its id."""

    id: Id
    name: StrictStr | None = None
    slug: StrictStr | None = None


class Choice(_Loose):
    """A choice field as NetBox gives it (``{"value": "active", "label": "Active"}``)."""

    value: StrictStr | None = None


class CustomFields(_Loose):
    """The custom fields the store reads (:mod:`.custom_fields`)."""

    fabric_kind: StrictStr | None = None
    fabric_name: StrictStr | None = None
    fabric_stack: StrictStr | None = None
    fabric_bundle: StrictStr | None = None
    fabric_record: dict[str, Any] | None = None
    fabric_asn: AsnRef | Annotated[int, Field(strict=True, ge=1)] | None = None
    ib_guid: StrictStr | None = None


class Termination(_Loose):
    """One end of a cable: the terminated object and its id."""

    object_id: Id | None = None
    object: dict[str, Any] | None = None


class AsnRef(_Loose):
    """The ``fabric_asn`` custom field: a nested ``ipam.asn`` object."""

    id: Id | None = None
    asn: Annotated[int, Field(strict=True, ge=1, le=2**32 - 1)] | None = None


class NetBoxObject(_Loose):
    """Any NetBox object: an id, and the custom fields, name and status when present."""

    ALWAYS: ClassVar[frozenset[str]] = frozenset()
    """Fields NetBox always serializes for this endpoint (null when empty) and the store
    reads by key: required unless a ``?fields=`` selection leaves them out."""

    id: Id
    name: StrictStr | None = None
    status: StrictStr | Choice | None = None
    custom_fields: CustomFields | None = None


class Device(NetBoxObject):
    """``dcim/devices``."""

    ALWAYS = frozenset({"name"})

    site: Ref | Id | None = None
    rack: Ref | Id | None = None
    role: Ref | Id | None = None
    device_type: Ref | Id | None = None
    position: Number | None = None


class Interface(NetBoxObject):
    """``dcim/interfaces``."""

    ALWAYS = frozenset({"name", "device"})

    device: Ref | Id | None = None
    cable: Ref | Id | None = None


class Cable(NetBoxObject):
    """``dcim/cables``."""

    a_terminations: list[Termination] | None = None
    b_terminations: list[Termination] | None = None


class Asn(NetBoxObject):
    """``ipam/asns``: a 32-bit AS number."""

    asn: Annotated[int, Field(strict=True, ge=1, le=2**32 - 1)] | None = None


class Vlan(NetBoxObject):
    """``ipam/vlans``: an 802.1Q id."""

    vid: Annotated[int, Field(strict=True, ge=1, le=4094)] | None = None


class Prefix(NetBoxObject):
    """``ipam/prefixes``."""

    ALWAYS = frozenset({"prefix"})

    prefix: StrictStr | None = None
    vlan: Ref | Id | None = None


MODELS: dict[str, type[NetBoxObject]] = {
    "dcim/devices": Device,
    "dcim/interfaces": Interface,
    "dcim/cables": Cable,
    "ipam/asns": Asn,
    "ipam/vlans": Vlan,
    "ipam/prefixes": Prefix,
    "ipam/ip-addresses": NetBoxObject,
}
"""The model of each endpoint's objects (any other endpoint: :class:`NetBoxObject`)."""


def model_of(endpoint: str) -> type[NetBoxObject]:
    """The model of ``endpoint``'s objects (``dcim/devices/?…`` or a full next-page URL)."""
    path = endpoint.split("?", 1)[0].rstrip("/")
    for name, model in MODELS.items():
        if path.endswith(name):
            return model
    return NetBoxObject


def selected(url: str) -> frozenset[str] | None:
    """The ``?fields=`` selection of a request URL (None: every field)."""
    query = url.partition("?")[2]
    for part in query.split("&"):
        if part.startswith("fields="):
            return frozenset(unquote(part[len("fields=") :]).split(","))
    return None


def check_objects(endpoint: str, objs: list[Any], where: str) -> list[dict[str, Any]]:
    """``objs`` if each is a JSON object of ``endpoint``'s shape (``endpoint`` may carry the
    request's query: its ``?fields=`` says which fields must be there); InventoryError naming
    the first that is not (its index and id), the field and what it should be."""
    model = model_of(endpoint)
    asked = selected(endpoint)
    need = model.ALWAYS if asked is None else model.ALWAYS & asked
    for i, obj in enumerate(objs):
        if not isinstance(obj, Mapping):
            raise InventoryError(f"{where}[{i}]: expected an object, got {type(obj).__name__}")
        lost = sorted(need - obj.keys())
        if lost:
            raise InventoryError(
                f"{where}[{i}]{_id_of(obj)}: {lost[0]}: missing (NetBox always gives it; "
                "is this NetBox's API?)"
            )
        try:
            model.model_validate(obj)
        except ValidationError as exc:
            raise InventoryError(f"{where}[{i}]{_id_of(obj)}: {problem(exc)}") from None
    return objs


def _id_of(obj: Mapping[str, Any]) -> str:
    got = obj.get("id")
    return f" (id {got})" if isinstance(got, int) and not isinstance(got, bool) else ""


def problem(exc: ValidationError) -> str:
    """The first error of ``exc`` as ``field.path: what was expected (got …)``, one line."""
    err = exc.errors(include_url=False)[0]
    # Drop the union member names pydantic adds to the path (``site.Ref.id``).
    loc = [str(p) for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper())]
    field = ".".join(loc) or "object"
    if err["type"] == "missing":
        return f"{field}: missing (every NetBox object has one; is this NetBox's API?)"
    got = repr(err.get("input"))
    got = got if len(got) <= 40 else got[:39] + "…"
    if len(loc) == 1 and loc[0] in _REFS:
        return f"{field}: expected a nested object with a whole-number id, or an id (got {got})"
    said = re.sub(r"a valid dictionary( or instance of \w+)?", "an object", str(err["msg"]))
    said = said.replace("Input should be ", "expected ")
    return f"{field}: {said} (got {got})"


_REFS = frozenset({"site", "rack", "role", "device_type", "device", "cable"})
"""Fields that hold a nested object or its bare id."""


__all__ = ["MODELS", "NetBoxObject", "check_objects", "model_of", "problem", "selected"]
