"""How a diff's lines, fullwidth characters, severities and hub links read on a page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from huggingface_hub import constants

from app.settings import Settings
from app.web.formatting import diff_rows, hub_tree, plural, readable, severity_counts, size, when


def test_a_changed_line_pair_marks_only_what_differs() -> None:
    rows = diff_rows(["--- a", "+++ b", "@@ -1 +1 @@", "-{{ a }}{{ b }}", "+{{ a }}{{ c }}", " same"])
    assert [r[0] for r in rows] == ["head", "head", "head", "del", "add", "ctx"]
    assert rows[3] == ("del", "-{{ a }}{{ ", "b", " }}")
    assert rows[4] == ("add", "+{{ a }}{{ ", "c", " }}")
    assert rows[5] == ("ctx", " same", "", "")


def test_lines_added_alone_are_not_marked_inside() -> None:
    assert diff_rows(["+new line"]) == [("add", "+new line", "", "")]
    rows = diff_rows(["-one", "-two", "+three"])  # not a one-for-one change: shown whole
    assert all(changed == "" for _, _, changed, _ in rows)


def test_sizes_read_as_binary_units() -> None:
    assert (size(512), size(2048), size(5 << 30), size(None)) == ("512 B", "2.0 KiB", "5.0 GiB", "")


def test_fullwidth_forms_read_as_marked_ascii_and_everything_else_is_escaped() -> None:
    html = str(readable("<\uff5cUser\uff5c> & \u2581 \uff1c"))
    bar = '<abbr class="wide" title="U+FF5C FULLWIDTH VERTICAL LINE">|</abbr>'
    assert html == f"&lt;{bar}User{bar}&gt; &amp; \u2581 " \
                   '<abbr class="wide" title="U+FF1C FULLWIDTH LESS-THAN SIGN">&lt;</abbr>'
    assert str(readable(None)) == "" and str(readable("<b>")) == "&lt;b&gt;"


def test_severity_counts_list_every_level_the_worst_first() -> None:
    counts = severity_counts([{"severity": "high"}, {"severity": "info"}, {"severity": "high"}])
    assert counts == [("critical", 0), ("high", 2), ("medium", 0), ("low", 0), ("info", 1)]


def test_hub_links_use_the_configured_endpoint_else_huggingface_hubs_default() -> None:
    sha = "9f" * 20
    mirror = Settings(HF_ENDPOINT="https://mirror.example.test/")
    assert hub_tree("org/name", sha, mirror) == f"https://mirror.example.test/org/name/tree/{sha}"
    assert hub_tree("org/name", None, mirror) == "https://mirror.example.test/org/name"
    default = Settings().model_copy(update={"hf_endpoint": None})
    assert hub_tree("org/name", sha, default) == f"{constants.ENDPOINT.rstrip('/')}/org/name/tree/{sha}"


def test_times_read_in_utc_whether_a_datetime_or_the_hubs_iso_string() -> None:
    at = datetime(2026, 5, 2, 22, 48, 9, tzinfo=UTC)
    assert when(at) == when("2026-05-02T22:48:09Z") == when("2026-05-02T22:48:09.000Z") == "2026-05-02 22:48 UTC"
    assert when(at.astimezone(timezone(timedelta(hours=2)))) == "2026-05-02 22:48 UTC"
    assert when(None) == "" and when("not a time") == "not a time"


def test_one_reads_singular_anything_else_plural() -> None:
    assert (plural(1, "repo"), plural(0, "repo"), plural(2, "commit")) == ("repo", "repos", "commits")
