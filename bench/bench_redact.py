"""Redaction benchmark: throughput, the scan inside rescan and the pre-send check, and recall.

Redaction: throughput over a generated 50 MB diff corpus and over real diffs (target >= 50 MB/s,
default options, on both), the same scan inside `rescan` and the live pre-send check, and recall /
look-alike rate on the committed secret corpus, the held-out ones and the development ones, side by side with
detect-secrets.

Run: .venv/bin/python bench/bench_redact.py [--mb 50] [--ds-mb 10] [--real PATH] [--no-real]
     .venv/bin/python bench/bench_redact.py --accuracy-only   (recall and look-alikes alone, seconds)

The generated corpus is fictional code diffs (deterministic, short ASCII lines), with a secret,
an e-mail or a host every few kilobytes. The real corpus is `../shared/testdata/real-commits/`
(2,000 commits of five public repositories as cases: long lines, minified bundles and source
maps, non-ASCII text; see its README), read from where it lies and never copied: each case's
title, body and patches are redacted as export redacts them; `rescan` runs over a temporary set
of those cases (reading and parsing each case included), and the pre-send check over their
prepared (cut) prompt inputs (and over the generated patches, four to a case), with the slowest,
median and fastest of at least five timed runs. The accuracy corpora are
graft_eval_pipeline_tests/secrets/data/ (fictional values; see its README) and its heldout/
folder: the tests of the plugins IBM's fork of detect-secrets adds (Apache-2.0), held out in issue
25's eleventh round (none is held out since the twelfth); the tests of KICS' secrets query
(Apache-2.0), Trivy's secret-scanner tests (Apache-2.0), Horusec's leaks-rule tests (Apache-2.0),
Talisman's detector tests (MIT), EarlyBird's rule examples and tests (Apache-2.0), the tests of
ripsecrets (MIT) and of Microsoft's security-utilities (MIT), the provider plugins' unit tests of
detect-secrets (Apache-2.0; its own figure there is on its own tests: not a comparison), whispers'
test fixtures (Apache-2.0), each entry redacted inside its whole fixture file and scored on its
own line, secretlint's rule snapshot tests (MIT) and Nosey Parker's rule examples and negative
examples (Apache-2.0), development corpora since the twelfth, eleventh, tenth, ninth, eighth,
seventh, sixth, fifth, fourth, third and second round (the negatives that count as look-alikes are
those `is_lookalike` keeps);
all scored as the tests score them. When
detect-secrets is installed (the optional `bench` extra:
`.venv/bin/pip install -c constraints.txt -e '.[dev,bench]'`), it runs the way its users
run it, `detect-secrets scan --all-files` over files written to a temporary folder: one file per
patch for speed (the first --ds-mb MB of each corpus), one file per corpus entry for accuracy
(an entry counts as found when its file has any finding; a whispers entry's file is its
fixture, and only findings on the entry's lines count).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_text

WORDS = [
    "const",
    "let",
    "return",
    "function",
    "if",
    "else",
    "for",
    "while",
    "import",
    "from",
    "value",
    "result",
    "user",
    "account",
    "config",
    "request",
    "response",
    "error",
    "data",
    "item",
    "list",
    "map",
    "filter",
    "self",
    "def",
    "class",
    "await",
    "async",
    "this",
    "props",
    "state",
    "render",
    "null",
    "undefined",
    "true",
    "false",
    "print",
    "len",
    "range",
    "tokenizer",
    "token_count",
    "password_hash",
    "secretary",
    "apikeys",
    "session",
    "cache",
    "logger",
    "retry",
    "timeout",
    "handler",
    "payload",
    "invoice",
    "amount",
    "total",
    "Author",
    "Review",
    "Assert",
    "Build",
    "Context",
    "Api",
    "Http",
    "Json",
]
PUNCT = ("(", ")", ";", ",", " = ", ": ", ".", " {", "}", "[", "]", " + ", " == ", " => ")


def _secret(rng: random.Random) -> str:
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    pick = rng.randrange(8)
    if pick == 0:
        return "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    if pick == 1:
        return "ghp_" + "".join(rng.choice(alnum) for _ in range(36))
    if pick == 2:
        return f'password = "{"".join(rng.choice(alnum) for _ in range(14))}"'
    if pick == 3:
        return "sk-ant-api03-" + "".join(rng.choice(alnum) for _ in range(40))
    if pick == 4:
        return f"contact dev{rng.randrange(999)}@corp.example"
    if pick == 5:
        return f"https://api{rng.randrange(9)}.corp.example/v1/items"
    if pick == 6:
        return f"ref ACME-{rng.randrange(10**6):06d}"
    return "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "".join(rng.choice(alnum) for _ in range(22))


def _line(rng: random.Random) -> str:
    parts = [rng.choice(WORDS) + rng.choice(PUNCT) for _ in range(rng.randint(2, 9))]
    if rng.random() < 0.01:
        parts.append(_secret(rng))
    return "    " * rng.randint(0, 3) + "".join(parts)


def corpus(mb: float, seed: int = 1) -> list[str]:
    """Patches of about 4 KB each, with hunk headers and +/-/space prefixes."""
    rng = random.Random(seed)
    patches, size, target = [], 0, int(mb * 1_000_000)
    while size < target:
        lines = [f"@@ -{rng.randrange(1, 900)},12 +{rng.randrange(1, 900)},13 @@"]
        while sum(len(x) + 1 for x in lines) < 4000:
            lines.append(rng.choice("+- ") + _line(rng))
        if rng.random() < 0.02:
            lines += [
                "+-----BEGIN RSA PRIVATE KEY-----",
                "+MIIEpAIBAAKCAQEA" + "Q" * 48,
                "+-----END RSA PRIVATE KEY-----",
            ]
        patch = "\n".join(lines)
        patches.append(patch)
        size += len(patch)
    return patches


Texts = list[tuple[str, bool]]
"""(text, is_patch) pairs, redacted one by one as an export redacts a case's fields."""


def measure(texts: Texts, options: RedactOptions) -> tuple[float, float, Counter[str], int]:
    """(wall seconds, CPU seconds, counts, lines rewritten): CPU time is steadier on a shared machine."""
    counts: Counter[str] = Counter()
    rewritten = 0
    wall, cpu = time.perf_counter(), time.process_time()
    outputs = [redact_text(text, options, counts, is_patch=is_patch) for text, is_patch in texts]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for (text, _), out in zip(texts, outputs, strict=True):
        if out != text:
            rewritten += sum(a != b for a, b in zip(text.split("\n"), out.split("\n"), strict=True))
    return wall, cpu, counts, rewritten


def megabytes(texts: Texts) -> float:
    return sum(len(text.encode("utf-8", "surrogatepass")) for text, _ in texts) / 1_000_000


REAL = Path(__file__).resolve().parents[2] / "shared" / "testdata" / "real-commits" / "cases.jsonl.gz"


def real_case_lines(path: Path) -> list[str]:
    """The real-commit cases, one JSON document per line."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [line for line in lines if line.strip()]


def case_texts(inputs: dict[str, Any]) -> Texts:
    """What export redacts in a case: title and body of the PR and its issue, and every patch."""
    texts: Texts = [(inputs["pr"]["title"], False), (inputs["pr"]["body"], False)]
    if inputs.get("issue"):
        texts += [(inputs["issue"]["title"], False), (inputs["issue"]["body"], False)]
    return texts + [(f["patch"], True) for f in inputs["files"] if f["patch"] is not None]


def rescan_speed(lines: list[str], repeat: int) -> tuple[float, float, float, int]:
    """Size, best wall and CPU time, and cases affected of `rescan_set` over a temporary set.

    (MB of case files, best wall s, best CPU s, cases affected) of `rescan_set` over a temporary
    set, run `repeat` times.
    """
    from graft_eval_pipeline.evalset.export.rescan import rescan_set
    from graft_eval_pipeline.evalset.sets.store import create_set, open_set

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "real-commits"
        create_set(
            folder,
            set_id="real-commits",
            kind="synthetic",
            description="redaction benchmark",
            consent_ref=None,
            default_floor_config=None,
            key=None,
            now=datetime(2026, 12, 1, tzinfo=UTC),
        )
        for line in lines:
            case_id = json.loads(line)["id"]
            (folder / "cases" / f"{case_id}.case.json").write_text(line, encoding="utf-8")
        walls, cpus = [], []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            result = rescan_set(open_set(folder, None))
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    mb = sum(len(line.encode("utf-8")) for line in lines) / 1_000_000
    return mb, min(walls), min(cpus), len(result.affected)


def generated_cases(patches: list[str], per_case: int = 4) -> list[dict[str, Any]]:
    """The generated patches as case inputs, for the pre-send check over the generated corpus.

    The generated patches as case inputs (`per_case` files a case, a title and a short body), for
    the pre-send check over the generated corpus.
    """
    cases = []
    for first in range(0, len(patches), per_case):
        group = patches[first : first + per_case]
        files = [
            {
                "path": f"src/module_{first + i}/file.py",
                "status": "modified",
                "additions": 1,
                "deletions": 1,
                "patch": p,
            }
            for i, p in enumerate(group)
        ]
        pr = {
            "number": first + 1,
            "title": f"Change {first}",
            "body": "Refactor the handler.",
            "additions": 1,
        }
        cases.append(
            {
                "repositoryFullName": "octo/repo",
                "pr": pr | {"deletions": 1, "changedFiles": len(files)},
                "files": files,
            }
        )
    return cases


def presend_speed(inputs: list[dict[str, Any]], repeat: int) -> tuple[float, list[float], int]:
    """Size, CPU seconds and cases with a finding of the live pre-send check over prepared prompt inputs.

    (MB checked, CPU seconds of each timed run, cases with a finding) of the live pre-send check
    over the cases' prepared prompt inputs (patches and text cut to the prompt limits, as a live run
    cuts): one untimed run first (compiles the rules, warms the DFA), then `repeat`, each with the
    cycle collector paused, as a live run's planning runs the check.
    """
    from graft_eval_pipeline.card.models import CardInputs
    from graft_eval_pipeline.card.options import PrepareOptions
    from graft_eval_pipeline.card.prepare import prepare_card_inputs
    from graft_eval_pipeline.evalset.run import collector_paused
    from graft_eval_pipeline.evalset.run.secret_check import prompt_secret_kinds

    options = PrepareOptions()
    prepared = [prepare_card_inputs(CardInputs.model_validate(case), options) for case in inputs]
    checked = 0
    for case in prepared:
        inputs_ = case.inputs
        fields = [inputs_.repository_full_name, inputs_.pr.title, inputs_.pr.body]
        fields += [inputs_.issue.title, inputs_.issue.body] if inputs_.issue is not None else []
        fields += [path for f in inputs_.files for path in (f.path, f.previous_path) if path]
        fields += [f.patch for f in inputs_.files if f.patch is not None]
        checked += sum(len(text.encode("utf-8", "surrogatepass")) for text in fields)
    found = sum(1 for case in prepared if prompt_secret_kinds(case))
    cpus = []
    for _ in range(repeat):
        with collector_paused():  # where a live run checks: in its planning (`run_live`)
            cpu = time.process_time()
            for case in prepared:
                prompt_secret_kinds(case)
            cpus.append(time.process_time() - cpu)
    return checked / 1_000_000, cpus, found


def print_presend(name: str, inputs: list[dict[str, Any]], repeat: int) -> None:
    mb, cpus, found = presend_speed(inputs, repeat)
    speeds = sorted(mb / cpu for cpu in cpus)
    median = statistics.median(speeds)
    met = "met" if speeds[0] >= 50 else "NOT met"
    print(
        f"live pre-send check, {name} (prepared inputs): {speeds[0]:.0f} MB/s CPU slowest, "
        f"{median:.0f} median, "
        f"{speeds[-1]:.0f} fastest of {repeat} runs over {mb:.1f} MB; {found} case(s) with findings; "
        f"target 50 MB/s in the slowest run: {met}"
    )


REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "graft_eval_pipeline_tests" / "secrets" / "data"
ACCURACY = {
    # name: (entries with secrets, look-alikes), files under CORPUS
    "committed": ("true_positives.jsonl", "lookalikes.jsonl"),
    "development (Nosey Parker)": ("heldout/noseyparker.jsonl", "heldout/noseyparker_negative.jsonl"),
    "development (secretlint)": ("heldout/secretlint.jsonl", "heldout/secretlint_negative.jsonl"),
    "development (whispers)": ("heldout/whispers.jsonl", "heldout/whispers_negative.jsonl"),
    "development (detect-secrets)": ("heldout/detectsecrets.jsonl", "heldout/detectsecrets_negative.jsonl"),
    "development (ripsecrets)": ("heldout/ripsecrets.jsonl", "heldout/ripsecrets_negative.jsonl"),
    "development (security-utilities)": (
        "heldout/security_utilities.jsonl",
        "heldout/security_utilities_negative.jsonl",
    ),
    "development (EarlyBird)": ("heldout/earlybird.jsonl", "heldout/earlybird_negative.jsonl"),
    "development (Talisman)": ("heldout/talisman.jsonl", "heldout/talisman_negative.jsonl"),
    "development (Horusec)": ("heldout/horusec.jsonl", "heldout/horusec_negative.jsonl"),
    "development (Trivy)": ("heldout/trivy.jsonl", "heldout/trivy_negative.jsonl"),
    "development (KICS)": ("heldout/kics.jsonl", "heldout/kics_negative.jsonl"),
    "development (IBM detect-secrets)": (
        "heldout/ibm_detectsecrets.jsonl",
        "heldout/ibm_detectsecrets_negative.jsonl",
    ),
    "development (gosec)": ("heldout/gosec.jsonl", "heldout/gosec_negative.jsonl"),
    "development (bandit)": ("heldout/bandit.jsonl", "heldout/bandit_negative.jsonl"),
    "development (Kingfisher)": ("heldout/kingfisher.jsonl", "heldout/kingfisher_negative.jsonl"),
    "development (Kingfisher 2)": ("heldout/kingfisher2.jsonl", "heldout/kingfisher2_negative.jsonl"),
    "held-out (Kingfisher 3)": ("heldout/kingfisher3.jsonl", "heldout/kingfisher3_negative.jsonl"),
}
Entries = list[dict[str, object]]


def accuracy_corpora() -> dict[str, tuple[Entries, Entries]]:
    """Each accuracy corpus as (entries with secrets, look-alikes), held-out negatives cut to look-alikes."""
    sys.path.insert(0, str(REPO))
    from graft_eval_pipeline_tests.secrets.redaction_corpus import is_lookalike, load

    corpora = {}
    for name, (positives, negatives) in ACCURACY.items():
        corpora[name] = (load(CORPUS / positives), [e for e in load(CORPUS / negatives) if is_lookalike(e)])
    return corpora


def _rate(count: int, of: int) -> float:
    """`count / of`, NaN when there is nothing to count (a corpus without look-alikes prints `nan%`)."""
    return count / of if of else math.nan


def our_accuracy(positives: Entries, lookalikes: Entries) -> tuple[float, float]:
    """(recall, look-alike rate) of the redactor, each entry redacted as added patch lines as the tests do."""
    sys.path.insert(0, str(REPO))
    from graft_eval_pipeline_tests.secrets.redaction_corpus import found, touched

    recall = _rate(sum(found(entry) for entry in positives), len(positives))
    return recall, _rate(sum(touched(entry)[0] for entry in lookalikes), len(lookalikes))


def detect_secrets_available() -> bool:
    try:
        import detect_secrets  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def _ds_scan(folder: Path) -> tuple[dict[str, list[object]], float, float]:
    """`detect-secrets scan --all-files` in `folder`: (results by file, wall s, child CPU s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "detect_secrets", "scan", "--all-files", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout)["results"], wall, cpu


def _ds_lines(entry: dict[str, object]) -> tuple[str, range | None]:
    """The file detect-secrets scans for an entry, and the line numbers that count (None: any).

    An entry with a `hunk` (whispers' fixtures) is its whole file, scored on its own lines, as
    our redactor is scored on it.
    """
    hunk = entry.get("hunk")
    if not isinstance(hunk, str):
        return str(entry["line"]) + "\n", None
    first = int(str(entry["at"])) + 1
    return hunk + "\n", range(first, first + str(entry["line"]).count("\n") + 1)


def detect_secrets_accuracy(tps: Entries, looks: Entries) -> tuple[float, float]:
    counted: dict[str, range | None] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for prefix, entries in (("tp", tps), ("la", looks)):
            for index, entry in enumerate(entries):
                name = f"{prefix}_{index:04d}.txt"
                text, counted[name] = _ds_lines(entry)
                (folder / name).write_text(text)
        results, _, _ = _ds_scan(folder)

    def hit(name: str) -> bool:
        lines = counted[name]
        return any(lines is None or int(str(f["line_number"])) in lines for f in results.get(name, []))  # type: ignore[index]

    found = sum(1 for name in counted if name.startswith("tp_") and hit(name))
    flagged = sum(1 for name in counted if name.startswith("la_") and hit(name))
    return _rate(found, len(tps)), _rate(flagged, len(looks))


def measure_accuracy() -> dict[str, dict[str, tuple[float, float]]]:
    """Scanner -> accuracy corpus -> (recall, look-alike rate); detect-secrets only when installed."""
    corpora = accuracy_corpora()
    accuracy = {"graft-eval redact": {name: our_accuracy(*entries) for name, entries in corpora.items()}}
    if detect_secrets_available():
        accuracy["detect-secrets scan"] = {
            name: detect_secrets_accuracy(*entries) for name, entries in corpora.items()
        }
    else:
        print("detect-secrets: not installed (the bench extra), comparison skipped")
    for name, (positives, lookalikes) in corpora.items():
        print(f"accuracy corpus {name}: {len(positives)} entries with secrets, {len(lookalikes)} look-alikes")
    return accuracy


def _figures(by_corpus: dict[str, tuple[float, float]]) -> tuple[float, ...]:
    """(recall, look-alikes) on each accuracy corpus in ACCURACY's order, flattened."""
    return tuple(figure for pair in by_corpus.values() for figure in pair)


def detect_secrets_speed(texts: Texts, mb: float) -> tuple[float, float, float]:
    """(MB, wall s, CPU s) of `detect-secrets scan` over the first `mb` MB of the texts, one file each."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        size = 0
        for index, (text, _) in enumerate(texts):
            (folder / f"text_{index:05d}.diff").write_text(text, encoding="utf-8", errors="surrogatepass")
            size += len(text.encode("utf-8", "surrogatepass"))
            if size >= mb * 1_000_000:
                break
        _, wall, cpu = _ds_scan(folder)
    return size / 1_000_000, wall, cpu


def _speed(name: str, texts: Texts, options: RedactOptions, repeat: int) -> tuple[float, float]:
    """Print one throughput line (the best of `repeat` runs, and the slowest).

    Returns the best (MB/s wall, MB/s CPU).
    """
    mb = megabytes(texts)
    measure(texts[: max(1, len(texts) // 20)], options)  # compile the rules, warm the DFA, untimed
    runs = [measure(texts, options) for _ in range(repeat)]
    wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
    _, _, counts, rewritten = runs[0]
    print(
        f"{name}: {mb / wall:.0f} MB/s wall, {mb / cpu:.0f} MB/s CPU ({wall:.2f} s over {mb:.1f} MB; "
        f"slowest of {repeat}: {mb / max(r[1] for r in runs):.0f} MB/s CPU), "
        f"{rewritten} lines rewritten ({rewritten / mb * 100:.0f} per 100 MB), "
        f"redactions {dict(sorted(counts.items()))}"
    )
    return mb / wall, mb / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--ds-mb", type=float, default=10.0, help="MB of each corpus detect-secrets scans")
    parser.add_argument("--real", type=Path, default=REAL, help="the real-commits cases.jsonl.gz")
    parser.add_argument("--no-real", action="store_true", help="skip the real-commits corpus")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each figure (the best is shown)")
    parser.add_argument("--presend-only", action="store_true", help="only the live pre-send check figures")
    parser.add_argument("--accuracy-only", action="store_true", help="only recall and look-alike rates")
    args = parser.parse_args()
    if args.accuracy_only:
        accuracy = measure_accuracy()
        print(f"{'scanner':<24}" + "".join(f"{name + ': recall, look-alikes':>52}" for name in ACCURACY))
        for scanner, figures in accuracy.items():
            print(f"{scanner:<24}" + "".join(f"{rec:>40.1%}{look:>12.1%}" for rec, look in figures.values()))
        return
    generated: Texts = [(patch, True) for patch in corpus(args.mb)]
    if args.presend_only:
        print_presend("generated", generated_cases([text for text, _ in generated]), max(args.repeat, 5))
        if not args.no_real:
            inputs = [json.loads(line)["inputs"] for line in real_case_lines(args.real)]
            print_presend("real-commits", inputs, max(args.repeat, 5))
        return
    print(f"generated corpus: {megabytes(generated):.1f} MB in {len(generated)} patches")
    everything = RedactOptions(emails=True, hosts=("corp.example",), patterns=(r"ACME-[0-9]{6}",))
    corpora: list[tuple[str, Texts]] = [("generated", generated)]
    lines: list[str] = []
    if not args.no_real:
        if not args.real.is_file():
            raise SystemExit(f"no real-commits corpus at {args.real}: pass --real PATH or --no-real")
        lines = real_case_lines(args.real)
        real = [text for line in lines for text in case_texts(json.loads(line)["inputs"])]
        non_ascii = sum(not text.isascii() for text, _ in real)
        longest = max(len(line) for text, _ in real for line in text.split("\n"))
        print(
            f"real-commits corpus: {megabytes(real):.1f} MB in {len(real)} texts of {len(lines)} cases "
            f"({non_ascii} non-ASCII; longest line {longest / 1_000_000:.1f} M characters)"
        )
        corpora.append(("real-commits", real))
    rows: list[tuple[str, tuple[float, ...], str]] = []
    accuracy = measure_accuracy()
    ours = _figures(accuracy["graft-eval redact"])
    for name, texts in corpora:
        wall_speed, cpu_speed = _speed(f"{name}, secrets only (default)", texts, RedactOptions(), args.repeat)
        _speed(f"{name}, all options on", texts, everything, args.repeat)
        met = "met" if cpu_speed >= 50 else "NOT met"
        print(f"{name}: target 50 MB/s (default options, CPU): {met}")
        speed = f"{wall_speed:.0f} (CPU {cpu_speed:.0f})"
        rows.append((f"graft-eval redact, {name}", ours, speed))
    if lines:
        mb, wall, cpu, affected = rescan_speed(lines, args.repeat)
        print(
            f"rescan (read, parse and scan every case): {mb / wall:.0f} MB/s wall, {mb / cpu:.0f} MB/s CPU "
            f"of case files ({wall:.2f} s over {mb:.1f} MB), {affected} case(s) with findings"
        )
    print_presend("generated", generated_cases([text for text, _ in generated]), max(args.repeat, 5))
    if lines:
        print_presend("real-commits", [json.loads(line)["inputs"] for line in lines], max(args.repeat, 5))
    if "detect-secrets scan" in accuracy:
        theirs = _figures(accuracy["detect-secrets scan"])
        for name, texts in corpora:
            ds_mb, ds_wall, ds_cpu = detect_secrets_speed(texts, args.ds_mb)
            speed = f"{ds_mb / ds_wall:.2f} (CPU {ds_mb / ds_cpu:.2f}) over {ds_mb:.0f} MB"
            rows.append((f"detect-secrets scan, {name}", theirs, speed))
    print(
        f"\n{'scanner, corpus':<36}"
        + "".join(f"{name + ': recall, look-alikes':>52}" for name in ACCURACY)
        + "   MB/s"
    )
    for label, numbers, speed in rows:
        pairs = zip(numbers[0::2], numbers[1::2], strict=True)
        print(f"{label:<36}" + "".join(f"{rec:>40.1%}{look:>12.1%}" for rec, look in pairs) + f"   {speed}")


if __name__ == "__main__":
    main()
