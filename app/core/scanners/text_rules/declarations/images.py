"""Container image references as the runtimes that pull them read them, normalised to one
``registry/path:tag`` form the judge (``Upstreams.official_image``, ``image_source``) understands.

- enroot (src/docker.sh ``docker::_parse_uri``) and pyxis (``--container-image``, which prefixes
  ``docker://`` and hands the value to enroot) take ``[USER@][REGISTRY#]IMAGE[:TAG]``: ``#`` separates
  the registry, so ``nvcr.io#nvidia/pytorch:24.01-py3`` is ``nvcr.io/nvidia/pytorch:24.01-py3``; they
  also take Docker's ``REGISTRY/IMAGE`` when the first part has a ``.`` or ``:``. ``USER@`` names the
  login only. A value starting with ``.`` or ``/`` is a squashfs file to pyxis, not an image.
- Apptainer/Singularity: ``docker://`` and ``oras://`` are OCI registries (scheme dropped);
  ``library://`` (Sylabs library) and ``shub://`` are not, so they keep their scheme.
- Helm values: ``{registry, repository, tag, digest}`` joined as the Bitnami ``common.images.image``
  helper does, ``global.imageRegistry`` first; no registry means Docker Hub.
"""

from __future__ import annotations

import re

_SCHEMES = ("docker://", "dockerd://", "podman://", "oras://")
_KEEP_SCHEMES = ("library://", "shub://")
# Docker's reference grammar, loosened on case (the judge lowercases): [host[:port]/]path[:tag][@digest].
_REFERENCE = re.compile(
    r"^(?:[A-Za-z0-9.-]+(?::\d+)?/)?[A-Za-z0-9]+(?:[._-]+[A-Za-z0-9]+)*(?:/[A-Za-z0-9]+(?:[._-]+[A-Za-z0-9]+)*)*"
    r"(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-fA-F]{32,64})?$")
# Values under an `image` key that are pictures or files, not container images.
_FILES = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|bmp|tiff?|ico|pdf|sqsh|sif|simg|img|tar|gz|zip|md|json|ya?ml)$",
                    re.I)


def normalise(raw: str) -> str | None:
    """The image a runtime pulls for ``raw``, or None for paths, variables and non-images."""
    value = raw.strip().strip("\"'").replace("\\#", "#")
    if not value or "$" in value or "{" in value or value.startswith((".", "/", "~")):
        return None
    kept = next((s for s in _KEEP_SCHEMES if value.lower().startswith(s)), None)
    if kept:
        rest = value[len(kept):].lstrip("/")
        return f"{kept}{rest}" if _REFERENCE.match(rest) else None
    scheme = next((s for s in _SCHEMES if value.lower().startswith(s)), None)
    if scheme:
        value = value[len(scheme):]
    elif "://" in value:
        return None
    value = _enroot_form(value)
    if not _REFERENCE.match(value) or _FILES.search(value.split("@")[0]):
        return None
    return value


def _enroot_form(value: str) -> str:
    """``[USER@][REGISTRY#]IMAGE`` as ``REGISTRY/IMAGE``: the login dropped, ``#`` made ``/``."""
    head, hash_sign, image = value.partition("#")
    if hash_sign:
        registry = head.rpartition("@")[2]
        return f"{registry}/{image}" if registry else image
    user, at_sign, rest = value.partition("@")
    if at_sign and "/" not in user and ":" not in user and not rest.lower().startswith("sha256:"):
        return rest
    return value


def helm_image(fields: dict[str, str], global_registry: str | None) -> str | None:
    """One image from a values mapping ``{registry, repository, tag, digest}`` (``image`` is also
    accepted for the repository, as some charts name it), or None without a repository."""
    repository = fields.get("repository") or fields.get("image") or fields.get("name")
    if not repository:
        return None
    registry = global_registry or fields.get("registry") or ""
    reference = f"{registry.rstrip('/')}/{repository}" if registry else repository
    tag, digest = fields.get("tag"), fields.get("digest")
    if digest:
        reference += f"@{digest}"
    elif tag:
        reference += f":{tag}"
    return normalise(reference)
