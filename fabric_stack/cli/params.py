"""Click parameter types and usage-error handling that keep bad flags to one line.

Click prints a usage error as three lines (usage, a "Try --help" hint, the
error); the contract is one line naming the flag and what would be valid, exit
2. :func:`one_line_usage` turns any :class:`click.UsageError` into that line.
"""

from __future__ import annotations

import math
import re
from typing import IO, Any

import click

from fabric_stack.text.redact import mask_urls

STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
"""Pulumi stack names: letters, digits, '-', '_' and '.' (at most 100 characters)."""


class NonEmptyPath(click.Path):
    """``click.Path`` that refuses an empty string (click would make it ``.``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Refuse ``''`` before click turns it into the current directory."""
        if isinstance(value, str) and value == "":
            self.fail("empty path (give a file or directory name)", param, ctx)
        if isinstance(value, str) and "\x00" in value:
            self.fail(f"{value!r}: a path cannot contain a NUL byte", param, ctx)
        return super().convert(value, param, ctx)


class FiniteFloat(click.FloatRange):
    """``click.FloatRange`` that also refuses NaN and the infinities: NaN passes every range
    comparison (``nan > 0`` and ``nan < 10`` are both false), so click lets it through."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, or one line: not a number, infinite, or out of the range."""
        got = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(got):
            self.fail(f"{value!r} is not a finite number ({self._describe_range()})", param, ctx)
        return super().convert(got, param, ctx)


class StackName(click.types.StringParamType):
    """A Pulumi stack name (non-empty, letters, digits, ``-_.``)."""

    name = "NAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Return the name, or fail with the allowed characters."""
        text = str(value)
        if not STACK_NAME.match(text):
            self.fail(
                f"{text!r} is not a stack name (1-100 letters, digits, '-', '_' or '.')",
                param,
                ctx,
            )
        return text


class AliasedOption(click.Option):
    """An option whose old spellings (``hidden_aliases``) still work but --help shows only
    the current one: a rename that does not break scripts (``render --out`` → ``--out-dir``)."""

    def __init__(self, *args: Any, hidden_aliases: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hidden_aliases = tuple(hidden_aliases)

    @property
    def visible_opts(self) -> list[str]:
        """The spellings --help shows."""
        return [o for o in self.opts if o not in self.hidden_aliases]

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """The help line, naming only the visible spellings."""
        saved = self.opts
        self.opts = self.visible_opts
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = saved


MAX_LINE = 500
"""An error line longer than this is cut (a 5,000-digit value need not be echoed whole)."""


def one_line(text: str) -> str:
    """``text`` on one line: control characters escaped, at most :data:`MAX_LINE` long, and
    the secrets of any URL in it masked (the last guard: every error line passes here)."""
    line = "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in mask_urls(text)
    )
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def _flag_of(exc: click.UsageError) -> str | None:
    param = getattr(exc, "param", None)
    if param is None:
        return None
    if isinstance(param, click.Argument):
        return param.human_readable_name
    opts = getattr(param, "visible_opts", None) or getattr(param, "opts", None)
    opts = opts or [param.name or "option"]
    return str(max(opts, key=len))


class OneLineUsageError(click.UsageError):
    """A usage error shown as ``error: <flag>: <problem> (see <command> --help)``."""

    def show(self, file: IO[Any] | None = None) -> None:
        """Print the single line to stderr."""
        click.echo(f"error: {self.message}", err=True, file=file)


def one_line_usage(exc: click.UsageError) -> OneLineUsageError:
    """The one-line form of ``exc`` (same exit status 2)."""
    problem = exc.format_message() if not isinstance(exc, click.BadParameter) else exc.message
    flag = _flag_of(exc)
    if isinstance(exc, click.MissingParameter):
        kind = "argument" if isinstance(exc.param, click.Argument) else "option"
        problem = f"missing {exc.param_type or kind}"
        choices = getattr(getattr(exc.param, "type", None), "choices", None)
        if choices:
            problem += f" (one of {', '.join(map(str, choices))})"
    text = f"{flag}: {problem}" if flag and not problem.startswith(flag) else problem
    sub = exc.ctx.command_path.split()[1:] if exc.ctx is not None else []
    cmd = " ".join(["fabric-stack", *sub])  # the same under CliRunner (prog "main")
    return OneLineUsageError(one_line(f"{text.rstrip('.')} (see {cmd} --help)"), exc.ctx)


__all__ = [
    "AliasedOption",
    "FiniteFloat",
    "NonEmptyPath",
    "OneLineUsageError",
    "StackName",
    "one_line",
    "one_line_usage",
]
