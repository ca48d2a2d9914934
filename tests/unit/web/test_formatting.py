"""How a diff's lines are marked for the page."""

from __future__ import annotations

from app.web.formatting import diff_rows, size


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
