"""One error hierarchy for everything fabric-stack reports as bad input.

Every error carries a single human line that names *where* the problem is (a
spec field, a file and line, a JSON path) and *what would be valid*. The CLI
prints that line and exits with status 2; nothing else catches these.
"""

from __future__ import annotations


class FabricStackError(Exception):
    """Base of every error fabric-stack raises on purpose (exit status 2)."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SpecError(FabricStackError):
    """A cluster spec field is invalid: names the field and what would be valid."""

    def __init__(self, field: str, problem: str, valid: str | None = None) -> None:
        self.field = field
        self.problem = problem
        self.valid = valid
        text = f"{field}: {problem}"
        if valid:
            text += f" ({valid})"
        super().__init__(text)


class CatalogError(SpecError):
    """A switch model is unknown or cannot serve the requested port speed."""


class CapacityError(SpecError):
    """The cluster does not fit the fabric the spec allows (e.g. beyond three tiers)."""


class InputFileError(FabricStackError):
    """A file given to fabric-stack is unreadable, truncated or malformed.

    ``where`` is a line number (``path:12``) or a JSON/YAML path (``path:$.lldp[0]``).
    """

    def __init__(self, path: str, problem: str, where: str | int | None = None) -> None:
        self.path = path
        self.problem = problem
        self.where = where
        loc = path if where is None else f"{path}:{where}"
        super().__init__(f"{loc}: {problem}")


class InventoryError(FabricStackError):
    """The inventory store is unreachable or holds records it cannot understand."""


class NetBoxHttpError(InventoryError):
    """A NetBox API request answered with an HTTP error: ``status``, and whether NetBox
    refused the API token itself (``auth``) rather than the request."""

    def __init__(
        self, message: str, status: int, *, auth: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.auth = auth
        self.retry_after = retry_after
        """Seconds the server asked to wait (``Retry-After`` of a 429 or 503), or None."""


class EngineError(FabricStackError):
    """The Pulumi engine is missing, the wrong version, or a stack operation failed."""


class BudgetError(FabricStackError):
    """A long computation reached the bound it was given (``--max-seconds``): names the
    bound, how far it got and what to change."""


class OutputFileError(FabricStackError):
    """A file fabric-stack was asked to write cannot be written (nothing was written)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: cannot write: {problem}")


class DeclarationError(ValueError):
    """A registry entry (a render target, a discovery format, a switch OS:
    ``fabric_stack.nos.NosDeclarationError``) is declared without something
    its registry needs: names the entry, the field and what would be valid.

    A programming error, raised where the entry is declared (so at import: an incomplete
    entry never reaches a command or a docs table). Not a :class:`FabricStackError`: it is
    no bad input, and the CLI must not print it as one line with exit status 2.
    """

    def __init__(self, entry: str, problems: list[str]) -> None:
        super().__init__(f"{entry}: " + "; ".join(problems))
        self.entry = entry
        self.problems = problems
