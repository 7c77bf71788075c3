"""The examples of README.md and docs/*.md, run: every fenced ```console block holds `$ command` lines, each
followed by what it prints (stdout and stderr, as a terminal shows them). tests/test_doc_examples.py runs every
block and fails when an output drifts; timings are masked on both sides. After a change that alters what a
command prints, rewrite the outputs in place with

    python -m tests.doc_examples --update            # every page
    python -m tests.doc_examples --update docs/solve.md

and read the diff before committing it.

Commands run in bash, from a scratch directory that holds the repository's `instances/` and `docs/` (so an
example may write files there), with the installed `podplan` and `kubectl-podplan` first on PATH; `kubectl
podplan ...` runs `kubectl-podplan ...`, as kubectl does with a plugin. A block whose fence is preceded by the
line `<!-- doc-example: cluster=FILE context=NAME -->` runs against a local API server stub serving FILE's
objects (tests/kube_stub.py), with a kubeconfig whose current context is NAME and has no namespace.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs")
DIRECTIVE = re.compile(r"^<!-- doc-example: (?P<args>.*?) -->$")
# a duration as podplan prints it: 0.07s, 12.3 s, "wall_seconds": 0.002 (never a pod-name fragment: no letter,
# digit, '-' or '.' before it)
TIMING = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?\s?s\b")
WALL = re.compile(r'("?(?:wall_seconds|seconds)"?:\s*)\d+(?:\.\d+)?')
PRELUDE = 'kubectl() { if [ "$1" = podplan ]; then shift; kubectl-podplan "$@"; else command kubectl "$@"; fi; }\n'
TIMEOUT = 120


@dataclass(frozen=True)
class Command:
    line: str  # without the "$ "
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    page: Path
    start: int  # 0-based index of the line after the opening fence
    end: int  # 0-based index of the closing fence
    commands: tuple[Command, ...]
    options: dict[str, str]

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.start}"


def pages() -> list[Path]:
    found: list[Path] = []
    for name in PAGES:
        path = ROOT / name
        found += sorted(path.rglob("*.md")) if path.is_dir() else [path]
    return found


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            directive = DIRECTIVE.match(lines[i - 1]) if i else None
            options = dict(a.split("=", 1) for a in directive["args"].split()) if directive else {}
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            found.append(Block(page, i + 1, j, parse(lines[i + 1:j], page, i + 1), options))
            i = j
        i += 1
    return found


def parse(body: list[str], page: Path, start: int) -> tuple[Command, ...]:
    commands: list[Command] = []
    line: str | None = None
    out: list[str] = []
    for text in body:
        if text.startswith("$ "):
            if line is not None:
                commands.append(Command(line, tuple(trim(out))))
            line, out = text[2:], []
        elif line is None:
            raise ValueError(f"{page.relative_to(ROOT)}:{start + 1}: a console block must start with a '$ ' line")
        else:
            out.append(text)
    if line is not None:
        commands.append(Command(line, tuple(trim(out))))
    return tuple(commands)


def trim(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def mask(lines: tuple[str, ...] | list[str]) -> list[str]:
    return [WALL.sub(r"\1<T>", TIMING.sub("<T>", line)) for line in lines]


@contextmanager
def environment(block: Block) -> Iterator[tuple[Path, dict[str, str]]]:
    """A scratch directory holding instances/ and docs/, and the environment the block's commands run in."""
    with tempfile.TemporaryDirectory(prefix="podplan-doc-") as tmp:
        cwd = Path(tmp)
        for name in ("instances", "docs"):
            (cwd / name).symlink_to(ROOT / name)
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "PODPLAN_COMPLETE")}
        env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", PYTHONUNBUFFERED="1",
                   COLUMNS="200", HOME=str(cwd), LC_ALL="C.UTF-8")
        running = None
        if "cluster" in block.options:
            sys.path.insert(0, str(Path(__file__).parent))
            import yaml
            from kube_stub import KubeStub, kubeconfig
            docs = [d for d in yaml.safe_load_all((ROOT / block.options["cluster"]).read_text()) if d]
            items = [i for d in docs for i in (d["items"] if d.get("kind") == "List" else [d])]
            running = KubeStub.of(items).start()
            env["KUBECONFIG"] = str(kubeconfig(cwd / "kubeconfig", running.url,
                                               context=block.options.get("context", "stub")))
        try:
            yield cwd, env
        finally:
            if running is not None:
                running.stop()


def run(block: Block) -> list[list[str]]:
    """What each command of the block prints (stdout and stderr interleaved, trailing blank lines dropped)."""
    outputs: list[list[str]] = []
    with environment(block) as (cwd, env):
        for command in block.commands:
            done = subprocess.run(["bash", "-c", PRELUDE + command.line], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
            outputs.append(trim(done.stdout.split("\n")))
    return outputs


def update(page: Path) -> int:
    """Rewrite every console block's outputs on `page` with what the commands print now; the number changed."""
    lines = page.read_text(encoding="utf-8").split("\n")
    changed = 0
    for block in reversed(blocks(page)):  # from the end, so that earlier blocks' line numbers stay valid
        body: list[str] = []
        for command, output in zip(block.commands, run(block)):
            if body and not body[-1].startswith("$ "):  # a blank line after an output, none after a silent command
                body.append("")
            body += [f"$ {command.line}", *output]
            changed += mask(command.expected) != mask(output)
        lines[block.start:block.end] = body
    page.write_text("\n".join(lines), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.doc_examples", description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the outputs in place")
    parser.add_argument("pages", nargs="*", type=Path, help="pages (default: README.md and docs/)")
    args = parser.parse_args(argv)
    chosen = [p.resolve() for p in args.pages] or pages()
    drifted = 0
    for page in chosen:
        if args.update:
            n = update(page)
            print(f"{page.relative_to(ROOT)}: {n} output(s) rewritten")
            drifted += n
        else:
            for block in blocks(page):
                for command, output in zip(block.commands, run(block)):
                    if mask(command.expected) != mask(output):
                        drifted += 1
                        print(f"{block.id}: $ {command.line}: output drifted")
    return 0 if args.update or not drifted else 1


if __name__ == "__main__":
    sys.exit(main())
