"""A Pulumi Automation API workspace that never changes which stack is selected.

``auto.select_stack`` runs ``pulumi stack select``, which rewrites the user's workspace
selection as a side effect: after a ``fabric-stack plan --stack prod`` a plain ``pulumi up``
would run on prod. Every command the Automation API runs on a :class:`~pulumi.automation.Stack`
passes ``--stack NAME`` anyway, so the selection is never needed; this workspace's
``select_stack`` only checks that the stack exists (``Workspace.select_stack`` is the
public hook ``Stack.select`` calls; imported lazily, since it imports the SDK).
"""

from __future__ import annotations

from pulumi import automation as auto

from fabric_stack.adapters.pulumi.stacks import NoStackError

__all__ = ["UnselectedWorkspace"]


class UnselectedWorkspace(auto.LocalWorkspace):
    """``LocalWorkspace`` whose ``select_stack`` checks the stack exists and selects nothing."""

    def select_stack(self, stack_name: str) -> None:
        """Raise when ``stack_name`` is not a stack of this project; never create or select."""
        names = [s.name for s in self.list_stacks()]
        if stack_name not in names:
            have = ", ".join(names) or "none yet"
            raise NoStackError(
                f"stack {stack_name!r} does not exist (stacks: {have}); "
                f"`pulumi stack init {stack_name}` creates it"
            )
