"""The policy pack's gRPC servicer: pulumi-policy's, with each request decoded once.

pulumi-policy 1.x (``pulumi_policy/policy.py``, ``_PolicyAnalyzerServicer``) decodes
the request again for every policy: ``Analyze`` turns one resource's protobuf props
into dicts once per resource policy, and ``AnalyzeStack`` turns *every* resource's
props, options and provider into dicts once per stack policy (8 stack policies × 5,457
resources at 16,384 GPUs); ``Remediate`` decodes the props although no fabric-stack
policy remediates. Profiled at 4,096 GPUs that decoding was a third of the pack's
Python time (``bench/README.md``).

:class:`SharedDecodeServicer` runs the SDK's own loops with the same arguments, the
same responses and the same error handling, but decodes each request once (lazily:
not at all when no policy needs it) and hands every policy the same decoded objects.
:func:`install` makes ``PolicyPack(...)`` serve with it. Both rely on the SDK's
private layout (the servicer class, its name-mangled fields, ``PolicyPack`` finding
the class by its module-global name); ``tests/unit/test_policy_servicer.py`` checks
the layout and compares the responses with the SDK's servicer request by request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from inspect import isawaitable
from typing import Any

import pulumi_policy.policy as sdk
from google.protobuf import json_format
from pulumi.runtime import proto
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.policy import (
    EnforcementLevel,
    Policy,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
    _NotApplicableError,
)
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

__all__ = ["SDK_SERVICER", "SharedDecodeServicer", "install"]

SDK_SERVICER: type = sdk._PolicyAnalyzerServicer
"""The SDK's servicer class (what :class:`SharedDecodeServicer` extends)."""

_P = "_PolicyAnalyzerServicer__"
"""Prefix of the SDK servicer's name-mangled private fields."""


def _run(
    self: Any, policy: Policy, call: Callable[[], Any], response: Any, what: str = "policy"
) -> None:
    """Run one policy as the SDK does: await a coroutine, turn unknowns and N/A into replies."""
    name, version = (
        getattr(self, _P + "policy_pack_name"),
        getattr(self, _P + "policy_pack_version"),
    )
    try:
        result = call()
        if isawaitable(result):
            loop = asyncio.new_event_loop()
            task: asyncio.Task[Any] = asyncio.Task(result, loop=loop)  # type: ignore[arg-type]
            loop.run_until_complete(task)
            loop.close()
    except UnknownValueError as e:
        response.diagnostics.append(
            proto.AnalyzeDiagnostic(
                policyName=policy.name,
                policyPackName=name,
                policyPackVersion=version,
                message=(
                    f"can't run {what} '{policy.name}' from policy pack "
                    f"'{name}@v{version}' during preview: {e.message}"
                ),
                urn="",
                description=policy.description,
                enforcementLevel=self._map_enforcement_level(EnforcementLevel.ADVISORY),
            )
        )
    except _NotApplicableError as e:
        response.not_applicable.append(
            proto.PolicyNotApplicable(policy_name=policy.name, reason=e.reason or "")
        )


class SharedDecodeServicer(SDK_SERVICER):  # type: ignore[misc]
    """pulumi-policy's analyzer servicer, decoding each request once for all policies."""

    def _policies(self) -> list[Policy]:
        return list(getattr(self, _P + "policies"))

    def _stack_tags(self) -> Any:
        return getattr(self, _P + "stack_tags")

    def _level(self, policy: Policy) -> EnforcementLevel:
        return self._get_enforcement_level(policy)  # type: ignore[no-any-return]

    def Analyze(self, request: Any, _context: Any) -> Any:
        """Every resource policy on one resource; its props decoded once."""
        self._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        decoded: tuple[Any, Any, Any] | None = None
        for policy in self._policies():
            level = self._level(policy)
            if level == EnforcementLevel.DISABLED or not isinstance(
                policy, ResourceValidationPolicy
            ):
                continue
            if not policy.has_validation():
                response.not_applicable.append(
                    proto.PolicyNotApplicable(
                        policy_name=policy.name, reason="Policy does not implement validate"
                    )
                )
                continue
            if level == EnforcementLevel.REMEDIATE:
                level = EnforcementLevel.MANDATORY
            report = self._create_report_violation(
                response, policy.name, policy.description, level, policy.severity
            )
            if decoded is None:
                props = unknown_checking_proxy(
                    deserialize_properties(json_format.MessageToDict(request.properties))
                )
                decoded = (
                    props,
                    self._get_resource_options(request),
                    self._get_provider_resource(request),
                )
            props, opts, provider = decoded
            args = ResourceValidationArgs(
                request.type,
                props,
                request.urn,
                request.name,
                opts,
                provider,
                self._get_policy_config(policy.name),
                self._stack_tags(),
            )
            _run(self, policy, partial(policy.validate, args, report), response)
        return response

    def _stack_resources(self, request: Any) -> list[PolicyResource]:
        """The stack's resources decoded once, parents and dependencies linked (as the SDK)."""
        resources: list[PolicyResource] = []
        links: list[tuple[PolicyResource, Any, list[str], dict[str, list[str]]]] = []
        for r in request.resources:
            props = unknown_checking_proxy(
                deserialize_properties(json_format.MessageToDict(r.properties))
            )
            res = PolicyResource(
                r.type,
                props,
                r.urn,
                r.name,
                self._get_resource_options(r),
                self._get_provider_resource(r),
                None,
                [],
                {},
            )
            deps = {k: list(v.urns) for k, v in r.propertyDependencies.items()}
            links.append((res, r.parent, list(r.dependencies), deps))
            resources.append(res)
        by_urn = {res.urn: res for res in resources}
        for res, parent, dependencies, prop_deps in links:
            if parent is not None and parent in by_urn:
                res.parent = by_urn[parent]
            res.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
            for k, urns in prop_deps.items():
                res.property_dependencies[k] = [by_urn[d] for d in urns if d in by_urn]
        return resources

    def AnalyzeStack(self, request: Any, _context: Any) -> Any:
        """Every stack policy on the whole stack; the stack decoded once for all of them."""
        self._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        resources: list[PolicyResource] | None = None
        for policy in self._policies():
            level = self._level(policy)
            if level == EnforcementLevel.DISABLED or not isinstance(policy, StackValidationPolicy):
                continue
            if level == EnforcementLevel.REMEDIATE:
                level = EnforcementLevel.MANDATORY
            report = self._create_report_violation(
                response, policy.name, policy.description, level, policy.severity
            )
            if resources is None:
                resources = self._stack_resources(request)
            args = StackValidationArgs(
                resources, self._get_policy_config(policy.name), self._stack_tags()
            )
            _run(self, policy, partial(policy.validate, args, report), response)
        return response

    def Remediate(self, request: Any, _context: Any) -> Any:
        """The SDK's remediation pass; the props are decoded only when a policy remediates."""
        if any(
            self._level(p) == EnforcementLevel.REMEDIATE and isinstance(p, ResourceValidationPolicy)
            for p in self._policies()
        ):
            return super().Remediate(request, _context)
        # No policy at the remediate level: the SDK's loop skips every policy and replies
        # with an empty response; only its runtime settings remain to be configured.
        self._configure_runtime_settings()
        return proto.RemediateResponse()


def install() -> None:
    """Make ``PolicyPack(...)`` serve with :class:`SharedDecodeServicer` (call before it)."""
    setattr(sdk, "_PolicyAnalyzerServicer", SharedDecodeServicer)  # noqa: B010
