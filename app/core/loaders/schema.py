"""The loader map's shape: one entry per runtime surface, as data (``loader_map.yaml``).

An entry says which files a runtime reads, how a value in them names something (``form``), what
that something is (``kind``), what gates it (``gate``) and where in the runtime's source this was
read (``source``). Extraction is done by a small set of readers (``read`` names one); adding a
runtime surface that one of them can read is adding an entry.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from app.core.closure import Gate, Kind


class Read(StrEnum):
    FILE = "file"  # the matched file itself is the item
    JSON = "json"  # values at ``fields`` of a JSON file
    YAML = "yaml"  # values at ``fields`` of a YAML file (safe_load)
    FLAGS = "flags"  # command-line flags (``--tokenizer X``; ``vllm serve --model``: only after that command)
    CALLS = "calls"  # Python calls (``from_pretrained("org/x", trust_remote_code=True)``) in code and cards
    PTH = "pth"  # ``.pth`` lines that ``site`` executes (those starting with ``import``)
    ENTRY_POINTS = "entry-points"  # package entry points in pyproject.toml / setup.cfg / setup.py
    JSON_HOLDER = "json-holder"  # the JSON objects that hold a value at ``fields`` (each config with an ``auto_map``)
    FRONT_MATTER = "front-matter"  # values at ``fields`` of a card's YAML front matter (``---`` block)
    ARGS_YAML = "args-yaml"  # a launcher's YAML config whose keys are its flags (``vllm serve --config``)
    FLAG_JSON = "flag-json"  # a key of a JSON flag value (``--speculative-config '{"model": ...}'``)
    CALL_PATHS = "call-paths"  # the first string argument of a call, a file of this repo


class Form(StrEnum):
    """How a value names its target."""

    CLASS_REF = "class-ref"  # ``module.Class`` here, or ``org/name--module.Class`` in another repo
    REPO_ID = "repo-id"  # ``org/name`` on the Hub (a local path or a bare name is not a repo)
    DIFFUSERS_COMPONENT = "diffusers-component"  # ``[library, ClassName]``: a library, or ``<name>/<library>.py`` here
    DIFFUSERS_PIPELINE = "diffusers-pipeline"  # ``[module, Class]`` or a name: a module here, a repo, a community name
    PY_EXPRESSION = "py-expression"  # a Python expression the runtime eval()s (ultralytics ``activation``)
    ULTRALYTICS_LAYER = "ultralytics-layer"  # a layer name looked up in ``ultralytics.nn.tasks`` and called
    KERAS_OBJECT = "keras-object"  # ``{"module": m, "class_name": c}``: ``m.c`` deserialize_keras_object resolves
    MODULE_PATH = "module-path"  # a folder or module path inside the repo
    DOTTED = "dotted"  # ``package.module.Callable`` (Hydra ``_target_``), imported as named
    PACKAGE = "package"  # an installable requirement
    SELF = "self"  # the file itself
    AUTO_MAP_HOME = "auto-map-home"  # a config whose ``auto_map`` modules come from its ``_name_or_path`` repo
    ST_MODULE = "st-module"  # a sentence-transformers ``modules.json`` type: library, class-ref or dotted import
    REPO_FILE = "repo-file"  # a file of this repo, relative to the config's folder (a weights file name)


class Source(BaseModel):
    """Where the behaviour was read: the runtime's repository, file, function and version."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    repo: str
    file: str
    function: str
    version: str


class Runtime(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    name: str
    how: str = Field(description="How a deploy reaches it: the call or command.")


class Surface(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(description="`runtime.surface`, unique.")
    runtime: str
    what: str = Field(description="One line: what the runtime does with it.")
    files: tuple[str, ...] = Field(description="Repo-relative path patterns (fnmatch; `*` crosses folders).")
    read: Read
    fields: tuple[str, ...] = Field(default=(), description="JSON/YAML paths (`a.*.b`, `**.key`) or flags/calls.")
    form: Form = Form.SELF
    kind: Kind
    gate: Gate
    revision_key: str | None = Field(None, description="The key beside a repo value that holds the revision "
                                     "the runtime passes with it (PEFT's `revision`).")
    members: tuple[str, ...] = Field(default=(), description="Members of a plain tar matched by `files` (a "
                                     "`.nemo`) that the runtime extracts; `read` applies to each (fnmatch).")
    known: tuple[str, ...] = Field(default=(), description="Values naming libraries the runtime imports as "
                                   "installed (`diffusers`, `transformers`): not code of the repo.")
    carries_trust: bool = Field(False, description="A repo it names is loaded with the user's trust_remote_code.")
    runs: tuple[str, ...] = Field(default=(), description="For code: what the runtime calls (`Class.method`, "
                                  "`*` for every function).")
    source: Source
    no_benign: str | None = Field(None, description="Why no vendor would use this surface benignly (then "
                                  "only hostile cases are listed).")
    cases: tuple[str, ...] = Field(description="Corpus cases (`family/name`, tests/corpus) that exercise it: "
                                   "hostile ones a loader following it would be attacked by, benign vendor shapes.")


class RuntimeFile(BaseModel):
    """One file of the map: a runtime and its surfaces (``map/<runtime>.yaml``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    runtime: Runtime
    surfaces: tuple[Surface, ...]


class LoaderMap(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    runtimes: tuple[Runtime, ...]
    surfaces: tuple[Surface, ...]
