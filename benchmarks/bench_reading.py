"""Reading the input: PyYAML's CSafeLoader (the reference) against podplan's reader (models.fastyaml), then
the parse into a Cluster, on the files given (generate them with `podplan generate`).

    python benchmarks/bench_reading.py /tmp/g1000.yaml [/tmp/g5000.yaml ...]

Prints CPU seconds (what a busy machine does not inflate) and wall seconds, and the load average: on a shared
machine, compare CPU seconds.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import yaml

from podplan.models import fastyaml
from podplan.models.loader import cluster_of, gc_paused, read_documents


def timed(f):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    out = f()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def pyyaml_docs(text: str) -> list[object]:
    loader = yaml.CSafeLoader(text) if fastyaml.HAS_LIBYAML else yaml.SafeLoader(text)
    try:
        out = []
        while loader.check_data():
            out.append(loader.get_data())
        return out
    finally:
        loader.dispose()


def main(paths: list[str]) -> None:
    print(f"libyaml: {fastyaml.HAS_LIBYAML}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| file | MB | PyYAML cpu s | PyYAML wall s | podplan cpu s | podplan wall s | parse cpu s | parse wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for p in paths:
        text = Path(p).read_text(encoding="utf-8")
        reference, ref_cpu, ref_wall = timed(lambda: pyyaml_docs(text))
        with gc_paused():  # as models.loader.read_paths reads (the reference's objects would be walked otherwise)
            docs, cpu, wall = timed(lambda: read_documents(text, p))
        assert [d.body for d in docs] == reference, "the fast reader differs from PyYAML"
        del reference
        _, parse_cpu, parse_wall = timed(lambda: cluster_of(docs, [p]))
        print(f"| {Path(p).name} | {len(text) / 1e6:.1f} | {ref_cpu:.1f} | {ref_wall:.1f} | {cpu:.1f} | {wall:.1f} | "
              f"{parse_cpu:.1f} | {parse_wall:.1f} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
