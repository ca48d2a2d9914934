"""Credentials in URLs are masked wherever a URL is printed: userinfo, and credential query parameters."""

from __future__ import annotations

import pytest

from app.redact import mask_url, scrub


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql+psycopg://hfvet:s3cret@db:5432/hfvet", "postgresql+psycopg://hfvet:***@db:5432/hfvet"),
        ("postgresql+psycopg://hfvet:p@ss@db/hfvet", "postgresql+psycopg://hfvet:***@db/hfvet"),  # unescaped @
        ("postgresql+psycopg://hfvet:p%40ss@db/hfvet", "postgresql+psycopg://hfvet:***@db/hfvet"),
        ("postgresql+psycopg://db/hfvet?user=hfvet&password=s3cret",
         "postgresql+psycopg://db/hfvet?user=hfvet&password=***"),
        ("postgresql://db/h?sslmode=require&PASSWORD=s3cret&sslpassword=k3y",
         "postgresql://db/h?sslmode=require&PASSWORD=***&sslpassword=***"),
        ("postgresql://u:a@db/h?password=b#frag", "postgresql://u:***@db/h?password=***#frag"),
        ("https://s3cret-token@hfvet.internal/", "https://***@hfvet.internal/"),
        ("https://hfvet.internal/?token=s3cret", "https://hfvet.internal/?token=***"),
        ("sqlite:////home/me/.local/share/hfvet/hfvet.db", "sqlite:////home/me/.local/share/hfvet/hfvet.db"),
        ("postgresql+psycopg://postgres@127.0.0.1/test", "postgresql+psycopg://***@127.0.0.1/test"),
        ("postgresql://db/h?application_name=hfvet", "postgresql://db/h?application_name=hfvet"),
        ("not a url", "not a url"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_scrub_masks_the_url_and_its_credentials_wherever_a_message_quotes_them() -> None:
    url = "postgresql://hfvet:s3cr%40t@db/h?password=0ther-s3cret"
    message = f'bad URL {url}; password "s3cr@t" refused; then 0ther-s3cret; raw s3cr%40t'
    scrubbed = scrub(message, url)
    assert "s3cr" not in scrubbed and "0ther" not in scrubbed
    assert "db/h" in scrubbed and "refused" in scrubbed
