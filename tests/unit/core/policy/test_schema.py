"""Policy files: schema errors name the file and line; every committed policy validates."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.core.policy import PolicyError, load_policy

from .helpers import MINIMAL, POLICIES, policy, write


def load_error(tmp_path: Path, text: str) -> PolicyError:
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    return info.value


def test_unknown_key_names_file_and_line(tmp_path: Path) -> None:
    text = MINIMAL.replace("    decision: reject\n", "    decision: reject\n    severity: high\n")
    err = load_error(tmp_path, text)
    assert [(i.line, i.message) for i in err.issues] == [(10, "rules[0].severity: unknown key 'severity'")]
    assert str(err).startswith(f"{tmp_path / 'policy.yaml'}:10: ")


def test_unknown_top_level_key(tmp_path: Path) -> None:
    err = load_error(tmp_path, MINIMAL + "rulez: []\n")
    assert (err.issues[0].line, err.issues[0].message) == (15, "rulez: unknown key 'rulez'")


def test_bad_cel_names_the_rule_line(tmp_path: Path) -> None:
    text = MINIMAL.replace('max_rank <= severity.low', 'max_rank <=> severity.low')
    err = load_error(tmp_path, text)
    assert len(err.issues) == 1
    assert err.issues[0].line == 12
    assert "rules[1].when: invalid CEL at expression line 1" in err.issues[0].message


def test_misspelled_variable_is_caught_at_load(tmp_path: Path) -> None:
    err = load_error(tmp_path, MINIMAL.replace("findings.exists", "fidnings.exists"))
    assert (err.issues[0].line, err.issues[0].message) == (8, "unknown variable or function 'fidnings'")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "{}\n"])
def test_empty_policy_is_an_error(tmp_path: Path, text: str) -> None:
    assert "empty policy" in str(load_error(tmp_path, text))


def test_policy_without_rules_is_an_error(tmp_path: Path) -> None:
    text = MINIMAL.split("rules:")[0] + "rules: []\n"
    assert "rules: List should have at least 1 item" in str(load_error(tmp_path, text))


def test_yaml_syntax_error_and_duplicate_key_have_lines(tmp_path: Path) -> None:
    assert load_error(tmp_path, "name: [unclosed\n").issues[0].line == 2
    dup = load_error(tmp_path, MINIMAL + "default: reject\n")
    assert (dup.issues[0].line, dup.issues[0].message) == (15, "invalid YAML: duplicate key 'default'")


@pytest.mark.parametrize("default", ["approve", "{third-party: approve}"])
def test_third_party_default_may_not_be_approve(tmp_path: Path, default: str) -> None:
    err = load_error(tmp_path, MINIMAL.replace("default: review", f"default: {default}"))
    assert "default for third-party repos may not be approve" in str(err)


def test_unconditional_approve_requires_unsafe(tmp_path: Path) -> None:
    text = MINIMAL.replace('repo.tier == "vendor-official" && max_rank <= severity.low', '"true"')
    assert "requires `unsafe: true`" in str(load_error(tmp_path, text))


def test_unquoted_yaml_bool_gets_a_hint(tmp_path: Path) -> None:
    text = MINIMAL.replace('repo.tier == "vendor-official" && max_rank <= severity.low', "true")
    assert "rules[1].when: YAML read True as a non-string: quote it" in str(load_error(tmp_path, text))


def test_unsafe_flag_must_match_the_name(tmp_path: Path) -> None:
    assert "starts with `unsafe-`" in str(load_error(tmp_path, MINIMAL + "unsafe: true\n"))


def test_duplicate_and_reserved_rule_ids(tmp_path: Path) -> None:
    err = load_error(tmp_path, MINIMAL.replace("id: vendor-clean", "id: critical"))
    assert (err.issues[0].line, "duplicated or reserved" in err.issues[0].message) == (10, True)
    assert "reserved" in str(load_error(tmp_path, MINIMAL.replace("id: vendor-clean", "id: default")))


@pytest.mark.parametrize(("waiver", "message"), [
    ("{repo: a/b, revision: '*', reason: r, approver: me, expires: 2030-01-01}", "exactly one of"),
    ("{repo: a/b, revision: main, rule: critical, reason: r, approver: me, expires: 2030-01-01}",
     "waivers[0].revision"),
    ("{repo: a/b, revision: '*', rule: nope, reason: r, approver: me, expires: 2030-01-01}",
     "unknown rule 'nope'"),
])
def test_bad_waivers(tmp_path: Path, waiver: str, message: str) -> None:
    err = load_error(tmp_path, MINIMAL + f"waivers:\n  - {waiver}\n")
    assert message in str(err)
    assert err.issues[0].line == 16


def test_org_in_two_tiers_is_an_error(tmp_path: Path) -> None:
    text = MINIMAL.replace("vendor-official: [nvidia]", "vendor-official: [nvidia]\n  trusted: [NVIDIA]")
    assert "both vendor-official and trusted" in str(load_error(tmp_path, text))


@pytest.mark.parametrize("path", sorted(POLICIES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_committed_policy_validates(path: Path) -> None:
    loaded = load_policy(path)
    assert loaded.name == path.stem
    assert len(loaded.sha256) == 64


def test_sha256_ignores_formatting_but_not_meaning(tmp_path: Path) -> None:
    original = load_policy(POLICIES / "default.yaml")
    document = yaml.safe_load((POLICIES / "default.yaml").read_text())
    document["tiers"]["vendor-official"].reverse()
    document["rules"][1]["when"] = document["rules"][1]["when"].replace(" == ", "  ==\n   ")
    document["default"] = {"vendor-official": "review", "trusted": "review", "third-party": "review"}
    reformatted = "# reformatted\n" + yaml.safe_dump(document, sort_keys=True, default_flow_style=True)
    assert policy(tmp_path, reformatted).sha256 == original.sha256

    document["rules"][1]["decision"] = "review"
    changed = yaml.safe_dump(document)
    assert policy(tmp_path, changed).sha256 != original.sha256


def test_whitespace_inside_cel_strings_is_meaning(tmp_path: Path) -> None:
    a = policy(tmp_path, MINIMAL.replace('"critical"', '"crit ical"'))
    b = policy(tmp_path, MINIMAL.replace('"critical"', '"crit  ical"'))
    assert a.sha256 != b.sha256
