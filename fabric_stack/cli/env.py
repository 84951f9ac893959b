"""`fabric-stack env`: the environment plain `pulumi` needs to see fabric-stack's stacks."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fabric_stack.adapters.pulumi.backends import describe, env_file_text
from fabric_stack.adapters.pulumi.env import offline_env
from fabric_stack.cli.common import echo_json, handle_errors, out_file_option, project_dir
from fabric_stack.files.outputs import write_file


@click.command("env")
@out_file_option("Write to FILE (mode 0600, replaced atomically) instead of stdout.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["sh", "json"]),
    default="sh",
    show_default=True,
    help="sh: export lines to source; json: the backend and secrets settings (masked).",
)
@handle_errors
def env_cmd(out: Path | None, fmt: str) -> None:
    """Print the Pulumi environment fabric-stack uses: backend, passphrase, engine.

    `fabric-stack plan/apply`, the Makefile and plain `pulumi` then see the same
    stacks: PULUMI_BACKEND_URL (your own, e.g. postgres://…, or the project's
    file://.state/pulumi), the passphrase or PULUMI_CONFIG_PASSPHRASE_FILE, the
    pinned engine first on PATH, and no update checks or plugin downloads.
    `make setup` writes it to .state/env.sh.

    \b
    Examples:
      . .state/env.sh && pulumi stack ls          # after make setup
      eval "$(fabric-stack env)" && pulumi preview --stack demo
      PULUMI_BACKEND_URL=postgres://fab@db:5432/pulumi_state \\
        PULUMI_CONFIG_PASSPHRASE_FILE=~/.config/fabric-stack/passphrase \\
        fabric-stack env --out .state/env.sh      # a team member's setup
    """
    pdir = project_dir()
    env = offline_env(pdir)
    if fmt == "json":
        echo_json(describe(env))
        return
    text = env_file_text(env, pdir)
    if out is None:
        click.echo(text, nl=False)
        return
    _write_private(out, text)
    click.echo(f"wrote {out}: source it (. {out}) to run pulumi on {describe(env)['backend']}")


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` through the output layer, readable by the owner only (it may hold
    a passphrase or a password): created 0600 under a tight umask, never wider."""
    old = os.umask(0o077)
    try:
        target = write_file(path, text)
    finally:
        os.umask(old)
    target.chmod(0o600)
