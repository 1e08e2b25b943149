"""Redaction throughput over a generated 50 MB diff corpus (target ≥ 50 MB/s, default options).

Run: .venv/bin/python bench/bench_redact.py [--mb 50]

The corpus is fictional code diffs (deterministic), with a secret, an e-mail or a host every few
kilobytes. Prints MB/s for the default options (secrets only) and for all options on. When the
`detect-secrets` package is importable it also scans a slice of the corpus with it and prints the
speed ratio (it is not a dependency of this project).
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

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


def detect_secrets_seconds(patches: list[str]) -> float | None:
    try:
        from detect_secrets.core.scan import scan_line  # type: ignore[import-not-found]
        from detect_secrets.settings import default_settings  # type: ignore[import-not-found]
    except ImportError:
        return None
    started = time.perf_counter()
    with default_settings():
        for patch in patches:
            for line in patch.split("\n"):
                list(scan_line(line))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=50.0)
    args = parser.parse_args()
    patches = corpus(args.mb)
    mb = sum(len(p) for p in patches) / 1_000_000
    print(f"corpus: {mb:.1f} MB in {len(patches)} patches")
    secrets_s, secrets_cpu, counts = measure(patches, RedactOptions())
    print(
        f"secrets only (default): {mb / secrets_s:.0f} MB/s wall, {mb / secrets_cpu:.0f} MB/s CPU "
        f"({secrets_s:.2f} s), redactions {dict(counts)}"
    )
    everything = RedactOptions(emails=True, hosts=("corp.example",), patterns=(r"ACME-[0-9]{6}",))
    all_s, all_cpu, counts = measure(patches, everything)
    print(
        f"all options on: {mb / all_s:.0f} MB/s wall, {mb / all_cpu:.0f} MB/s CPU "
        f"({all_s:.2f} s), redactions {dict(counts)}"
    )
    print(f"target 50 MB/s (default options, CPU): {'met' if mb / secrets_cpu >= 50 else 'NOT met'}")
    slice_ = patches[: max(1, len(patches) // 10)]
    ds = detect_secrets_seconds(slice_)
    if ds is None:
        print("detect-secrets: not importable, comparison skipped")
    else:
        slice_mb = sum(len(p) for p in slice_) / 1_000_000
        ours, _, _ = measure(slice_, RedactOptions())
        print(
            f"detect-secrets on {slice_mb:.1f} MB: {slice_mb / ds:.1f} MB/s; ours is {ds / ours:.0f}x faster"
        )


if __name__ == "__main__":
    main()
