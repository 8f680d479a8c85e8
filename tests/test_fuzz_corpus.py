"""The fuzz corpus as a regression test: every kept input still ends politely.

``tests/fuzz_corpus/`` holds the inputs worth keeping from fuzzing (crashes once found
and fixed, hostile shapes: alias bombs, deep nesting, huge numbers, bad CEL, dangling
references). Each goes through every command, in process, under the contract of
:mod:`tests.fuzz.harness`: exit 0, 1 or 2, a message on failure, never a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from tests.fuzz.harness import run_all

CORPUS = sorted((Path(__file__).parent / "fuzz_corpus").iterdir())


def test_the_corpus_is_there() -> None:
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_command_ends_politely(path: Path) -> None:
    outcomes = list(run_all(path.read_bytes()))
    assert {o.command for o in outcomes} >= {"validate", "solve"}
    assert [o.violation() for o in outcomes if o.violation()] == []


@pytest.mark.parametrize(
    "name, command, code, message",
    [
        ("cel-six-nested-all.yaml", "validate", 2, "Forbidden: too complex, exceeds cost limit"),
        ("cel-plus-chain-41.yaml", "validate", 0, "4 valid, 0 invalid"),
        ("cel-plus-chain-250.yaml", "validate", 2, "expression recursion limit exceeded: 250"),
        ("cel-deepest-accepted.yaml", "validate", 0, "2 valid, 0 invalid"),  # without a raised recursion limit
        (
            "limits-in-utf8-bytes.yaml",
            "validate",
            2,
            "attributes[model].string: Too long: may not be more than 64 bytes",
        ),
        # found by the corpus: cel-cpp's 32-level parser limit masked the Kubernetes verdict
        ("cel-memory-bomb-block.yaml", "validate", 2, "Forbidden: too complex, exceeds cost limit"),
        ("admin-access-unlabelled.yaml", "solve", 2, "Forbidden: admin access to devices requires"),
        ("mut-a77d932137.yaml", "validate", 2, "expands to more than 2,000,000 values"),
        ("deep-nesting.yaml", "validate", 2, "levels deep"),
        # found by fuzzing: a null list item was described with Python's type name (NoneType)
        ("list-with-null-items.yaml", "validate", 2, "expected a mapping with apiVersion and kind, found null"),
        ("quantity-as-mapping.yaml", "validate", 2, "a quantity must be a string or a number, not a mapping"),
    ],
)
def test_chosen_inputs_give_their_answer(name: str, command: str, code: int, message: str) -> None:
    outcome = next(
        o for o in run_all((Path(__file__).parent / "fuzz_corpus" / name).read_bytes()) if o.command == command
    )
    assert outcome.exit_code == code, outcome.output
    assert message in outcome.output


def test_a_subrequest_count_of_int64_max_is_no_crash() -> None:
    """Found by fuzzing: the depth-first search sized Python's recursion limit from a subrequest's
    ``count`` of 2**63-1 (OverflowError); a request never picks more devices than it has candidates,
    and the claim's other subrequest is allocated as Kubernetes would."""
    path = Path(__file__).parent / "fuzz_corpus" / "crash-count-int64-max-recursion-limit.yaml"
    solve = next(o for o in run_all(path.read_bytes()) if o.command == "solve")
    assert solve.violation() is None  # refused: its subrequest names (an allocator fixture's) are no DNS labels
    assert solve.exit_code == 2 and '"subReq-0" must be a DNS label' in solve.output, solve.output
    load_all_commands()
    allowed = CliRunner().invoke(cli, ["solve", "--allow-invalid-objects", str(path)], catch_exceptions=False)
    assert allowed.exit_code == 0, allowed.output


def test_the_mutator_stays_small_on_every_corpus_input() -> None:
    """The fuzzer's own mutator runs in the fuzzed process: on ``a: &a [*a]`` (a list that contains itself) its
    path listing took 1.5 GB, so libFuzzer's -rss_limit_mb stopped the run with no input to keep. Now each
    container is entered once."""
    import tracemalloc

    from tests.fuzz.mutations import mutate

    tracemalloc.start()
    try:
        for path in CORPUS:
            for seed in range(8):
                mutate(path.read_bytes(), seed, lambda raw: raw[: max(1, len(raw) // 2)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024, f"{peak / 2**20:.0f} MiB"


def test_caches_keyed_by_input_are_bounded_and_only_the_command_line_freezes() -> None:
    """What a long-lived process (the fuzzer, a service) keeps per input: nothing unbounded, nothing frozen --
    garbage cycles alive when a freeze runs would be kept for ever. The one-shot command line freezes."""
    import gc

    from drasat.models import collector, fast_parse

    assert fast_parse._same_reading.cache_info().maxsize is not None
    before = gc.get_freeze_count()
    with collector.collector_paused(freeze_after=0):
        built = [[i] for i in range(1000)]
    assert gc.get_freeze_count() == before
    collector.allow_freezing()
    try:
        with collector.collector_paused(freeze_after=0):
            built += [[i] for i in range(1000)]
        assert gc.get_freeze_count() > before
    finally:
        collector.allow_freezing(False)
        if before == 0:
            gc.unfreeze()
