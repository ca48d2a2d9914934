"""Derive which methods of a user class a runtime calls while it loads a checkpoint.

Reads a runtime's own source with ``ast`` (never imports it), starts at the entry points a deploy
calls (``AutoConfig/AutoModel*/AutoTokenizer/AutoProcessor.from_pretrained``, ``pipeline()``, ...)
and walks the loader code: ``self.x()`` / ``cls.x()`` / ``super().x()`` inside the loader classes,
``config.x()``, ``model.x()``, ``tokenizer.x()`` ... on objects that are user classes, module
functions and loader classes it calls, and what formatting an object runs (``f"{config}"``,
``str()``, ``repr()`` -> ``__format__`` / ``__str__`` / ``__repr__``), ``len()``, ``==``, iteration.
Every method name called on a user-subclassable object on those paths is a method a shipped class
can override to run code at load time; the first path that reaches it is kept as evidence.

    python scripts/derive_load_methods.py --transformers PKG_DIR [-o app/core/scanners/data/load_time_methods.json]

``PKG_DIR`` is the package folder (``.../transformers`` holding ``modeling_utils.py``): an
unpacked wheel or ``src/transformers`` of a checkout. Protocol methods Python itself calls (module
``__getattr__``, metaclass ``__call__``...) are kept by hand in ``PROTOCOL`` with their reasons.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SITES = 3  # call sites kept per method: the first path, and two more places that call it
Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Spec:
    """One runtime: where its loader code lives, what users subclass, where a deploy enters."""

    name: str
    files: tuple[str, ...]  # globs under the package folder: the loader modules
    roots: tuple[str, ...]  # loader base classes a shipped class subclasses
    entries: tuple[str, ...]  # "Class.method" or "module:function"
    receivers: tuple[tuple[str, str], ...]  # (regex on a variable / attribute name, family root)
    # Roots with a base outside the parsed source (PreTrainedModel is an nn.Module): any method name
    # called on them counts, since the unparsed base may define it.
    external: tuple[str, ...] = ()


TRANSFORMERS = Spec(
    name="transformers",
    files=("*.py", "generation/*.py", "models/auto/*.py", "pipelines/*.py", "integrations/peft.py",
           "integrations/accelerate.py", "utils/hub.py", "utils/generic.py"),
    roots=("PreTrainedConfig", "PretrainedConfig", "PreTrainedModel", "PreTrainedTokenizerBase",
           "ProcessorMixin", "ImageProcessingMixin", "FeatureExtractionMixin", "GenerationConfig",
           "BaseVideoProcessor", "Pipeline"),
    entries=("AutoConfig.from_pretrained", "_BaseAutoModelClass.from_pretrained", "_BaseAutoModelClass.from_config",
             "AutoTokenizer.from_pretrained", "AutoProcessor.from_pretrained", "AutoImageProcessor.from_pretrained",
             "AutoFeatureExtractor.from_pretrained", "AutoVideoProcessor.from_pretrained",
             "pipelines:pipeline"),
    receivers=(
        (r"(\w+_)?generation_config", "GenerationConfig"),
        (r"(\w+_)?config(_class)?", "PreTrainedConfig"),
        (r"(\w+_)?tokenizer(_class)?", "PreTrainedTokenizerBase"),
        (r"(\w+_)?image_processor(_class)?", "ImageProcessingMixin"),
        (r"(\w+_)?video_processor(_class)?", "BaseVideoProcessor"),
        (r"(\w+_)?feature_extractor(_class)?", "FeatureExtractionMixin"),
        (r"(\w+_)?processor(_class)?", "ProcessorMixin"),
        (r"(\w+_)?model(_class)?", "PreTrainedModel"),
        (r"pipeline_class", "Pipeline"),
    ),
    external=("PreTrainedModel",),
)
SPECS = {spec.name: spec for spec in (TRANSFORMERS,)}  # vLLM, diffusers, sentence-transformers: not yet

# Methods Python itself calls on what the loaders touch; no loader source line names them.
# scope: "class" (a method of any class), "module" (a module-level function), "metaclass" (a method
# of a class used as a metaclass: it would be wrong to count every class's __call__).
PROTOCOL: dict[str, tuple[str, str]] = {
    "__getattr__": ("class module", "a module-level __getattr__ (PEP 562) supplies the class: transformers' "
                    "dynamic_module_utils.get_class_in_module returns getattr(module, class_name); on a class, "
                    "every attribute the loaders read that is missing"),
    "__getattribute__": ("class", "every attribute read on the config, model or tokenizer"),
    "__setattr__": ("class", "every attribute a constructor sets (PreTrainedConfig.__init__ sets dozens)"),
    "__set_name__": ("class", "runs when the class body that holds the descriptor runs (on import)"),
    "__init_subclass__": ("class", "runs when a subclass is defined (on import)"),
    "__class_getitem__": ("class", "runs when a class is subscripted at module level (annotations, generics)"),
    "__mro_entries__": ("class", "runs when an object is listed as a base class (on import)"),
    "__init__": ("class", "runs on instantiation"),
    "__new__": ("class", "runs on instantiation"),
    "__post_init__": ("class", "dataclass hook: the generated __init__ calls it"),
    "__get__": ("class", "descriptor protocol: runs on every read of the attribute the loaders do"),
    "__set__": ("class", "descriptor protocol: runs on every assignment the constructors do"),
    "__setstate__": ("class", "unpickling and copy.deepcopy restore state through it"),
    "__reduce__": ("class", "copy.deepcopy (PreTrainedConfig.to_dict deep-copies its __dict__) calls it"),
    "__reduce_ex__": ("class", "copy.deepcopy (PreTrainedConfig.to_dict deep-copies its __dict__) calls it"),
    "__deepcopy__": ("class", "copy.deepcopy of configs and their values while loading"),
    "__call__": ("metaclass", "a metaclass __call__ runs when the loaders instantiate the class (cls(...))"),
    "__prepare__": ("metaclass", "runs before the class body executes (on import)"),
    "__instancecheck__": ("metaclass", "the loaders' isinstance() checks on config and model classes"),
    "__subclasscheck__": ("metaclass", "the loaders' issubclass() checks"),
}

# Builtins and operators whose argument's class decides what runs.
CALL_PROTOCOL = {"str": ("__str__", "__repr__"), "repr": ("__repr__",), "format": ("__format__", "__str__"),
                 "len": ("__len__",), "iter": ("__iter__",), "hash": ("__hash__",), "bool": ("__bool__", "__len__"),
                 "deepcopy": ("__deepcopy__", "__reduce_ex__"), "copy": ("__copy__", "__reduce_ex__"),
                 "vars": (), "dir": ("__dir__",), "setattr": ("__setattr__",), "getattr": ("__getattr__",),
                 "delattr": ("__delattr__",), "sorted": ("__iter__",), "list": ("__iter__", "__len__"),
                 "dict": ("keys", "__getitem__"), "tuple": ("__iter__",), "set": ("__iter__",)}
CONSTRUCTOR = re.compile(r"cls|(\w+_)?class")  # cls(...), config_class(...), model_class(...)
COMPARE_PROTOCOL = {ast.Eq: "__eq__", ast.NotEq: "__ne__", ast.In: "__contains__", ast.NotIn: "__contains__",
                    ast.Lt: "__lt__", ast.Gt: "__gt__", ast.LtE: "__le__", ast.GtE: "__ge__"}


@dataclass
class ClassInfo:
    name: str
    module: str
    bases: list[str]
    methods: dict[str, Function]


@dataclass
class Index:
    """Classes and module functions of the loader modules, and each module's imported names."""

    classes: dict[str, list[ClassInfo]] = field(default_factory=dict)
    functions: dict[tuple[str, str], Function] = field(default_factory=dict)
    imports: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # module -> name -> (mod, name)
    owner: dict[Function, tuple[str, ClassInfo | None]] = field(default_factory=dict)  # fn -> (module, class)
    aliases: dict[str, str] = field(default_factory=dict)  # module-level Name = OtherClass


@dataclass(frozen=True)
class Reach:
    """How a method was first reached: the chain of loader functions and the call that names it."""

    path: tuple[str, ...]
    module: str
    function: str
    line: int
    via: str


def build_index(sources: dict[str, str]) -> Index:
    """``sources``: dotted module name (``configuration_utils``, ``models.auto.auto_factory``) -> text."""
    index = Index()
    for module, text in sorted(sources.items()):
        tree = ast.parse(text)
        index.imports[module] = _imports(module, tree)
        for stmt in _top_level(tree.body):
            if isinstance(stmt, FUNCTIONS):
                index.functions[(module, stmt.name)] = stmt
                index.owner[stmt] = (module, None)
            elif isinstance(stmt, ast.ClassDef):
                methods = {s.name: s for s in _top_level(stmt.body) if isinstance(s, FUNCTIONS)}
                info = ClassInfo(stmt.name, module, [_base_name(b) for b in stmt.bases], methods)
                index.classes.setdefault(stmt.name, []).append(info)
                for fn in methods.values():
                    index.owner[fn] = (module, info)
            elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                  and isinstance(stmt.value, ast.Name)):
                index.aliases[stmt.targets[0].id] = stmt.value.id  # PreTrainedTokenizer = PythonBackend
    return index


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        if isinstance(stmt, ast.If | ast.Try):
            yield from _top_level(stmt.body + stmt.orelse + [s for h in getattr(stmt, "handlers", []) for s in h.body])
        else:
            yield stmt


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _imports(module: str, tree: ast.Module) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    package = module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] if node.level > 1 else package
                origin = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            else:
                origin = (node.module or "").removeprefix("transformers.")
            for alias in node.names:
                out[alias.asname or alias.name] = (origin, alias.name)
    return out


class Deriver:
    def __init__(self, index: Index, spec: Spec) -> None:
        self.index, self.spec = index, spec
        self.children: dict[str, set[str]] = {}
        for infos in index.classes.values():
            for info in infos:
                for base in info.bases:
                    self.children.setdefault(index.aliases.get(base, base), set()).add(info.name)
        self.families = {root: self._family(root) for root in spec.roots if root in index.classes}
        self.user_classes = set().union(*self.families.values()) if self.families else set()
        self.receivers = [(re.compile(pattern), root) for pattern, root in spec.receivers]
        self.external_bases = {root for root in spec.external if root in self.families}
        self.found: dict[str, list[Reach]] = {}
        self.seen: set[Function] = set()

    def _family(self, root: str) -> set[str]:
        """The root, every loader class that subclasses it and every base (mixin) they have."""
        below, stack = set(), [root]
        while stack:
            name = stack.pop()
            if name not in below:
                below.add(name)
                stack.extend(self.children.get(name, ()))
        family, stack = set(), list(below)
        while stack:
            name = stack.pop()
            if name not in family and name in self.index.classes:
                family.add(name)
                stack.extend(self.index.aliases.get(b, b) for info in self.index.classes[name] for b in info.bases)
        return family

    def run(self) -> dict[str, list[Reach]]:
        queue: deque[tuple[Function, tuple[str, ...]]] = deque()
        for entry in self.spec.entries:
            for fn in self._entry(entry):
                queue.append((fn, (entry,)))
        while queue:
            fn, path = queue.popleft()
            if fn in self.seen:
                continue
            self.seen.add(fn)
            for target, name, via, line in self._calls(fn):
                where = self._label(fn)
                sites = self.found.setdefault(name, []) if name else []
                if name and len(sites) < SITES and all(r.function != where for r in sites):
                    sites.append(Reach(path, self.index.owner[fn][0], where, line, via))
                for callee in target:
                    if callee not in self.seen:
                        queue.append((callee, (*path, self._label(callee))))
        return self.found

    def _entry(self, entry: str) -> list[Function]:
        if ":" in entry:
            module, name = entry.split(":")
            fn = self.index.functions.get((module, name)) or self.index.functions.get((f"{module}.__init__", name))
            return [fn] if fn else []
        cls, method = entry.split(".")
        return [i.methods[method] for i in self.index.classes.get(cls, []) if method in i.methods]

    def _label(self, fn: Function) -> str:
        module, info = self.index.owner[fn]
        return f"{info.name}.{fn.name}" if info else f"{module}.{fn.name}"

    def _calls(self, fn: Function) -> Iterator[tuple[list[Function], str | None, str, int]]:
        """(functions it runs, user-overridable method name or None, source text, line) per call."""
        module, info = self.index.owner[fn]
        own_family = self._family_of(info.name) if info else None
        for node in ast.walk(fn):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Call):
                yield from self._call(node, module, info, own_family, line)
            elif isinstance(node, ast.FormattedValue):
                family = self._receiver(node.value, own_family)
                if family is not None:
                    names = ("__repr__",) if node.conversion == ord("r") else ("__format__", "__str__", "__repr__")
                    yield from self._protocol(names, family, f"f-string {{{ast.unparse(node.value)}}}", line)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                family = self._receiver(node.value, own_family)  # self._init_weights passed as a callback,
                if family is not None:                            # or a property read
                    targets, name, via, _ = self._method(family, node.attr, ast.unparse(node), line)
                    if targets:
                        yield targets, name, via, line
            elif isinstance(node, ast.Compare):
                for op, right in zip(node.ops, node.comparators, strict=True):
                    family = self._receiver(right if isinstance(op, ast.In | ast.NotIn) else node.left, own_family)
                    if family is not None and type(op) in COMPARE_PROTOCOL:
                        yield from self._protocol((COMPARE_PROTOCOL[type(op)],), family, ast.unparse(node), line)
            elif isinstance(node, ast.For | ast.comprehension):
                family = self._receiver(node.iter, own_family)
                if family is not None:
                    yield from self._protocol(("__iter__",), family, f"for ... in {ast.unparse(node.iter)}",
                                              node.iter.lineno)

    def _call(self, node: ast.Call, module: str, info: ClassInfo | None, own_family: set[str] | None,
              line: int) -> Iterator[tuple[list[Function], str | None, str, int]]:
        func, text = node.func, ast.unparse(node.func)
        if isinstance(func, ast.Name):
            if func.id in CALL_PROTOCOL and node.args:
                family = self._receiver(node.args[0], own_family)
                if family is not None:
                    yield from self._protocol(CALL_PROTOCOL[func.id], family, f"{func.id}({ast.unparse(node.args[0])})",
                                              line)
            family = self._receiver(func, own_family) if CONSTRUCTOR.fullmatch(func.id) else None
            if family is not None:  # cls(...), config_class(...): constructs a user class
                yield self._method(family, "__init__", f"{text}(...)", line)
                return
            yield self._plain(module, func.id), None, text, line
            return
        if isinstance(func, ast.Call) and _called_getattr(func):  # getattr(config, "name")(...)
            family = self._receiver(func.args[0], own_family)
            if family is not None:
                yield self._method(family, func.args[1].value, f"{text}(...)", line)  # type: ignore[attr-defined]
        if not isinstance(func, ast.Attribute):
            return
        owner = func.value
        if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
            family = own_family or set()
            yield self._method(family, func.attr, f"super().{func.attr}()", line, collect=info is not None
                               and info.name in self.user_classes)
            return
        family = self._receiver(owner, own_family)
        if family is not None:
            yield self._method(family, func.attr, f"{text}()", line)
            return
        if isinstance(owner, ast.Name):
            target = self._resolve_class(module, owner.id)
            if target:
                yield [i.methods[func.attr] for i in target if func.attr in i.methods], None, text, line
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls") and own_family is not None:
            yield self._method(own_family, func.attr, f"{text}()", line, collect=False)

    def _protocol(self, names: Iterable[str], family: set[str], via: str,
                  line: int) -> Iterator[tuple[list[Function], str | None, str, int]]:
        for name in names:
            yield self._method(family, name, via, line)

    def _method(self, family: set[str], name: str, via: str, line: int,
                collect: bool = True) -> tuple[list[Function], str | None, str, int]:
        targets = [i.methods[name] for cls in sorted(family) for i in self.index.classes.get(cls, [])
                   if name in i.methods]
        # A name the loader classes define (or an object protocol method) is one a subclass overrides;
        # other names on such receivers are dict keys, strings or attributes of something else.
        overridable = bool(targets) or _is_dunder(name) or bool(family & self.external_bases)
        user = collect and overridable and bool(family & self.user_classes)
        return targets, (name if user else None), via, line

    def _plain(self, module: str, name: str) -> list[Function]:
        if (module, name) in self.index.functions:
            return [self.index.functions[(module, name)]]
        origin = self.index.imports.get(module, {}).get(name)
        if origin and origin in self.index.functions:
            return [self.index.functions[origin]]
        classes = self._resolve_class(module, name)  # constructing a loader class runs its __init__
        return [i.methods["__init__"] for i in classes if "__init__" in i.methods]

    def _resolve_class(self, module: str, name: str) -> list[ClassInfo]:
        infos = self.index.classes.get(name, [])
        origin = self.index.imports.get(module, {}).get(name)
        local = [i for i in infos if i.module == module or (origin and i.module == origin[0])]
        return local or (infos if origin else [])

    def _family_of(self, cls: str) -> set[str]:
        families = [f for f in self.families.values() if cls in f]
        return set().union(*families) if families else {cls} | self._ancestors(cls)

    def _ancestors(self, cls: str) -> set[str]:
        out, stack = set(), [cls]
        while stack:
            for info in self.index.classes.get(stack.pop(), []):
                for base in info.bases:
                    if base not in out:
                        out.add(base)
                        stack.append(base)
        return out

    def _receiver(self, node: ast.expr, own_family: set[str] | None) -> set[str] | None:
        """The loader family an expression's value belongs to, when it is a user class or instance."""
        if isinstance(node, ast.Name) and node.id in ("self", "cls"):
            return own_family if own_family and own_family & self.user_classes else None
        tail = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if tail is None:
            return None
        for pattern, root in self.receivers:
            if pattern.fullmatch(tail) and root in self.families:
                return self.families[root]
        return None


def _called_getattr(node: ast.Call) -> bool:
    return (isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def read_sources(package: Path, spec: Spec) -> dict[str, str]:
    out: dict[str, str] = {}
    for pattern in spec.files:
        for path in sorted(package.glob(pattern)):
            rel = path.relative_to(package).with_suffix("")
            out[".".join(rel.parts)] = path.read_text(encoding="utf-8")
    return out


def package_version(package: Path) -> str:
    init = package / "__init__.py"
    if init.is_file():
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__"
                                                     for t in node.targets) and isinstance(node.value, ast.Constant)):
                return str(node.value.value)
    return "unknown"


def derive(sources: dict[str, str], spec: Spec) -> dict[str, list[Reach]]:
    return Deriver(build_index(sources), spec).run()


def _file(reach: Reach) -> str:
    return reach.module.replace(".", "/") + ".py"


def to_json(results: dict[str, tuple[str, Path, dict[str, list[Reach]]]]) -> dict[str, object]:
    derived: dict[str, dict[str, object]] = {}
    for runtime, (version, _, found) in sorted(results.items()):
        for name, sites in sorted(found.items()):
            if name in derived:
                continue
            first = sites[0]
            derived[name] = {"runtime": f"{runtime} {version}", "path": list(first.path),
                             "file": _file(first), "function": first.function, "line": first.line, "via": first.via,
                             "also": [f"{_file(r)}:{r.line} {r.function}: {r.via}" for r in sites[1:]]}
    return {
        "about": "Methods a runtime calls on user classes while loading a checkpoint, derived by "
                 "scripts/derive_load_methods.py from the runtimes' own source (ast, never imported); "
                 "protocol: methods Python itself calls, kept by hand with their reasons.",
        "runtimes": {runtime: version for runtime, (version, _, _) in sorted(results.items())},
        "derived": derived,
        "protocol": {name: {"scope": scope, "reason": reason} for name, (scope, reason) in sorted(PROTOCOL.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for spec in SPECS.values():
        parser.add_argument(f"--{spec.name}", type=Path, dest=spec.name.replace("-", "_"))
    parser.add_argument("-o", "--output", type=Path, default=Path("app/core/scanners/data/load_time_methods.json"))
    args = parser.parse_args(argv)
    results: dict[str, tuple[str, Path, dict[str, list[Reach]]]] = {}
    for spec in SPECS.values():
        package = getattr(args, spec.name.replace("-", "_"))
        if package is None:
            continue
        found = derive(read_sources(package, spec), spec)
        results[spec.name] = (package_version(package), package, found)
        print(f"{spec.name} {results[spec.name][0]}: {len(found)} methods", file=sys.stderr)
    if not results:
        parser.error("give at least one runtime's package folder")
    args.output.write_text(json.dumps(to_json(results), indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
