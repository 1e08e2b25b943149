"""A corpus of real pull-request-sized diffs.

The changes between two released versions of a few public Python packages, cut into PR-sized groups
of files (for bench_harness.py).

Generated bench cases repeat a few short fictional patches; real diffs are long, varied, partly
non-ASCII (translations, docs) and hold binary files, which is what makes the floor's
instructions-in-data scan, the prompts and the hashes cost what they cost on a pilot set.

Run: .venv/bin/python bench/real_diffs.py   (prints the corpus figures; builds it on first use)

The wheels come from PyPI through `pip download` (pure-Python wheels: no build step) into
$GRAFT_EVAL_BENCH_CACHE (default ~/.cache/graft-eval-bench), and the corpus is written there as
`real-diffs-v1.jsonl`: one `CardInputs` per line (camelCase JSON). Nothing of it is committed;
delete the folder to rebuild. The grouping is seeded, so a rebuild gives the same corpus.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import random
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# (package, old version, new version): pure-Python wheels with large, varied changes.
RELEASES: tuple[tuple[str, str, str], ...] = (
    ("django", "4.2.16", "5.1.2"),  # code, tests' absence, locale .po files (non-ASCII), .mo binaries
    ("sphinx", "7.2.6", "8.1.3"),  # code, translations, templates
    ("pygments", "2.15.1", "2.18.0"),  # lexers
    ("pytest", "7.4.4", "8.3.3"),
    ("werkzeug", "2.3.8", "3.0.4"),
    ("rich", "13.5.3", "13.9.2"),
    ("requests", "2.31.0", "2.32.3"),
    ("flask", "2.3.3", "3.0.3"),
)
CORPUS_NAME = "real-diffs-v1.jsonl"
SEED = 16
MEAN_PR_BYTES = 25_000  # target mean of patch bytes per PR (a lognormal draw per PR)
MAX_PR_FILES = 40
MAX_FILE_PATCH_BYTES = 400_000  # GitHub leaves the patch out of very large file diffs
CONTEXT_LINES = 3


def cache_dir() -> Path:
    return Path(os.environ.get("GRAFT_EVAL_BENCH_CACHE", Path.home() / ".cache" / "graft-eval-bench"))


def wheel(package: str, version: str) -> Path:
    """The package's wheel for this version, downloaded once into the cache."""
    folder = cache_dir() / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    prefix = package.replace("-", "_").lower() + "-" + version + "-"
    found = [p for p in folder.glob("*.whl") if p.name.lower().startswith(prefix)]
    if not found:
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
                *("--only-binary", ":all:", "--dest", str(folder), f"{package}=={version}"),
            ],
            check=True,
        )
        found = [p for p in folder.glob("*.whl") if p.name.lower().startswith(prefix)]
    if len(found) != 1:
        raise SystemExit(f"expected one wheel for {package}=={version} in {folder}, found {len(found)}")
    return found[0]


def wheel_files(path: Path) -> dict[str, bytes]:
    """Every file of the wheel but its .dist-info (which changes with every version)."""
    with zipfile.ZipFile(path) as archive:
        return {
            name: archive.read(name)
            for name in archive.namelist()
            if not name.endswith("/") and ".dist-info/" not in name
        }


def _text(data: bytes | None) -> list[str] | None:
    """The lines of a UTF-8 text file; None for a binary (undecodable or NUL-holding) one."""
    if data is None:
        return []
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def file_patch(old: bytes | None, new: bytes | None) -> tuple[str | None, int, int]:
    """GitHub's `patch` of one file (hunks only, no ---/+++ header), additions, deletions."""
    a, b = _text(old), _text(new)
    if a is None or b is None:
        return None, 0, 0
    lines = list(difflib.unified_diff(a, b, n=CONTEXT_LINES, lineterm=""))[2:]
    additions = sum(1 for line in lines if line.startswith("+"))
    deletions = sum(1 for line in lines if line.startswith("-"))
    return "\n".join(lines), additions, deletions


def changed_files(package: str, old_version: str, new_version: str) -> Iterator[dict[str, object]]:
    """One `ChangedFile` (camelCase JSON) per file that differs between the two wheels."""
    old, new = wheel_files(wheel(package, old_version)), wheel_files(wheel(package, new_version))
    for path in sorted(old.keys() | new.keys()):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        status = "added" if before is None else "removed" if after is None else "modified"
        patch, additions, deletions = file_patch(before, after)
        if patch is not None and len(patch.encode("utf-8")) > MAX_FILE_PATCH_BYTES:
            patch = None  # too large for GitHub to show
        if patch is None:
            additions = deletions = 0 if status == "modified" else 1
        yield {"path": path, "status": status, "additions": additions, "deletions": deletions, "patch": patch}


def pull_requests(
    package: str, old_version: str, new_version: str, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """The changed files in path order, cut into PRs of a seeded lognormal patch size."""
    number, files, size = 0, [], 0
    target = _draw(rng)
    for changed in changed_files(package, old_version, new_version):
        files.append(changed)
        patch = changed["patch"]
        size += len(patch.encode("utf-8")) if isinstance(patch, str) else 0
        if size >= target or len(files) >= MAX_PR_FILES:
            number += 1
            yield _pr(package, old_version, new_version, number, files)
            files, size, target = [], 0, _draw(rng)
    if files:
        yield _pr(package, old_version, new_version, number + 1, files)


def _draw(rng: random.Random) -> float:
    sigma = 1.0  # mean of a lognormal is exp(mu + sigma^2 / 2)
    return rng.lognormvariate(_mu(MEAN_PR_BYTES, sigma), sigma)


def _mu(mean: float, sigma: float) -> float:
    return math.log(mean) - sigma * sigma / 2


def _pr(package: str, old: str, new: str, number: int, files: list[dict[str, Any]]) -> dict[str, Any]:
    additions = sum(int(f["additions"]) for f in files)
    deletions = sum(int(f["deletions"]) for f in files)
    return {
        "repositoryFullName": f"pypi-releases/{package}",
        "pr": {
            "number": number,
            "title": f"{package} {old} to {new}, part {number}",
            "body": f"The changes between the released wheels of {package} {old} and {new}, "
            f"files {files[0]['path']} to {files[-1]['path']}.",
            "additions": additions,
            "deletions": deletions,
            "changedFiles": len(files),
        },
        "issue": None,
        "files": files,
        "listingTruncated": False,
        "tooLarge": False,
    }


def build_corpus(path: Path) -> None:
    rng = random.Random(SEED)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for package, old, new in RELEASES:
            for pr in pull_requests(package, old, new, rng):
                out.write(json.dumps(pr, ensure_ascii=False) + "\n")
    tmp.replace(path)


def corpus_path() -> Path:
    """The corpus file, built (downloads included) when it is not in the cache yet."""
    path = cache_dir() / CORPUS_NAME
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"building the real-diff corpus in {path} (one-off)", file=sys.stderr)
        build_corpus(path)
    return path


def load_corpus() -> list[str]:
    """Every PR of the corpus as its `CardInputs` JSON text."""
    return corpus_path().read_text(encoding="utf-8").splitlines()


def patch_bytes(inputs_json: str) -> int:
    files = json.loads(inputs_json)["files"]
    return sum(len(f["patch"].encode("utf-8")) for f in files if f["patch"] is not None)


def main() -> None:
    prs = load_corpus()
    sizes = [patch_bytes(pr) for pr in prs]
    non_ascii = sum(not pr.isascii() for pr in prs)
    print(f"{len(prs)} PRs from {len(RELEASES)} package releases in {corpus_path()}")
    print(
        f"patch bytes per PR: mean {sum(sizes) / len(sizes) / 1000:.1f} kB, "
        f"max {max(sizes) / 1000:.0f} kB, total {sum(sizes) / 1e6:.1f} MB; {non_ascii} PRs hold non-ASCII"
    )


if __name__ == "__main__":
    main()
