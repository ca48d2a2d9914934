"""schemathesis over the OpenAPI schema, sent to the live server: whatever it sends, no answer is a 5xx.

The schema is built from the app at collection time (schemathesis' lazy fixture loader does not run
under this pytest); a test checks the live server serves exactly that schema.
"""

from __future__ import annotations

import httpx
import hypothesis
import schemathesis
from schemathesis.checks import not_a_server_error

from app.server import create_app
from tests.integration.api.conftest import Live

EXAMPLES_PER_OPERATION = 40  # bounded: the whole run stays well under a minute
OPENAPI = create_app().openapi()  # no lifespan runs: nothing is opened
schema = schemathesis.openapi.from_dict(OPENAPI)


def test_the_live_server_serves_this_schema(sqlite_live: Live) -> None:
    assert httpx.get(f"{sqlite_live.url}/openapi.json").json() == OPENAPI


@schema.parametrize()
@hypothesis.settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                     suppress_health_check=list(hypothesis.HealthCheck))
def test_no_request_makes_a_server_error(case: schemathesis.Case, sqlite_live: Live) -> None:
    response = case.call(base_url=sqlite_live.url, headers=sqlite_live.auth("admin"), timeout=30)
    case.validate_response(response, checks=[not_a_server_error])
