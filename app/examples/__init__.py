"""Example repos (generated at run time, nothing binary committed) and benchmark-scale builders.

`build_examples(root)` writes the demo's repos in the fixture-hub layout
(`root/<org>/<name>/` + `.hub.json`); each `ExampleRepo` says what a vet must conclude.
"""

from app.examples.catalog import EXAMPLES, build_example, build_examples, example
from app.examples.spec import ExampleRepo

__all__ = ["EXAMPLES", "ExampleRepo", "build_example", "build_examples", "example"]
