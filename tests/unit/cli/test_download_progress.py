"""The download progress bar: drawn on a terminal only."""

from app.cli.progress import download_progress


def test_download_progress_draws_only_on_a_terminal() -> None:
    with download_progress(100, "org/tiny", enabled=False) as off:
        assert off is None
    with download_progress(100, "org/tiny", enabled=True) as on:
        assert on is not None
        on("config.json", 60)  # advances a byte bar; must not raise
