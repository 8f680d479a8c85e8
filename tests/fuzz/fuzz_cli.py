"""Coverage-guided fuzzing of drasat's command line with atheris (``pip install '.[fuzz]'``).

Why atheris: it is libFuzzer driving instrumented Python, so inputs that reach new
branches of drasat are kept and mutated further -- the point of coverage guidance --
and it reports the coverage reached, saves every crashing input as a file, and bounds
time (``-timeout``) and memory (``-rss_limit_mb``) per input. Hypothesis' fuzzing
backend would need HypoFuzz and a strategy for whole manifests; atheris takes the
seed manifests as they are, with a structure-aware custom mutator (:mod:`.mutations`)
on top of libFuzzer's byte mutations.

Run (niced, the CPU is shared), seeded with every manifest of tests/, examples/ and
$DRASAT_SHARED (or ../shared); new interesting inputs are written to the first corpus
directory:

    mkdir -p /tmp/fuzz-corpus
    nice -n 10 python tests/fuzz/fuzz_cli.py /tmp/fuzz-corpus -runs=100000 -timeout=60 -rss_limit_mb=3072

A crash is an input that breaks the contract of :mod:`.harness`; libFuzzer writes it as
``crash-<sha1>``. Fix it, then copy it into ``tests/fuzz_corpus/`` so that
``tests/test_fuzz_corpus.py`` keeps it fixed.

Memory: measured with ``-rss_limit_mb=2048 -max_len=16384`` for 600 s (2 shared cores, niced): 38,221
executions, peak RSS 555 MB, no stop. It had reached 1.8 GB within 1,200 executions with no input kept: the
custom mutator (which runs in the fuzzed process) listed the paths of ``a: &a [*a]`` -- a list that
contains itself, in the corpus -- one step longer each time, 1.5 GB before giving up (a plain loop over the harness: peak 1,676 MB by
execution 200 before, 192 MB after 1,500) (now each container is
entered once), and every load's ``gc.freeze`` kept the garbage cycles of earlier executions for ever (now only
the command line's one-shot process freezes). ``tests/test_fuzz_corpus.py`` checks both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

with atheris.instrument_imports(include=["drasat"]):
    import drasat.cli.main

    drasat.cli.main.load_all_commands()
    import drasat.models.loader  # noqa: F401
    import drasat.solver  # noqa: F401
    import drasat.solver.cel.validate  # noqa: F401

from tests.fuzz.harness import seed_files, violations  # noqa: E402
from tests.fuzz.mutations import mutate  # noqa: E402


def test_one_input(data: bytes) -> None:
    found = violations(data)
    if found:
        raise AssertionError("; ".join(found))


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    out = mutate(data, seed, lambda raw: atheris.Mutate(raw, max_size))
    return out[:max_size]


def main() -> None:
    argv = list(sys.argv)
    corpus = [a for a in argv[1:] if not a.startswith("-")]
    if corpus:  # seed the output corpus with every manifest we know
        seeds = Path(corpus[0])
        seeds.mkdir(parents=True, exist_ok=True)
        for i, path in enumerate(seed_files()):
            target = seeds / f"seed-{i:04d}{path.suffix}"
            if not target.exists():
                target.write_bytes(path.read_bytes())
        argv.append(str(REPO / "tests" / "fuzz_corpus"))
    if not any(a.startswith("-max_len") for a in argv):
        argv.append("-max_len=65536")
    atheris.Setup(argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
