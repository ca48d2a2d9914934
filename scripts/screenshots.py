"""Screenshots of the dashboard for the README and docs/dashboard.md, taken from real demo data.

    python scripts/screenshots.py [--out docs/img]

Builds the browser tests' live world (tests/integration/browser/world.py): the fixture hub over the
demo repos plus a third-party mirror with two revisions, a real `hfvet serve` that vetted them all,
then drives Debian's Chromium (headless, Playwright) over the pages and writes one PNG per page.
Run from the repo root with the dev extra installed; nothing leaves the loopback interface.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: import this checkout's app and tests

from playwright.sync_api import Page  # noqa: E402

from app.db.session import Store  # noqa: E402
from app.services.pulls import record_pull  # noqa: E402
from tests.integration.browser.world import APPROVED, MIRROR, REJECTED, World, chromium, live_world  # noqa: E402

WIDTH = 1280  # px: the viewport chromium() opens
MAX_HEIGHT = 1200  # px: a long page is cut here, so the image stays readable in the README


def log_in(page: Page, world: World, role: str) -> None:
    page.goto(f"{world.url}/ui/login")
    page.get_by_label("API token").fill(world.tokens[role])
    page.get_by_test_id("login").get_by_role("button", name="Log in").click()
    page.get_by_test_id("whoami").wait_for()


# Each visit opens its page and returns the y (px) where the picture starts.
def home(page: Page, world: World) -> float:
    page.goto(f"{world.url}/ui/?verdict=any")  # every demo repo: the approved one with its snippets, the rest not
    return 0


def repo(page: Page, world: World) -> float:
    page.goto(f"{world.url}/ui/repos/{REJECTED}")
    return 0


def findings(page: Page, world: World) -> float:
    """The same repo page further down: its findings grouped by file."""
    page.goto(f"{world.url}/ui/repos/{REJECTED}")
    box = page.get_by_role("heading", name="Findings", exact=True).bounding_box()
    if box is None:
        raise RuntimeError("the repo page has no Findings heading")
    return max(0.0, box["y"] - 12)


def reviews(page: Page, world: World) -> float:
    log_in(page, world, "reviewer")  # a reviewer sees the approve/reject forms
    page.goto(f"{world.url}/ui/reviews")
    return 0


def diff(page: Page, world: World) -> float:
    page.goto(f"{world.url}/ui/repos/{MIRROR}/diff?from={world.shas['mirror-v1']}&to={world.shas['mirror-v2']}")
    return 0


def vets(page: Page, world: World) -> float:
    page.goto(f"{world.url}/ui/vets")
    return 0


def pulls(page: Page, world: World) -> float:
    """Who pulled what: pulls of the approved repo, recorded as the Hub endpoint records each file it serves
    (the world pulls nothing through /hub itself)."""
    store = Store(world.store_url)
    sha = world.shas[APPROVED]
    for actor, path, size, source in (("ci-runner", "config.json", 1_482, "upstream"),
                                      ("ci-runner", "model.safetensors", 7_340_032, "upstream"),
                                      ("alice", "config.json", 1_482, "cache")):
        record_pull(store, actor, APPROVED, sha, path, size, source)
    store.close()
    page.goto(f"{world.url}/ui/pulls")
    return 0


def job(page: Page, world: World) -> float:
    """The job page of the rejected quant's vet, finished: its verdict badge and links."""
    page.goto(f"{world.url}/ui/vets")
    page.locator(f'[data-testid="job-row"][data-repo="{REJECTED}"]').get_by_role("link").first.click()
    page.get_by_test_id("job-verdict").wait_for()
    return 0


def policy(page: Page, world: World) -> float:
    page.goto(f"{world.url}/ui/policy")
    return 0


SHOTS: dict[str, Callable[[Page, World], float]] = {
    "home": home,
    "repo": repo,
    "findings": findings,
    "reviews": reviews,
    "diff": diff,
    "vets": vets,
    "pulls": pulls,
    "job": job,
    "policy": policy,
}


def shoot(page: Page, top: float, path: Path) -> None:
    height = min(MAX_HEIGHT, int(page.evaluate("document.documentElement.scrollHeight") - top))
    page.screenshot(path=path, clip={"x": 0, "y": top, "width": WIDTH, "height": height}, full_page=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNGs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hfvet-screenshots-") as tmp:
        work = Path(tmp)
        with live_world(work) as world, chromium(work / "profile") as context:
            for name, visit in SHOTS.items():
                context.clear_cookies()
                page = context.new_page()
                shoot(page, visit(page, world), args.out / f"{name}.png")
                page.close()
                print(f"wrote {args.out / f'{name}.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
