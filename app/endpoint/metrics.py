"""The Hub endpoint's Prometheus metrics (GET /metrics, beside the API's: app.api.metrics)."""

from __future__ import annotations

from prometheus_client import Counter

BYTES_SERVED = Counter("hfvet_hub_bytes_served", "File bytes the Hub endpoint sent, by source (cache, upstream).",
                       ["source"])
CACHE_HITS = Counter("hfvet_hub_cache_hits", "File GETs served from the blob cache.")
CACHE_MISSES = Counter("hfvet_hub_cache_misses", "File GETs the blob cache did not hold (counted only with a cache).")
REFUSALS = Counter("hfvet_hub_refusals", "Hub endpoint answers refused, by reason (denied, not-vetted, moved, "
                   "not-in-manifest, bad-token...); paths it does not serve at all are not counted.", ["reason"])
VERIFICATION_FAILURES = Counter("hfvet_hub_verification_failures",
                                "Upstream files whose bytes did not match the approved manifest (the body was cut).")
UPSTREAM_FAILURES = Counter("hfvet_hub_upstream_failures", "File streams the upstream hub broke off or refused.")
