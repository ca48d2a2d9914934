"""Container images of HPC launchers and image tools. Syntax from the tools' own sources:
NVIDIA/pyxis README (`--container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH`, `\\#` in #SBATCH
lines) and pyxis_slurmstepd.c (a value starting with `.` or `/` is a squashfs path; anything
else gets `docker://` and goes to enroot); NVIDIA/enroot src/docker.sh `docker::_parse_uri`
(REGISTRY#IMAGE; REGISTRY/IMAGE only when the first part has `.` or `:`; USER@ is the login);
Apptainer's definition-file docs (`Bootstrap:` agents, `From:`, `Registry:`, `Namespace:`)."""

from __future__ import annotations

import pytest

from app.core.scanners.text_rules.declarations import launchers, read_declarations
from app.core.scanners.text_rules.declarations.images import normalise
from tests.unit.core.scanners.declarations.helpers import pairs


@pytest.mark.parametrize(("raw", "image"), [
    ("nvcr.io#nvidia/pytorch:24.01-py3", "nvcr.io/nvidia/pytorch:24.01-py3"),
    ("nvcr.io\\#nvidia/pytorch:21.12-py3", "nvcr.io/nvidia/pytorch:21.12-py3"),
    ("someone@ghcr.io#someone/img:1", "ghcr.io/someone/img:1"),
    ("docker://$oauthtoken@nvcr.io#nim/x:1", None),  # a variable: unknown until run
    ("docker://deploy@nvcr.io#nim/x:1", "nvcr.io/nim/x:1"),
    ("docker://ubuntu:24.04", "ubuntu:24.04"),
    ("docker.io#ubuntu:24.04", "docker.io/ubuntu:24.04"),
    ("ubuntu@sha256:" + "c" * 64, "ubuntu@sha256:" + "c" * 64),
    ("oras://ghcr.io/someone/sif:1", "ghcr.io/someone/sif:1"),
    ("library://someone/default/x:1", "library://someone/default/x:1"),
    ("./images/pytorch.sqsh", None), ("/lustre/images/x.sqsh", None), ("x.sif", None),
    ("https://example.invalid/x", None), ("", None),
])
def test_normalise(raw: str, image: str | None) -> None:
    assert normalise(raw) == image


def test_sbatch_script() -> None:
    text = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --container-image nvcr.io\\#nvidia/pytorch:24.01-py3\n"
            "#SBATCH --container-mounts=/data:/data\n"
            "srun --container-image=someone/trainer:dsv4 --container-mounts=/x:/x python train.py\n"
            "srun --container-image=/lustre/img.sqsh true\n")
    found = read_declarations("train.sbatch", text)
    assert pairs(found) == [("image", "nvcr.io/nvidia/pytorch:24.01-py3"), ("image", "someone/trainer:dsv4")]
    assert found[0].via == "#SBATCH --container-image" and found[0].where == "line 3"


def test_python_job_scripts_carry_sbatch_lines_too() -> None:
    # sbatch reads #SBATCH comments of any script, Python included.
    text = "#!/usr/bin/env python3\n#SBATCH --container-image=registry.example.invalid#team/img:2\nprint(1)\n"
    assert pairs(read_declarations("job.py", text)) == [("image", "registry.example.invalid/team/img:2")]


def test_enroot_and_apptainer_commands_in_a_readme() -> None:
    text = ("```\nenroot import -o x.sqsh docker://someone@nvcr.io#nvidia/nemo:24.05\n"
            "apptainer pull oras://ghcr.io/someone/tools:1\nsingularity exec docker://someone/base:2 python\n"
            "apptainer build x.sif library://someone/col/img:3\n```\n")
    found = read_declarations("README.md", text)
    assert pairs(found) == [("image", "nvcr.io/nvidia/nemo:24.05"), ("image", "ghcr.io/someone/tools:1"),
                            ("image", "someone/base:2"), ("image", "library://someone/col/img:3")]
    assert [d.via for d in found] == ["enroot", "apptainer", "singularity", "apptainer"]


def test_definition_files() -> None:
    text = ("Bootstrap: docker\nRegistry: https://registry.example.invalid\nNamespace: team\nFrom: base:1\n\n"
            "%post\n  apptainer pull docker://someone/extra:1\n  From: not-a-header:1\n")
    found = read_declarations("Singularity.def", text)
    assert sorted(pairs(found)) == [("image", "registry.example.invalid/team/base:1"), ("image", "someone/extra:1")]
    assert pairs(launchers.read_definition("Bootstrap: library\nFrom: someone/col/img:1\n")) == [
        ("image", "library://someone/col/img:1")]
    assert list(launchers.read_definition("Bootstrap: debootstrap\nFrom: noble\n")) == []
    assert pairs(launchers.read_definition("bootstrap: docker\nfrom: nvcr.io/nvidia/pytorch:24.01-py3\n")) == [
        ("image", "nvcr.io/nvidia/pytorch:24.01-py3")]


def test_text_without_markers_is_skipped_cheaply() -> None:
    assert list(launchers.read("plain text\n" * 10_000)) == []
