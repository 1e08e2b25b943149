"""Export step 2: the stratified, seeded sample of the candidates, with each stratum's population.

No request: the sample is drawn from the stored candidate list (evalset/sets/sample.py), and
each exported case records the stratum it was drawn in, for the report's population estimates.
"""

from __future__ import annotations

from datetime import UTC

from graft_eval_pipeline.card import CamelModel
from graft_eval_pipeline.evalset.export.candidates import Candidate
from graft_eval_pipeline.evalset.export.options import SampleSettings
from graft_eval_pipeline.evalset.sets import CaseStratum, draw_sample


class StratumCount(CamelModel):
    population: int
    sampled: int


class ExportSample(CamelModel):
    """The picks and, per stratum, population and picks: weight = population / sampled.

    `frame` names the population sampled (repository, merge dates of the candidates, seed);
    every exported case records it with its stratum, so cases of two exports never share one.
    """

    seed: int
    size: int
    min_per_stratum: int
    strata: dict[str, StratumCount]
    picks: list[Candidate]
    frame: str = ""

    def stratum_of(self, candidate: Candidate) -> CaseStratum | None:
        """What a case exported from this sample records about its stratum."""
        count = self.strata.get(candidate.stratum)
        if not self.frame or count is None or count.sampled < 1:
            return None
        return CaseStratum(
            frame=self.frame, key=candidate.stratum, population=count.population, sampled=count.sampled
        )


def sample_frame(candidates: list[Candidate], seed: int) -> str:
    """`acme/api merged 2026-06-01..2026-09-30 seed 1`.

    The population a sample was drawn from (repositories and merge dates of its candidates; ids and
    dates only).
    """
    if not candidates:
        return ""
    repos = ",".join(sorted({c.repository for c in candidates}))
    first = min(c.merged_at for c in candidates).astimezone(UTC)
    last = max(c.merged_at for c in candidates).astimezone(UTC)
    return f"{repos} merged {first:%Y-%m-%d}..{last:%Y-%m-%d} seed {seed}"[:200]


def choose_sample(candidates: list[Candidate], settings: SampleSettings) -> ExportSample:
    """The seeded stratified sample of `candidates`, with each stratum's population and count."""
    sample = draw_sample(candidates, settings.size, settings.min_per_stratum, settings.seed)
    return ExportSample(
        frame=sample_frame(candidates, settings.seed),
        seed=settings.seed,
        size=settings.size,
        min_per_stratum=settings.min_per_stratum,
        strata={
            key: StratumCount(population=count, sampled=sample.allocation[key])
            for key, count in sample.population.items()
        },
        picks=sample.chosen,
    )
