"""Redaction: throughput over a generated 50 MB diff corpus (target >= 50 MB/s, default options) and
recall / look-alike rate on the committed secret corpus, side by side with detect-secrets.

Run: .venv/bin/python bench/bench_redact.py [--mb 50] [--ds-mb 10]  (detect-secrets runs ~0.2 MB/s here)

The throughput corpus is fictional code diffs (deterministic), with a secret, an e-mail or a host
every few kilobytes. The accuracy corpus is graft_eval_pipeline_tests/export/data/secrets/ (fictional
values; see its README). When detect-secrets is installed (it is not a dependency of this
project: `pip install detect-secrets`), it runs the way its users run it, `detect-secrets scan
--all-files` over files written to a temporary folder: one file per patch for speed, one file per
corpus entry for accuracy (an entry counts as found when its file has any finding).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

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


def measure(patches: list[str], options: RedactOptions) -> tuple[float, float, Counter[str]]:
    """(wall seconds, CPU seconds, counts): CPU time is steadier on a shared machine."""
    counts: Counter[str] = Counter()
    wall, cpu = time.perf_counter(), time.process_time()
    for patch in patches:
        redact_text(patch, options, counts, is_patch=True)
    return time.perf_counter() - wall, time.process_time() - cpu, counts


CORPUS = Path(__file__).resolve().parent.parent / "graft_eval_pipeline_tests" / "export" / "data" / "secrets"


def _entries(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line.strip()]


def our_accuracy() -> tuple[float, float]:
    """(recall, look-alike rate) of the redactor, each entry redacted as added patch lines."""

    def run(line: str) -> tuple[str, str]:
        lines = line.split("\n")
        patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + part for part in lines)
        return patch, redact_text(patch, RedactOptions(), Counter(), is_patch=True)

    tps, looks = _entries("true_positives.jsonl"), _entries("lookalikes.jsonl")
    found = 0
    for entry in tps:
        patch, out = run(str(entry["line"]))
        left = re.sub(r"\[REDACTED:\w+\]", "", out)
        found += str(entry["secret"]) not in left and out.count("\n") == patch.count("\n")
    flagged = sum(1 for entry in looks if run(str(entry["line"]))[1] != run(str(entry["line"]))[0])
    return found / len(tps), flagged / len(looks)


def detect_secrets_available() -> bool:
    try:
        import detect_secrets  # type: ignore[import-not-found]  # noqa: F401
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


def detect_secrets_accuracy() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tps, looks = _entries("true_positives.jsonl"), _entries("lookalikes.jsonl")
        for index, entry in enumerate(tps):
            (folder / f"tp_{index:04d}.txt").write_text(str(entry["line"]) + "\n")
        for index, entry in enumerate(looks):
            (folder / f"la_{index:04d}.txt").write_text(str(entry["line"]) + "\n")
        results, _, _ = _ds_scan(folder)
    found = sum(1 for name in results if name.startswith("tp_") and results[name])
    flagged = sum(1 for name in results if name.startswith("la_") and results[name])
    return found / len(tps), flagged / len(looks)


def detect_secrets_speed(patches: list[str]) -> tuple[float, float, float]:
    """(MB, wall s, CPU s) of `detect-secrets scan` over the patches, one file each."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for index, patch in enumerate(patches):
            (folder / f"patch_{index:05d}.diff").write_text(patch)
        _, wall, cpu = _ds_scan(folder)
    return sum(len(p) for p in patches) / 1_000_000, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--ds-mb", type=float, default=10.0, help="MB of the corpus detect-secrets scans")
    args = parser.parse_args()
    patches = corpus(args.mb)
    mb = sum(len(p) for p in patches) / 1_000_000
    print(f"corpus: {mb:.1f} MB in {len(patches)} patches")
    measure(patches[:500], RedactOptions())  # compile the rules and warm the RE2 DFA, outside the timing
    secrets_s, secrets_cpu, counts = measure(patches, RedactOptions())
    print(
        f"secrets only (default): {mb / secrets_s:.0f} MB/s wall, {mb / secrets_cpu:.0f} MB/s CPU "
        f"({secrets_s:.2f} s), redactions {dict(counts)}"
    )
    everything = RedactOptions(emails=True, hosts=("corp.example",), patterns=(r"ACME-[0-9]{6}",))
    measure(patches[:500], everything)
    all_s, all_cpu, counts = measure(patches, everything)
    print(
        f"all options on: {mb / all_s:.0f} MB/s wall, {mb / all_cpu:.0f} MB/s CPU "
        f"({all_s:.2f} s), redactions {dict(counts)}"
    )
    print(f"target 50 MB/s (default options, CPU): {'met' if mb / secrets_cpu >= 50 else 'NOT met'}")
    recall, lookalike = our_accuracy()
    rows = [("graft-eval redact", recall, lookalike, f"{mb / secrets_s:.0f} (CPU {mb / secrets_cpu:.0f})")]
    if detect_secrets_available():
        ds_recall, ds_lookalike = detect_secrets_accuracy()
        slice_ = patches[: max(1, round(len(patches) * min(1.0, args.ds_mb / args.mb)))]
        ds_mb, ds_wall, ds_cpu = detect_secrets_speed(slice_)
        speed = f"{ds_mb / ds_wall:.1f} (CPU {ds_mb / ds_cpu:.1f}) over {ds_mb:.0f} MB"
        rows.append(("detect-secrets scan", ds_recall, ds_lookalike, speed))
    else:
        print("detect-secrets: not installed (pip install detect-secrets), comparison skipped")
    print(f"\n{'scanner':<22}{'recall':>8}{'look-alikes':>13}   MB/s")
    for name, rec, look, speed in rows:
        print(f"{name:<22}{rec:>8.1%}{look:>13.1%}   {speed}")


if __name__ == "__main__":
    main()
