"""`hfvet policy ...` commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli.policy import policy_app
from app.core.policy.docs import render_policy_docs
from tests.unit.core.policy.helpers import MINIMAL, POLICIES, REV, write

runner = CliRunner()


def run(*args: str | Path) -> Any:
    return runner.invoke(policy_app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_check_validates_every_committed_policy() -> None:
    result = run("check", *sorted(POLICIES.glob("*.yaml")))
    assert result.exit_code == 0, result.output
    assert result.output.count("ok  ") == len(list(POLICIES.glob("*.yaml")))


def test_check_reports_file_and_line_and_exits_2(tmp_path: Path) -> None:
    bad = write(tmp_path, MINIMAL.replace("    decision: reject\n", "    decision: reject\n    sevrity: x\n"))
    result = run("check", bad)
    assert result.exit_code == 2
    assert f"{bad}:10: rules[0].sevrity: unknown key 'sevrity'" in result.output


LAX_APPROVE = MINIMAL.replace("""    decision: approve
default: review""", """    decision: approve
  - id: lax
    description: approves third parties
    when: {when}
    decision: approve
default: review""")


@pytest.mark.parametrize(("when", "probes"), [
    ('repo.tier == "third-party"', "a critical finding"),
    ("1 == 1", "an unscanned pickle"),
    ('repo.tier != "vendor-official" && size(findings) == 0', "an unscanned executable"),
    ('repo.tier == "third-party" && max_rank < severity.critical', "an executable binary"),
])
def test_check_warns_about_a_rule_that_approves_third_parties_whatever_they_hold(
    tmp_path: Path, when: str, probes: str
) -> None:
    path = write(tmp_path, LAX_APPROVE.format(when=when))
    result = run("check", path)
    assert result.exit_code == 0, result.output  # a warning, not an error
    assert "ok  " in result.output
    warning = next(line for line in result.output.splitlines() if line.startswith("warning:"))
    assert f"{path}: rule 'lax'" in warning and probes in warning
    assert "vendor-clean" not in result.output  # a vendor-only approval is not a third-party one


def test_check_warning_does_not_hide_errors(tmp_path: Path) -> None:
    lax = write(tmp_path, LAX_APPROVE.format(when="1 == 1"), "lax.yaml")
    bad = write(tmp_path, "name: x\n", "bad.yaml")
    result = run("check", lax, bad)
    assert result.exit_code == 2
    assert "warning:" in result.output


def test_check_does_not_warn_about_rules_that_look_at_the_content(tmp_path: Path) -> None:
    careful = LAX_APPROVE.format(when='repo.tier == "third-party" && max_rank <= severity.low && '
                                 'size(unscanned) == 0')
    result = run("check", write(tmp_path, careful), POLICIES / "default.yaml", POLICIES / "strict.yaml")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output


def test_check_warns_that_the_floor_does_not_hold_for_an_unsafe_policy() -> None:
    result = run("check", POLICIES / "unsafe-allow-all.yaml")
    assert result.exit_code == 0, result.output
    assert "warning:" in result.output and "rule 'allow-all'" in result.output
    assert "unsafe" in result.output


def test_test_runs_the_committed_cases() -> None:
    result = run("test", POLICIES / "tests")
    assert result.exit_code == 0, result.output
    assert "PASS default/01-vendor-clean-weights.yaml" in result.output
    assert " 0 failed" in result.output


def test_test_exits_1_on_a_failing_case(tmp_path: Path) -> None:
    (tmp_path / "mini.yaml").write_text(MINIMAL)
    case = tmp_path / "tests" / "mini" / "wrong.yaml"
    case.parent.mkdir(parents=True)
    case.write_text("description: wrong on purpose\ninput: {repo: {id: nvidia/x}}\n"
                    "expect: {verdict: reject, rules: [critical]}\n")
    result = run("test", tmp_path / "tests")
    assert result.exit_code == 1
    assert "FAIL mini/wrong.yaml" in result.output
    assert "got      approve [vendor-clean]" in result.output
    assert "0 passed, 1 failed" in result.output


def report(repo: str | None, findings: list[dict[str, Any]], files: list[dict[str, Any]]) -> dict[str, Any]:
    """A synthetic stored report (DESIGN §6.2 shape), as the interim policy recorded it."""
    return {
        "repo": repo, "revision": REV, "verdict": "review",
        "reasons": [{"rule": "medium", "decision": "review", "message": "1 medium finding(s)"}],
        "policy": {"name": "interim-severity", "sha256": None},
        "findings": [{"path": f["path"], "member": None, "scanner": "t", "rule": f["rule"],
                      "severity": f["severity"], "message": f["rule"], "evidence": None} for f in findings],
        "files": [{"path": f["path"], "size": 1, "sha256": None, "blob_id": None, "format": f["format"],
                   "scanned": True} for f in files],
        "stats": {"files": len(files), "repo_bytes": 1, "bytes_read": 1, "seconds": 0.1},
        "scanners": {},
    }


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    safetensors = [{"path": "model.safetensors", "format": "safetensors"}]
    pickled = [{"path": "pytorch_model.bin", "format": "pytorch-zip"}]
    stored = {
        "vendor-safetensors": report("nvidia/a", [], safetensors),          # approve under both
        "vendor-pickle": report("nvidia/b", [], pickled),                    # approve -> reject
        "third-party-unknown-global": report(                               # review -> review
            "canada-quant/c", [{"path": "pytorch_model.bin", "rule": "pickle-unknown-global",
                                "severity": "medium"}], safetensors),
    }
    for name, data in stored.items():
        (folder / f"{name}.json").write_text(json.dumps(data))
    return folder


def test_diff_default_vs_strict_lists_changed_verdicts(reports: Path) -> None:
    result = run("diff", POLICIES / "default.yaml", POLICIES / "strict.yaml", reports)
    assert result.exit_code == 0, result.output
    assert "1 of 3 verdict(s) change" in result.output
    assert "vendor-pickle.json" in result.output and "nvidia/b@" in result.output
    assert "+pickle-weights (reject)" in result.output
    assert "-vendor-official-clean (approve)" in result.output
    assert "vendor-safetensors.json" not in result.output


def test_diff_rejects_a_file_that_is_not_a_report(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}')
    result = run("diff", POLICIES / "default.yaml", POLICIES / "strict.yaml", junk)
    assert result.exit_code == 2
    assert "not a hfvet report" in result.output


@pytest.mark.parametrize(("change", "message"), [
    ({"reasons": 5}, "malformed report"),             # used to crash `explain` with a traceback
    ({"reasons": [1]}, "malformed report"),
    ({"policy": "default"}, "malformed report"),
    ({"files": [{"path": "model.bin", "format": "pickle"}]}, "without `scanned`"),  # not assumed scanned
    ({"files": [3]}, "without `scanned`"),
])
def test_malformed_report_is_a_clear_error_exit_2(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(report("nvidia/a", [], []) | change))
    for args in (("explain", bad), ("diff", POLICIES / "default.yaml", POLICIES / "strict.yaml", bad)):
        result = run(*args)
        assert result.exit_code == 2, result.output
        assert message in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_explain_shows_recorded_reasons_or_reevaluates(reports: Path) -> None:
    stored = reports / "vendor-pickle.json"
    recorded = run("explain", stored)
    assert recorded.exit_code == 0
    assert "recorded: review" in recorded.output and "interim-severity" in recorded.output
    replayed = run("explain", stored, "--policy", POLICIES / "strict.yaml")
    assert replayed.exit_code == 0, replayed.output
    assert "tier: vendor-official" in replayed.output
    assert "pickle-weights" in replayed.output and "fired" in replayed.output
    assert "verdict: reject  under strict" in replayed.output


def test_explain_names_the_floor_rule_that_overrode_the_policy(tmp_path: Path) -> None:
    stored = tmp_path / "critical.json"
    critical = [{"path": "pytorch_model.bin", "rule": "pickle-dangerous-global", "severity": "critical"}]
    stored.write_text(json.dumps(report("canada-quant/c", critical, [{"path": "pytorch_model.bin",
                                                                       "format": "pytorch-zip"}])))
    without_critical_rule = LAX_APPROVE.format(when="1 == 1").replace('"critical")', '"none")')
    result = run("explain", stored, "--policy", write(tmp_path, without_critical_rule))
    assert result.exit_code == 0, result.output
    assert "floor-critical: 1 critical finding(s) (e.g. pickle-dangerous-global in pytorch_model.bin)" \
        in result.output
    assert "verdict: reject  under mini" in result.output


def test_committed_readme_is_generated() -> None:
    committed = (POLICIES / "README.md").read_text(encoding="utf-8")
    assert committed == render_policy_docs(), "policies/README.md is stale: run `hfvet policy docs`"


# ---- issue 27: names as scan takes them, misspelt fields, empty diffs, piped width, examples -----------------


@pytest.fixture
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_POLICIES_DIR", str(POLICIES))


@pytest.mark.usefixtures("shipped")
def test_every_policy_command_takes_a_shipped_name_as_scan_does(reports: Path) -> None:
    by_name = run("diff", "default", "strict", reports)
    assert by_name.exit_code == 0, by_name.output
    assert by_name.output == run("diff", POLICIES / "default.yaml", POLICIES / "strict.yaml", reports).output
    explained = run("explain", reports / "vendor-pickle.json", "--policy", "strict")
    assert explained.exit_code == 0, explained.output
    assert "verdict: reject  under strict" in explained.output
    checked = run("check", "strict")
    assert checked.exit_code == 0, checked.output
    assert f"ok  {POLICIES / 'strict.yaml'}  strict" in checked.output


@pytest.mark.usefixtures("shipped")
@pytest.mark.parametrize("args", [("diff", "default", "strcit"), ("explain", "{report}", "--policy", "strcit"),
                                  ("check", "strcit")])
def test_a_misspelt_policy_name_gets_the_shipped_names_and_a_suggestion(reports: Path, args: tuple[str, ...]) -> None:
    result = run(*(a.format(report=reports / "vendor-pickle.json") for a in args))
    assert result.exit_code == 2, result.output
    assert "no shipped policy of that name" in result.output and "did you mean 'strict'?" in result.output


@pytest.mark.usefixtures("shipped")
def test_interim_is_refused_as_a_policy_argument_with_a_reason(reports: Path) -> None:
    result = run("diff", "interim", "default", reports)
    assert result.exit_code == 2
    assert "interim is the severity-only verdict, not a policy" in result.output


MISSPELT = MINIMAL.replace('f.severity == "critical"', 'f.severty == "critical"').replace(
    'repo.tier == "vendor-official"', 'repo.teir == "vendor-official"')


def test_check_refuses_misspelt_fields_naming_file_rule_field_and_suggestion(tmp_path: Path) -> None:
    bad = write(tmp_path, MISSPELT)
    result = run("check", bad)
    assert result.exit_code == 2, result.output  # a bad policy, as for any other error
    assert "ok  " not in result.output
    assert f"{bad}:8: rule 'critical': unknown field 'severty' of f (did you mean 'severity'?)" in result.output
    assert f"{bad}:12: rule 'vendor-clean': unknown field 'teir' of repo (did you mean 'tier'?)" in result.output


def test_explain_refuses_the_same_misspelt_fields_as_check(tmp_path: Path, reports: Path) -> None:
    bad = write(tmp_path, MISSPELT)
    result = run("explain", reports / "vendor-pickle.json", "--policy", bad)
    assert result.exit_code == 2
    assert "unknown field 'severty' of f (did you mean 'severity'?)" in result.output


def test_an_empty_diff_of_one_policy_says_they_are_the_same(reports: Path) -> None:
    result = run("diff", POLICIES / "default.yaml", POLICIES / "default.yaml", reports)
    assert result.exit_code == 0
    assert "0 of 3 verdict(s) change" in result.output
    assert "are the same policy (same sha256)" in result.output


def test_an_empty_diff_without_reports_says_what_to_give(tmp_path: Path) -> None:
    result = run("diff", POLICIES / "default.yaml", POLICIES / "strict.yaml")
    assert "0 of 0 verdict(s) change" in result.output
    assert "no reports replayed" in result.output and "--stored" in result.output


def test_an_empty_diff_over_reports_says_no_difference_and_what_to_try(reports: Path) -> None:
    result = run("diff", POLICIES / "default.yaml", POLICIES / "strict.yaml", reports / "vendor-safetensors.json")
    assert "0 of 1 verdict(s) change" in result.output
    assert "no difference: both policies give the same verdict on all 1 report(s)" in result.output
    assert "the rule changes above decide none of them" in result.output
    assert "--stored" in result.output and "hfvet policy test" in result.output


def test_piped_diff_and_explain_keep_long_names_whole(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # CliRunner's stdout is not a terminal: a pipe
    repo = "nvidia/DeepSeek-V4-Flash-NVFP4-" + "x" * 40
    stored = tmp_path / f"{'a-long-report-name-' * 4}.json"
    stored.write_text(json.dumps(report(repo, [], [{"path": "pytorch_model.bin", "format": "pytorch-zip"}])))
    diff = runner.invoke(policy_app, ["diff", str(POLICIES / "default.yaml"), str(POLICIES / "strict.yaml"),
                                      str(stored)])
    assert diff.exit_code == 0, diff.output
    assert stored.name in diff.output and f"{repo}@{REV[:12]}" in diff.output, diff.output
    explained = runner.invoke(policy_app, ["explain", str(stored), "--policy", str(POLICIES / "strict.yaml")])
    assert explained.exit_code == 0, explained.output
    assert f"{repo}@{REV[:12]}" in explained.output
    assert "A file loads through pickle (pickle, torch legacy or PyTorch zip); use safetensors." in explained.output


@pytest.mark.parametrize("command", ["check", "test", "explain", "diff", "docs"])
def test_every_policy_command_shows_examples_in_its_help(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    examples = result.output[result.output.index("Examples:"):].splitlines()
    assert any(line.strip().startswith(f"hfvet policy {command}") for line in examples)  # a line to copy
    assert any(line.strip().startswith("# ") for line in examples)  # each says what it does


def test_explain_given_a_repo_id_says_what_a_report_file_is() -> None:
    result = runner.invoke(policy_app, ["explain", "nvidia/Nemotron-Mini-Custom-Code"])
    assert result.exit_code == 2
    assert "hfvet vet ORG/NAME --format json > report.json" in " ".join(result.stderr.split()), result.stderr
