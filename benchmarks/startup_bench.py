"""Start-up: the whole process of ``drasat solve`` on the README example, and what its floor is made of.

Run: ``python benchmarks/startup_bench.py [--runs N] [--floor] [--against COMMIT]`` (``call_bench.py
--startup`` prints the same first table). Issue 9 asks for under 0.2 s, after a plain ``pip install .``:
measure in such an install (``python -m venv /tmp/v && /tmp/v/bin/pip install . && /tmp/v/bin/python
benchmarks/startup_bench.py --floor``); an editable install adds its import finder (~12 ms) to every start.

Every command runs as a fresh process; they take turns (a busy moment of the machine hits all alike) and
each line gives the minimum and the median of ``--runs`` runs, wall and CPU. Byte code is written (as an
installed drasat has it: ``pip install`` compiles) and a first run of each command, not counted, writes
it: with ``PYTHONDONTWRITEBYTECODE`` set, every module edited since its .pyc was written would be
compiled again at each start.

``--floor`` adds a ladder: each line imports what the line above it did and more, with the garbage
collector paused as ``drasat``'s entry point pauses it while it imports, so each step's increase is
what that layer adds (shared standard modules count where they are first imported: click's own share,
imported after pydantic, is ~6 ms). Measured 2026-12-01 after ``pip install .`` into a fresh venv
(Python 3.11, two shared cores): ms wall, minimum of 11 runs; in brackets the increase in million
instructions that valgrind counts (``valgrind --tool=callgrind``: the same from run to run):

    python -c pass                     10   (38 in all)
    + click                            32   (+109)
    + from pydantic import BaseModel   75   (+229)
    + a first model class             110   (+170: pydantic.fields and .types 100, importlib.metadata
                                               65, which pydantic's plugin loader imports, the class 11)
    + drasat's models (96 classes)    151   (+238)
    + PyYAML, the loader, the CLI     165   (+119: ``import yaml`` alone 89, compiling its regexes)
    + the solver modules solve uses   191   (+152: 39 dataclasses, ~17 ms to create)
    + lark and the CEL syntax         208   (+72)
    + the cel-expr engine             217   (+53: protobuf, which cel-expr-python imports itself)
    drasat solve, whole               246   (+162, 1,341 in all: reading the files, lark's parser
                                               from its cache 43, its lexer's regexes built at the
                                               first parses 55, the CEL environments 16, the solve)

So pydantic, drasat's models and click alone come to ~150 ms, and with PyYAML, which reading YAML cannot
do without, to ~165 ms before a file is read: 0.2 s leaves ~35 ms for what comes after, which takes ~80
ms today: the solver's modules (~26 ms, mostly creating dataclasses), CEL's start (~45 ms: lark's
import, its cached parser, its lexer's regexes at the first parse, protobuf) and the run. Reaching 0.2 s
needs ~46 ms more: either the solve path off pydantic (~100 ms: its import, its first class, the
models), or both of: the cel-expr engine reading cel-cpp's own checked AST (``Expression.serialize()``,
its messages declared as ``solver/cel/check_proto.py`` declares the device's) instead of a second parse
by lark (~35 ms), and the solver's dataclasses made cheaper or fewer (~17 ms; Python 3.11 compiles each
generated method apart).

Measured and left: ``PYDANTIC_DISABLE_PLUGINS`` saves ~2 ms (the entry-point scan; pydantic imports
importlib.metadata before it reads the variable); pausing the collector before click is imported ~2 ms
more (a new console-script entry point); deferring every model's build costs 60 M more instructions than
building them at import; Python 3.13 is no faster (1,437 M). Before this start-up work (gc paused while
importing, the check environment's messages serialized), the same run measured 314 ms (median 363)
against 260 (268) after, 21 runs each.

Issue 24 (2026-12-02, an editable install on a machine at load 4 on its 2 cores, so wall times say
little): the simple-flow regex of :mod:`drasat.models.fast_parse`, which only inputs over 256 KiB use,
is compiled at the first such input instead of at every start. ``valgrind --tool=callgrind`` on the
README solve: 1,565 M instructions before, 1,422 M after (-9 %, ~25 ms at the rate of the ladder above);
this script, 15 runs, minimum CPU 472 ms before and 441 ms after. Measured and left: pydantic's
``defer_build`` on every model (models' import and the example's reading: 304 ms of CPU eager, 322 ms
deferred, min of 9: a deferred kind builds its parts again inside its own schema).

Issue 24, second pass (2026-12-03, editable install, shared machine at load 2-3): the README solve imported
every kind's models and, through ``pod_problem``, the scheduler's queue state, the DynamicResources plugin,
the NUMA layout and the pack objective's module, none of which it uses. Now the models of the four kinds few
inputs hold come in with their first object (:mod:`drasat.models.kinds`) and solve reaches none of those
modules (``tests/test_startup.py`` keeps them out). callgrind: 1,502 M instructions before (b839e59), 1,423 M
after (-5 %); this script, 21 runs each in turn: CPU minimum 355 ms before, 335 ms after (and in a
non-editable layout 355 -> 337). The 0.3 s is not reached by importing less: every drasat module solve now
imports runs code it uses. What remains above it is lark (~170 M: its import, its cached parser, its
lexer's regexes at the first parses) and the ~120 dataclasses (about half drasat's) whose generated methods
Python 3.11 compiles from source text at every start (~270 M of ``exec``); pausing the collector before
click is imported would save 6 M more (a new console-script entry point).

Issue 24, third pass (2026-12-03): pydantic's plugin loader imports ``importlib.metadata`` (and ~60 modules
with it: email, zipfile, csv, tempfile...) for the entry-point scan the command switches off; it is now
imported with a stand-in for that module (``drasat.cli.startup``), and solve never imports it. callgrind on
the README solve: 1,403 M instructions before, 1,357 M after (-3.3 %). This script after ``pip install .``
into a fresh venv, quiet machine (load < 1), 21 runs each in turn: wall minimum 413 ms, against 440 ms for
ddbf246 (the commit the issue measured at 0.49 s median: 546 ms median in the same run); ``python -c
pass`` 15 ms (10 ms on 2026-12-01: the machine runs a third slower than when the ladder above was taken).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOLVE = ("solve", "--node", "gpu-node-1", "-o", "table", str(REPO / "examples"))
ENTRY = "import sys; from drasat.cli.main import main; sys.argv[0] = 'drasat'; sys.exit(main())"
"""What the ``drasat`` console script runs (it also works where drasat comes from ``PYTHONPATH``)."""
PAUSED = "import gc; gc.disable()\n"
FROZEN = "gc.freeze()\n"
"""As drasat's entry point does once it has imported (see ``drasat.cli.main.importing``); the exit's last
collection then skips the frozen objects, as it does for ``drasat``."""
FLOOR = (
    ("+ click", "import click"),
    ("+ from pydantic import BaseModel", "from pydantic import BaseModel"),
    ("+ a first model class", "class _First(BaseModel):\n    a: int = 0"),
    ("+ drasat's models", "import drasat.models.kinds"),
    ("+ PyYAML, the loader, the CLI", "import drasat.cli.commands.solve, drasat.models.loader"),
    (
        "+ the solver modules solve uses",
        "import drasat.solver.scheduling.pod_problem, drasat.solver.allocation.api, drasat.solver.allocation.depth_first.search",
    ),
    ("+ lark and the CEL syntax", "import drasat.solver.cel.syntax"),
    ("+ the cel-expr engine", "import drasat.solver.cel.engine_celexpr"),
)
"""The floor's ladder: each step's code runs after the steps above it, in one fresh process."""


def _environment(pythonpath: str | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def timed(commands: list[tuple[list[str], dict[str, str]]], runs: int) -> list[tuple[float, float, float, float]]:
    """(min wall, median wall, min CPU, median CPU) in seconds per command; the commands take turns."""
    for command, env in commands:  # writes the byte code; not counted
        subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    walls: list[list[float]] = [[] for _ in commands]
    cpus: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for i, (command, env) in enumerate(commands):
            before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls[i].append(time.perf_counter() - started)
            cpus[i].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return [(min(w), statistics.median(w), min(c), statistics.median(c)) for w, c in zip(walls, cpus)]


def _line(label: str, times: tuple[float, float, float, float]) -> str:
    wall_min, wall_median, cpu_min, cpu_median = (t * 1000 for t in times)
    return f"{label:<44}{wall_min:>9.0f}{wall_median:>9.0f}{cpu_min:>9.0f}{cpu_median:>9.0f}"


HEAD = f"{'ms':<44}{'wall min':>9}{'median':>9}{'CPU min':>9}{'median':>9}"


def print_startup(runs: int, old_path: str | None = None) -> None:
    """``drasat solve`` on the README example beside a bare interpreter (and an older commit's drasat)."""
    commands = [
        ([sys.executable, "-c", "pass"], _environment(None)),
        ([sys.executable, "-c", ENTRY, *SOLVE], _environment(None)),
    ]
    if old_path:
        commands.append(([sys.executable, "-c", ENTRY, *SOLVE], _environment(old_path)))
    labels = ["python -c pass", "drasat solve (README example)", "drasat solve, old commit"]
    print(f"start-up, {runs} runs each\n{HEAD}")
    for label, times in zip(labels, timed(commands, runs)):
        print(_line(label, times))


def print_floor(runs: int) -> None:
    """The ladder of :data:`FLOOR`, then the whole command."""
    codes, code = [], PAUSED
    for _, step in FLOOR:
        code += step + "\n"
        codes.append(code)
    env = _environment(None)
    commands = [([sys.executable, "-c", "pass"], env)]
    commands += [([sys.executable, "-c", c + FROZEN], env) for c in codes]
    commands.append(([sys.executable, "-c", ENTRY, *SOLVE], env))
    labels = ["python -c pass", *(label for label, _ in FLOOR), "drasat solve, whole"]
    print(f"start-up floor, {runs} runs each (each line adds to the one above)\n{HEAD}")
    for label, times in zip(labels, timed(commands, runs)):
        print(_line(label, times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--floor", action="store_true", help="also the ladder of what the start-up is made of")
    parser.add_argument("--against", metavar="COMMIT", help="also an older commit's drasat, in the same run")
    args = parser.parse_args()
    old_path = None
    if args.against:
        from call_bench import old_checkout

        old_path = str(old_checkout(args.against))
    print_startup(args.runs, old_path)
    if args.floor:
        print_floor(args.runs)


if __name__ == "__main__":
    main()
