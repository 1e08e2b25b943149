"""The harness streams, card results are written as produced, and a run imports only what it uses.

Issue 16: the harness streams (cases read, run and dropped one at a time), card results are written
to the set as produced (sealed, count-closed record files), and `graft-eval run` imports only what
it uses.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import weakref
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graft_eval_pipeline.card.fake_llm import llm_for_case
from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.options import Models
from graft_eval_pipeline.evalset.evaluate import evaluate, report_agreement, run_eval
from graft_eval_pipeline.evalset.labeling import agreement
from graft_eval_pipeline.evalset.report import case_detail
from graft_eval_pipeline.evalset.run import fake_result, harness
from graft_eval_pipeline.evalset.run.options import RunOptions, generate_options
from graft_eval_pipeline.evalset.run.pool import stream_pool
from graft_eval_pipeline.evalset.run.results import read_card_results
from graft_eval_pipeline.evalset.scoring.report_schema import GitInfo
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase
from graft_eval_pipeline.evalset.sets.errors import EvalCryptoError, EvalError
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR, card_results_file
from graft_eval_pipeline.evalset.sets.records import RecordWriter, read_records
from graft_eval_pipeline.evalset.sets.stamped import unstamp
from graft_eval_pipeline.evalset.sets.store import iter_cases, open_set, read_cases, write_case
from graft_eval_pipeline.heavy import HEAVY_LIBRARIES, HEAVY_MODULES
from graft_eval_pipeline_tests.builders import (
    copy_synthetic,
    make_case,
    make_label,
    make_pilot_case,
    make_pilot_set,
    make_synthetic_set,
    put_sealed,
)

NOW = datetime(2026, 10, 15, 10, 0, tzinfo=UTC)
CARD_RESULTS_FILE = card_results_file("test-run")
REPO = Path(__file__).resolve().parents[2]


def options(set_dir: Path, key: bytes | None = None, **over: object) -> RunOptions:
    fields: dict[str, object] = {
        "set": open_set(set_dir, key),
        "now": lambda: NOW,
        "now_ms": lambda: 0,
        "git": lambda: GitInfo(commit=None, dirty=None),
    }
    fields.update(over)
    return RunOptions(**fields)  # type: ignore[arg-type]


# --- the pool and the harness hold a bounded number of cases ---------------------------------


def test_stream_pool_takes_a_case_only_when_a_lane_is_free() -> None:
    taken: list[int] = []
    done: list[int] = []

    def cases() -> Iterator[EvalCase]:
        for n in range(20):
            taken.append(n)
            yield make_case(f"syn-9{n:02d}-x")

    async def run_one(case: EvalCase) -> str:
        assert len(taken) - len(done) <= 3  # never more than the lanes read ahead
        await asyncio.sleep(0)
        return case.id

    count = asyncio.run(stream_pool(cases(), run_one, 3, lambda i, c, r: done.append(i)))
    assert count == 20 and sorted(done) == list(range(20))


def test_a_fake_run_never_holds_more_cases_than_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case the reader hands out is tracked; while one runs, at most `concurrency` are alive."""
    seeds = read_cases(open_set(SYNTHETIC_DIR, None))
    alive: list[weakref.ref[EvalCase]] = []
    most = 0

    def reader(_cs: object) -> Iterator[EvalCase]:
        for n in range(120):
            seed = seeds[n % len(seeds)]
            case = seed.model_copy(update={"id": f"syn-{n:03d}-{seed.id[8:]}"})
            alive.append(weakref.ref(case))
            yield case

    real = generate_card

    async def counting(*args: object, **kwargs: object) -> object:
        nonlocal most
        most = max(most, sum(ref() is not None for ref in alive))
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(harness, "iter_cases", reader)
    monkeypatch.setattr(harness, "generate_card", counting)
    report = run_eval(options(SYNTHETIC_DIR, concurrency=4))
    assert len(report.cases) == 120
    assert 1 <= most <= 4 + 1  # the lanes' cases, and the one the reader is handing over


def test_rows_and_set_summary_equal_those_of_a_whole_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming changes nothing a report shows: the synthetic rows come out in id order."""
    report = run_eval(options(SYNTHETIC_DIR, concurrency=5))
    assert [r.id for r in report.cases] == sorted(c.id for c in read_cases(open_set(SYNTHETIC_DIR, None)))
    assert report.set.cases == 30 and report.set.scored == 30


# --- card results written as produced --------------------------------------------------------


def test_card_results_are_written_to_the_set_as_the_run_goes(tmp_path: Path) -> None:
    set_dir = copy_synthetic(tmp_path)
    cs = open_set(set_dir, None)
    run = harness.run_harness(options(set_dir, card_results=CARD_RESULTS_FILE))
    assert run.card_results == CARD_RESULTS_FILE
    stored = dict(read_card_results(cs, CARD_RESULTS_FILE))
    assert sorted(stored) == [r.id for r in run.rows]

    async def direct(case: EvalCase) -> object:
        return await generate_card(
            case.inputs, llm_for_case(case.fake_llm), generate_options(case, run_options.models, 120_000)
        )

    run_options = options(set_dir)
    for case in read_cases(cs)[:5]:
        assert stored[case.id] == asyncio.run(direct(case))
    assert not list(set_dir.glob("assets/.*.tmp"))


def test_a_run_that_stops_leaves_the_earlier_results_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_dir = copy_synthetic(tmp_path)
    harness.run_harness(options(set_dir, card_results=CARD_RESULTS_FILE))
    before = (set_dir / CARD_RESULTS_FILE).read_bytes()
    real = generate_card

    async def buggy(inputs, llm, opts):  # type: ignore[no-untyped-def]
        if inputs.pr.number == 120:
            raise RuntimeError("bug")
        return await real(inputs, llm, opts)

    monkeypatch.setattr(harness, "generate_card", buggy)
    with pytest.raises(EvalError, match="syn-020"):
        harness.run_harness(options(set_dir, card_results=CARD_RESULTS_FILE))
    assert (set_dir / CARD_RESULTS_FILE).read_bytes() == before
    assert [p.name for p in (set_dir / "assets").iterdir()] == [Path(CARD_RESULTS_FILE).name]


def test_a_pilot_run_seals_every_card_result_line(tmp_path: Path) -> None:
    cs = make_pilot_set(tmp_path / "pilot-acme")
    secret = "Rotate the ledger reconciliation window"
    for number in (412, 413, 414):
        write_case(cs, make_pilot_case("pilot-acme", number, inputs=_inputs(number, secret)))
    run = harness.run_harness(options(cs.dir, cs.key, card_results=CARD_RESULTS_FILE))
    sealed = cs.dir / (CARD_RESULTS_FILE + ".enc")
    assert sealed.is_file() and not (cs.dir / CARD_RESULTS_FILE).exists()
    raw = sealed.read_text(encoding="utf-8")
    assert secret not in raw and "Rotate" not in raw
    assert len(raw.splitlines()) == 4  # three envelopes and the closing count
    stored = dict(read_card_results(cs, CARD_RESULTS_FILE))
    assert sorted(stored) == [r.id for r in run.rows] and len(stored) == 3
    assert all(r.card is not None and r.card.goal == secret for r in stored.values())


def _inputs(number: int, title: str):  # type: ignore[no-untyped-def]
    from graft_eval_pipeline_tests.builders import make_inputs

    return make_inputs(pr={"number": number, "title": title})


# --- record files ------------------------------------------------------------------------------


@pytest.mark.parametrize("pilot", [False, True])
def test_records_round_trip_and_a_cut_or_reordered_file_is_refused(tmp_path: Path, pilot: bool) -> None:
    if pilot:
        cs = make_pilot_set(tmp_path / "pilot-acme")
    else:
        from graft_eval_pipeline_tests.builders import make_synthetic_set

        cs = make_synthetic_set(tmp_path / "syn")
    records = [json.dumps({"n": n, "text": "é\u2028 line"}) for n in range(5)]
    with RecordWriter(cs, "assets/x.jsonl") as writer:
        for record in records:
            writer.write(record)
    stored = read_records(cs, "assets/x.jsonl")
    assert stored is not None and list(stored) == records
    rel = "assets/x.jsonl" + (".enc" if pilot else "")
    lines = (cs.dir / rel).read_text(encoding="utf-8").splitlines(keepends=True)

    def put(kept: list[str]) -> None:  # in a pilot set, as if written with the key: past the journal
        data = "".join(kept).encode("utf-8")
        put_sealed(cs, rel, data) if pilot else (cs.dir / rel).write_bytes(data)

    put(lines[:3])  # cut short: no closing count
    with pytest.raises(EvalError, match=r"damaged|tampered"):
        list(read_records(cs, "assets/x.jsonl") or [])
    put(lines[:4] + lines[5:])  # the last record dropped
    with pytest.raises(EvalError, match="damaged"):
        list(read_records(cs, "assets/x.jsonl") or [])
    if pilot:  # two records swapped: each line is bound to its place
        put([lines[1], lines[0], *lines[2:]])
        with pytest.raises(EvalCryptoError):
            list(read_records(cs, "assets/x.jsonl") or [])


def test_a_record_writer_left_by_an_exception_writes_nothing(tmp_path: Path) -> None:
    from graft_eval_pipeline_tests.builders import make_synthetic_set

    cs = make_synthetic_set(tmp_path / "syn")
    with pytest.raises(KeyError), RecordWriter(cs, "assets/x.jsonl") as writer:
        writer.write("{}")
        raise KeyError("stop")
    assert read_records(cs, "assets/x.jsonl") is None
    assert list((cs.dir / "assets").iterdir()) == []
    with pytest.raises(ValueError, match="one line"), RecordWriter(cs, "assets/x.jsonl") as writer:
        writer.write('{"a":\n1}')


# --- reading a set one case at a time --------------------------------------------------------


def test_iter_cases_reads_lazily_and_a_bad_case_raises_where_it_is_met(tmp_path: Path) -> None:
    set_dir = copy_synthetic(tmp_path)
    (set_dir / "cases" / "syn-015-size-large.case.json").write_text("{", encoding="utf-8")
    cases = iter_cases(open_set(set_dir, None))
    first = [next(cases).id for _ in range(14)]
    assert first[0] == "syn-001-docs-typo" and len(first) == 14
    with pytest.raises(EvalError, match=r"syn-015-size-large\.case\.json: not valid JSON"):
        next(cases)


# --- start-up: a run imports only what it uses ------------------------------------------------


# What a fake `graft-eval run` needs none of: every heavy library and module of
# graft_eval_pipeline/heavy.py (the SDK and live mode, the GitHub client, rich, the secret rules,
# numerics and dataframes, Dagster), and the export steps that reach them.
NOT_FOR_A_FAKE_RUN = (*HEAVY_LIBRARIES, *HEAVY_MODULES, "graft_eval_pipeline.evalset.export.run")


def test_a_synthetic_run_imports_none_of_the_heavy_modules(tmp_path: Path) -> None:
    """None up to the report's last file, cases.parquet; pyarrow then loads numpy, never pandas."""
    code = (
        "import sys\n"
        "import graft_eval_pipeline.evalset.report.files as files\n"
        "from graft_eval_pipeline.cli import main\n"
        f"heavy = {NOT_FOR_A_FAKE_RUN!r}\n"
        "seen, write = [], files.cases_parquet\n"
        "def spy(rows):\n"
        "    seen.append([m for m in heavy if m in sys.modules])\n"
        "    return write(rows)\n"
        "files.cases_parquet = spy\n"
        f"assert main(['run', '--set', {str(SYNTHETIC_DIR)!r}, '--out', {str(tmp_path / 'out')!r}]) == 0\n"
        "assert seen == [[]], seen\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "assert loaded == ['numpy'], loaded\n"
        "import pyarrow.parquet as pq\n"
        f"assert pq.read_table({str(tmp_path / 'out' / 'cases.parquet')!r}).num_rows == 30\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


# --- Dagster: the harness asset keeps its card results in the set -----------------------------


def test_the_harness_asset_streams_its_card_results_into_the_set(tmp_path: Path) -> None:
    import dagster as dg

    from graft_eval_pipeline.defs.assets.evaluation import eval_metrics, harness_run, loaded_case_set
    from graft_eval_pipeline.defs.io_manager import SealedIOManager
    from graft_eval_pipeline.defs.resources import CaseSetsResource

    set_dir = copy_synthetic(tmp_path)
    sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(set_dir))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("case_set", ["synthetic"])
    result = dg.materialize(
        [loaded_case_set, harness_run, eval_metrics],
        partition_key="synthetic",
        instance=instance,
        resources={"case_sets": sets, "io_manager": SealedIOManager(sets=sets)},
    )
    assert result.success
    loaded = result.asset_materializations_for_node("loaded_case_set")[0].metadata
    assert loaded["cases"].value == 30 and loaded["gold"].value == 30
    stamp, value = unstamp((set_dir / "assets" / "harness_run.json").read_text(encoding="utf-8"), "harness")
    stored = json.loads(value)
    assert stored["cardResults"] == card_results_file(stamp.run_id) and "results" not in stored
    results = dict(read_card_results(open_set(set_dir, None), stored["cardResults"]))
    assert sorted(results) == [row["id"] for row in stored["rows"]] and len(results) == 30
    assert result.output_for_node("eval_metrics").run_cases == 30


# --- live mode: plans hold no case, results stream like fake ones -----------------------------


def test_a_live_run_streams_its_fresh_and_then_its_cached_results(tmp_path: Path) -> None:
    from graft_eval_pipeline.evalset.run import harness as live_harness
    from graft_eval_pipeline_tests.live_fakes import Factory, FakeLive, live_options, live_set

    cs = live_set(tmp_path, 4)
    first = live_harness.run_harness(live_options(cs, Factory(FakeLive()), card_results=CARD_RESULTS_FILE))
    fresh = dict(read_card_results(cs, CARD_RESULTS_FILE))
    assert sorted(fresh) == [r.id for r in first.rows] and not any(r.cached for r in first.rows)

    factory = Factory(FakeLive())
    second = live_harness.run_harness(live_options(cs, factory, card_results=CARD_RESULTS_FILE))
    cached = dict(read_card_results(cs, CARD_RESULTS_FILE))
    assert factory.client.requests == [] and all(r.cached for r in second.rows)
    assert cached == fresh


# --- the evaluation: labeler agreement and the synthetic cards, kept as the run streams ----------


def test_agreement_comes_from_every_case_of_the_first_pass_even_unselected(tmp_path: Path) -> None:
    """`labelAgreement` equals agreement over the whole set, though --cases runs two cases only."""
    cs = make_synthetic_set(tmp_path / "set")
    risks = ["trivial", "logic", "sensitive", "trivial", "logic", "sensitive"]
    for i, risk in enumerate(risks):
        bob = "logic" if i == 5 else risk  # one disagreement
        labels = [make_label("alice", risk=risk), make_label("bob", risk=bob)]
        write_case(cs, make_case(f"syn-90{i}-case", labels=labels))
    write_case(cs, make_case("syn-910-single", labels=[make_label("carol")]))
    selected = {"syn-900-case", "syn-910-single"}
    evaluation = evaluate(options(cs.dir, case_filter=lambda case_id, _tags: case_id in selected))
    assert {r.id for r in evaluation.report.cases} == selected
    whole = report_agreement(agreement(read_cases(cs)))
    assert evaluation.report.label_agreement == whole
    assert whole.pairs and whole.pairs[0].n == 6 and whole.skipped_pairs == 2  # alice/carol, bob/carol


def test_the_synthetic_report_keeps_titles_of_every_case_and_cards_of_those_run(tmp_path: Path) -> None:
    set_dir = copy_synthetic(tmp_path)
    cs = open_set(set_dir, None)
    first = read_cases(cs)[0]
    evaluation = evaluate(options(set_dir, case_filter=lambda case_id, _tags: case_id == first.id))
    assert evaluation.details is not None and len(evaluation.details) == 30
    assert evaluation.details[first.id] == case_detail(
        first, fake_result(first, Models(), 120_000), content=True
    )
    others = [d for i, d in evaluation.details.items() if i != first.id]
    assert all(d.facts is None and d.content is not None and d.content.goal is None for d in others)
    assert all(d.content.title for d in others if d.content is not None)


def test_a_pilot_evaluation_keeps_no_card_text_only_its_facts(tmp_path: Path) -> None:
    cs = make_pilot_set(tmp_path / "pilot-acme")
    write_case(cs, make_pilot_case(pr_number=401))
    details = evaluate(options(cs.dir, cs.key)).details
    # the panel's facts (classes, claim ids, counts) of each card, nothing of its content
    assert details is not None and len(details) == 1
    assert all(d.content is None and d.facts is not None for d in details.values())
