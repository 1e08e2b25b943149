"""Strata and seeded sampling (spec E12, T6), shared by the export sample and double labeling. Pure.

Two axes: size (S ≤ 50, M ≤ 300, L ≤ 1,500, XL above: the floor's own thresholds) and paths
(sensitive, tests, docs, source). A uniform sample of agent PRs is mostly small source changes;
the rare strata are where under-classification hides, so each non-empty stratum gets a minimum
and the rest is proportional. The PRNG is mulberry32, ported bit for bit from the JavaScript, so
a seed gives the same sample as the TypeScript tool. Each pick carries its stratum's population
so an analysis can reweight to the population (weight = population / sampled).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, Literal, Protocol, TypeVar

from graft_eval_pipeline.card import DOCS_GLOBS, TEST_GLOBS, ChangedFile, glob_matcher, path_rules

SizeStratum = Literal["S", "M", "L", "XL"]
PathStratum = Literal["sensitive", "tests", "docs", "source"]

_U32 = 0xFFFFFFFF
_is_test = glob_matcher(TEST_GLOBS)
_is_docs = glob_matcher(DOCS_GLOBS)


def size_stratum(additions: int, deletions: int) -> SizeStratum:
    lines = additions + deletions
    if lines <= 50:
        return "S"
    if lines <= 300:
        return "M"
    if lines <= 1500:
        return "L"
    return "XL"


def path_stratum(files: Sequence[ChangedFile], extra_sensitive_globs: Iterable[str] = ()) -> PathStratum:
    """From paths only (patches are not needed): any path rule R1-R8 of the floor → sensitive."""
    if not files:
        return "source"
    if path_rules(files, extra_sensitive_globs):
        return "sensitive"
    if all(_is_test(f.path) for f in files):
        return "tests"
    if all(_is_docs(f.path) for f in files):
        return "docs"
    return "source"


def stratum_key(size: SizeStratum, paths: PathStratum) -> str:
    return f"{size}/{paths}"


def allocate(counts: Mapping[str, int], n: int, min_per: int) -> dict[str, int]:
    """How many to draw per stratum.

    At least `min_per` from each non-empty one, the rest proportional to stratum size by largest
    remainder, never more than a stratum holds.

    Sums to `n`, or to the total when `n` exceeds it. When the minimums alone exceed `n`,
    they are dealt one round at a time, smallest stratum first (rare strata matter most).
    """
    sizes = {k: c for k, c in counts.items() if c > 0}
    alloc = dict.fromkeys(counts, 0)
    total = sum(sizes.values())
    if n >= total:
        alloc.update(sizes)
        return alloc
    floors = {k: min(min_per, c) for k, c in sizes.items()}
    if sum(floors.values()) >= n:
        left = n
        rarest_first = sorted(sizes, key=lambda k: (sizes[k], k))
        for _ in range(min_per):
            for k in rarest_first:
                if left and alloc[k] < floors[k]:
                    alloc[k] += 1
                    left -= 1
        return alloc
    alloc.update(floors)
    rest = n - sum(floors.values())
    while rest > 0:
        open_ = sorted(k for k in sizes if alloc[k] < sizes[k])
        weight = sum(sizes[k] for k in open_)
        shares = {k: Fraction(rest * sizes[k], weight) for k in open_}
        for k in open_:
            grant = min(int(shares[k]), sizes[k] - alloc[k])
            alloc[k] += grant
            rest -= grant
        for k in sorted(open_, key=lambda k: (-(shares[k] - int(shares[k])), -sizes[k], k)):
            if rest and alloc[k] < sizes[k]:
                alloc[k] += 1
                rest -= 1
    return alloc


def _imul(a: int, b: int) -> int:
    return (a * b) & _U32


def mulberry32(seed: int) -> Callable[[], float]:
    """The JavaScript mulberry32 with 32-bit unsigned arithmetic: floats in [0, 1)."""
    state = seed & _U32

    def next_float() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & _U32
        t = _imul(state ^ (state >> 15), state | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & _U32
        return ((t ^ (t >> 14)) & _U32) / 4294967296

    return next_float


T = TypeVar("T")


def seeded_shuffle(items: Sequence[T], rng: Callable[[], float]) -> list[T]:
    """Fisher-Yates from the end, as the usual JavaScript shuffle does."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = int(rng() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


class Stratified(Protocol):
    @property
    def repository(self) -> str: ...
    @property
    def pr_number(self) -> int: ...
    @property
    def stratum(self) -> str: ...


C = TypeVar("C", bound=Stratified)


@dataclass(frozen=True)
class Sample(Generic[C]):
    """The picks (sorted by repository and PR number) and, per stratum, population and picks."""

    chosen: list[C]
    population: dict[str, int]
    allocation: dict[str, int]


def draw_sample(candidates: Iterable[C], n: int, min_per: int, seed: int) -> Sample[C]:
    """Same seed and same candidates (in any order) → same sample."""
    ordered = sorted(candidates, key=lambda c: (c.repository, c.pr_number))
    by_stratum: dict[str, list[C]] = {}
    for c in ordered:
        by_stratum.setdefault(c.stratum, []).append(c)
    population = dict(sorted(Counter(c.stratum for c in ordered).items()))
    allocation = allocate(population, n, min_per)
    rng = mulberry32(seed)
    chosen: list[C] = []
    for key in sorted(by_stratum):
        chosen.extend(seeded_shuffle(by_stratum[key], rng)[: allocation[key]])
    chosen.sort(key=lambda c: (c.repository, c.pr_number))
    return Sample(chosen=chosen, population=population, allocation=allocation)
