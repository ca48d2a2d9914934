"""Every collected test reports an outcome, or the run fails (issue 27: `scripts/test.sh` collected 3,618 tests and
reported 3,609; schemathesis' cases shared one node id and xdist ran 2 of 11).

Counted where the summary is printed: by pytest itself, or under xdist by the controller (the workers only run
what they are sent, and their reports arrive at the controller). One outcome a test: its call, or its setup when
that failed or skipped (a teardown error is the same test again). Deselected tests are not collected ones.
Installed for the whole suite by tests/conftest.py; `-p tests.outcome_count` installs it in any pytest run
(tests/unit/test_outcome_count.py runs a small suite that loses a test).
"""

from __future__ import annotations

from collections import Counter

import pytest

NAME = "hfvet-outcome-count"
SHOWN = 10  # node ids named in the message at most


class OutcomeCount:
    def __init__(self) -> None:
        self.collected_ids: list[str] | None = None
        self.reported: Counter[str] = Counter()
        self.problem: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected_ids = [item.nodeid for item in session.items]  # after deselection

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self.collected_ids = list(ids)  # every worker collects the same tests (xdist checks), one is enough

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if type(report).__name__ == "SubtestReport":
            return  # a subtest is part of its test's outcome, not a test
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.reported[report.nodeid] += 1

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if _incomplete(session, exitstatus):
            return
        collected = session.testscollected
        reported = sum(self.reported.values())
        if collected == reported:
            return
        self.problem = [f"{collected} tests collected, {reported} reported an outcome: "
                        "every collected test must pass, fail or skip (tests/outcome_count.py)", *self._why()]
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _why(self) -> list[str]:
        ids = Counter(self.collected_ids or [])
        shared = sorted(i for i, n in ids.items() if n > 1)
        silent = sorted(i for i in ids if i not in self.reported)
        lines = []
        if shared:
            lines.append(f"node ids collected more than once ({len(shared)}): " + ", ".join(shared[:SHOWN]))
        if silent:
            lines.append(f"collected, never reported ({len(silent)}): " + ", ".join(silent[:SHOWN]))
        return lines

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.problem:
            terminalreporter.section("collected and reported tests differ", red=True, bold=True)
            for line in self.problem:
                terminalreporter.line(line, red=True)


def _incomplete(session: pytest.Session, exitstatus: int) -> bool:
    """A run that was not meant to report every test: collection only, stopped early, interrupted, broken."""
    if session.config.option.collectonly or session.shouldstop or session.shouldfail:
        return True
    if hasattr(session.config, "workerinput"):
        return True  # an xdist worker: the controller counts
    return exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


def install(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(NAME):
        config.pluginmanager.register(OutcomeCount(), NAME)


def pytest_configure(config: pytest.Config) -> None:
    install(config)
