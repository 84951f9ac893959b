"""CLI glue for a live NetBox: the ``--netbox*`` options, the token (NETBOX_TOKEN or a file)
and the reader `drift` and `adopt` share."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fabric_stack.adapters.discovery.netbox_live import NetboxApiReader
from fabric_stack.cli.params import NonEmptyPath

_F = TypeVar("_F", bound=Callable[..., Any])


def netbox_options(func: _F) -> _F:
    """``--netbox URL``, ``--netbox-token-file``, ``--netbox-site``, ``--netbox-tag``."""
    options = [
        click.option(
            "--netbox",
            "netbox_url",
            metavar="URL",
            help="A live NetBox (http(s)://HOST): its cables through the REST API "
            "(token: NETBOX_TOKEN or --netbox-token-file).",
        ),
        click.option(
            "--netbox-token-file",
            type=NonEmptyPath(path_type=Path),
            metavar="FILE",
            help="File holding the NetBox API token.",
        ),
        click.option("--netbox-site", metavar="SLUG", help="Only this NetBox site's cables."),
        click.option("--netbox-tag", metavar="SLUG", help="Only cables with this NetBox tag."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def netbox_token(token_file: Path | None) -> str:
    """The API token: ``token_file``'s first line, else ``NETBOX_TOKEN``; UsageError if neither."""
    if token_file is not None:
        try:
            token = token_file.read_text().strip().splitlines()[0:1]
        except OSError as exc:
            raise click.UsageError(f"--netbox-token-file {token_file}: {exc.strerror}") from None
        if not token or not token[0].strip():
            raise click.UsageError(f"--netbox-token-file {token_file}: the file is empty")
        return token[0].strip()
    token_env = os.environ.get("NETBOX_TOKEN", "").strip()
    if not token_env:
        raise click.UsageError(
            "--netbox needs an API token: set NETBOX_TOKEN or --netbox-token-file"
        )
    return token_env


def netbox_reader(options: dict[str, Any]) -> NetboxApiReader | None:
    """The live NetBox reader the ``--netbox*`` options ask for (popped from ``options``)."""
    url = options.pop("netbox_url", None)
    token_file = options.pop("netbox_token_file", None)
    site = options.pop("netbox_site", None)
    tag = options.pop("netbox_tag", None)
    if url is None:
        if token_file or site or tag:
            raise click.UsageError(
                "--netbox-token-file/--netbox-site/--netbox-tag need --netbox URL"
            )
        return None
    if not url.startswith(("http://", "https://", "netbox+http://", "netbox+https://")):
        raise click.UsageError(f"--netbox {url!r}: expected http(s)://HOST[:PORT]")
    return NetboxApiReader(url, netbox_token(token_file), site=site, tag=tag)
