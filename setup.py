"""The one compiled part of podplan: the YAML line reader's loop (models/_blockloop.c), built where a C compiler
is. Reading a 5,000-node cluster's 2 million lines takes 0.6 s of CPU with it, 1.3 s without. Optional: without a compiler the
install goes on and podplan reads with the same loop in Python (models/blockyaml.py). Everything else about the
package is in pyproject.toml.

PODPLAN_PURE_PYTHON=1 builds a pure wheel without it (py3-none-any), which installs on any platform's Python:
the one the krew archive ships (krew/package.py)."""
import os

from setuptools import Extension, setup

EXTENSIONS = [] if os.environ.get("PODPLAN_PURE_PYTHON") else [
    Extension("podplan.models._blockloop", ["models/_blockloop.c"], optional=True)]

setup(ext_modules=EXTENSIONS)
