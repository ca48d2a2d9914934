"""A vet report as a CycloneDX 1.6 ML-BOM (JSON), built with cyclonedx-python-lib.

The model, its files and the repos it references are the inventory; the policy is a standard
(`definitions`); the verdict and what was checked are hfvet's claims (`declarations`, merged as raw
JSON: app.core.provenance.bom_claims). Every bom-ref is derived from the report and the timestamp and
serial number come from the context, so one stored report always gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from app.core.provenance.bom_context import BomContext
from app.core.report import Report

MEDIA_TYPE = "application/vnd.cyclonedx+json; version=1.6"
_FIRST = ("$schema", "bomFormat", "specVersion", "serialNumber", "version", "metadata")


def bom_json(report: Report, ctx: BomContext) -> str:
    """The whole document, ending in a newline."""
    from cyclonedx.output.json import JsonV1Dot6  # on use: the renderers' registry imports this module's caller

    from app.core.provenance import bom_claims, bom_components

    bom = _bom(report, ctx)
    document: dict[str, Any] = json.loads(JsonV1Dot6(bom).output_as_string())
    document["declarations"] = bom_claims.declarations(report, ctx, bom_components.model_ref(report))
    ordered = {key: document.pop(key) for key in _FIRST if key in document} | document  # what it is, first
    return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"


def _bom(report: Report, ctx: BomContext) -> Any:
    from cyclonedx.model import Property
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.dependency import Dependency
    from cyclonedx.model.tool import ToolRepository

    from app.core.provenance import bom_claims, bom_components

    model = bom_components.model_component(report)
    references = bom_components.reference_components(report)
    tools = [Component(type=ComponentType.APPLICATION, bom_ref="hfvet", name="hfvet", version=ctx.hfvet_version)]
    tools += [Component(type=ComponentType.LIBRARY, bom_ref=f"hfvet:scanner:{name}", name=name, version=version)
              for name, version in report.scanners.items()]
    metadata = BomMetaData(tools=ToolRepository(components=tools), timestamp=ctx.timestamp,
                           properties=[Property(name=k, value=v) for k, v in _properties(report, ctx).items()])
    dependencies = [Dependency(ref=model.bom_ref, dependencies=[Dependency(ref=r.bom_ref) for r in references]),
                    *(Dependency(ref=r.bom_ref) for r in references)]
    return Bom(serial_number=ctx.serial, metadata=metadata, components=[model, *references],
               dependencies=dependencies, definitions=bom_claims.definitions(report, ctx))


def _properties(report: Report, ctx: BomContext) -> dict[str, str]:
    policy = report.decision.policy
    found = {"hfvet:verdict": report.verdict.value, "hfvet:policy": policy.name}
    if policy.sha256:
        found["hfvet:policy_sha256"] = policy.sha256
    if ctx.report_id is not None:
        found["hfvet:report_id"] = str(ctx.report_id)
    if ctx.tier is not None:
        found["hfvet:tier"] = ctx.tier
    return found
