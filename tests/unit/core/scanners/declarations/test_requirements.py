"""requirements.txt reader, case by case from pip/_internal/req/req_file.py (join_lines,
ignore_comments, break_args_options, optparse's long-option abbreviations) and pip's
"Requirements File Format" docs. Every string is inert text."""

from __future__ import annotations

from app.core.scanners.text_rules.declarations import requirements
from tests.unit.core.scanners.declarations.helpers import pairs


def test_the_links_scanner_requirements_case_is_read_structurally() -> None:
    # The existing scanner test's file (test_links_scanner.test_requirements_file): every source kept.
    text = ("torch==2.7.0\nflash-attn>=2.7\n--extra-index-url https://wheels.example.invalid/simple\n"
            "vllm @ git+https://github.com/someone/vllm-fork.git@main\ntransfomers==4.50\n"
            "requests  # transfomers in a comment is ignored\n")
    found = requirements.read(text)
    assert pairs(found) == [
        ("package", "torch==2.7.0"), ("package", "flash-attn>=2.7"),
        ("index", "https://wheels.example.invalid/simple"),
        ("git", "git+https://github.com/someone/vllm-fork.git@main"),
        ("package", "transfomers==4.50"), ("package", "requests"),
    ]
    index = found[2]
    assert index.extra and index.where == "line 3" and "--extra-index-url" in index.via


def test_index_url_replaces_pypi_and_find_links_sits_beside_it() -> None:
    # pip: --index-url replaces the default index (not extra); -f/--find-links adds pages beside it.
    found = requirements.read("-i https://pypi.example.invalid/simple\n--find-links=https://w.example.invalid/\n"
                              "--trusted-host pypi.example.invalid\n")
    assert [(d.value, d.extra) for d in found] == [
        ("https://pypi.example.invalid/simple", False), ("https://w.example.invalid/", True),
        ("pypi.example.invalid", False)]
    assert {d.kind for d in found} == {"index"}


def test_attached_short_values_and_abbreviated_long_options() -> None:
    # optparse takes `-iURL` and any unambiguous prefix of a long option (`--extra`, `--ind`,
    # `--trusted`); `--no` is ambiguous (--no-index, --no-binary) and pip refuses it.
    text = ("-ihttps://a.example.invalid/simple\n--extra https://b.example.invalid/simple\n"
            "--ind=https://c.example.invalid/simple\n--trusted c.example.invalid\n--no x\n")
    assert [d.value for d in requirements.read(text)] == [
        "https://a.example.invalid/simple", "https://b.example.invalid/simple",
        "https://c.example.invalid/simple", "c.example.invalid"]


def test_continuation_lines_join_without_a_space_and_keep_the_first_number() -> None:
    # join_lines strips the backslash and joins as is; a comment line is never continued.
    text = "# header \\\n--extra-index-url \\\n    https://x.example.invalid/simple\nvllm\n"
    found = requirements.read(text)
    assert pairs(found) == [("index", "https://x.example.invalid/simple"), ("package", "vllm")]
    assert found[0].where == "line 2" and found[1].where == "line 4"


def test_comments_need_whitespace_before_the_hash() -> None:
    # COMMENT_RE `(^|\s+)#.*$`: `#egg=` in a URL is a fragment, ` # x` a comment.
    found = requirements.read("-e git+https://github.com/someone/tool.git#egg=tool # dev\n# vlllm\n")
    assert pairs(found) == [("git", "git+https://github.com/someone/tool.git#egg=tool")]


def test_editables_direct_references_and_bare_urls() -> None:
    text = ("-e git+ssh://git@gitlab.com/someone/vllm.git@main#egg=vllm\n--editable=./local\n"
            "kern @ https://example.invalid/kern-1.0-cp311-linux_x86_64.whl ; sys_platform == 'linux'\n"
            "https://example.invalid/pkg-1.0.tar.gz\n./wheels/local-1.0-py3-none-any.whl\n"
            "hg+https://hg.example.invalid/repo#egg=r\n")
    assert pairs(requirements.read(text)) == [
        ("git", "git+ssh://git@gitlab.com/someone/vllm.git@main#egg=vllm"),
        ("url", "https://example.invalid/kern-1.0-cp311-linux_x86_64.whl"),
        ("url", "https://example.invalid/pkg-1.0.tar.gz"),
        ("git", "hg+https://hg.example.invalid/repo#egg=r")]


def test_markers_are_dropped_from_package_values() -> None:
    found = requirements.read("torch>=2.7; sys_platform == 'linux'\nnumpy ; python_version < '3.12'\n")
    assert pairs(found) == [("package", "torch>=2.7"), ("package", "numpy")]


def test_included_requirement_files() -> None:
    # pip fetches `-r URL` over HTTP; a local include is a file of its own (read when scanned).
    found = requirements.read("-r https://gist.githubusercontent.com/someone/0a/raw/req.txt\n-r base.txt\n"
                              "-c constraints.txt\n")
    assert pairs(found) == [("url", "https://gist.githubusercontent.com/someone/0a/raw/req.txt")]
    assert "--requirement" in found[0].via


def test_index_options_on_a_requirement_line_are_recorded() -> None:
    # pip ignores them there, other readers of the file may not: recorded (fail closed).
    found = requirements.read("torch --index-url https://pypi.example.invalid/simple --hash=sha256:00\n")
    assert pairs(found) == [("package", "torch"), ("index", "https://pypi.example.invalid/simple")]


def test_malformed_lines_never_raise() -> None:
    text = "--index-url\n-e\n\"unbalanced 'quote\n--extra-index-url 'x y\n\\\n" + "\\\n" * 100 + "\x00\n"
    found = requirements.read(text)
    assert all(d.kind in ("index", "package", "url", "git") for d in found)


def test_a_huge_file_is_read_up_to_the_cap() -> None:
    found = requirements.read("pkg-a\n" * 50_000)
    assert len(found) == 2000  # MAX_DECLARATIONS
