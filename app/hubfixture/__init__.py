"""A faithful offline stand-in for the Hugging Face Hub, for tests, demos and air-gapped use.

    from app.hubfixture import FixtureHub
    with FixtureHub(root) as hub:
        HfApi(endpoint=hub.url).model_info("org/name", files_metadata=True)

See docs/fixture-hub.md for the on-disk layout (repos, revisions, .hub.json).
"""

from app.hubfixture.app import create_app
from app.hubfixture.server import AppServer, FixtureHub, running_hub, serve

__all__ = ["AppServer", "FixtureHub", "create_app", "running_hub", "serve"]
