"""What repeated trials say, for a person.

The "Repeated trials" section of report.md and report.html (`--trials N`, N > 1).

A live model answers differently from one run to the next, so one trial of a case is one draw.
report.json's `trials` block holds each headline rate over every (case, trial) pair with an
interval clustered by case, each trial's own value, the cases whose final class changed between
trials, and the cases under-classified in at least one trial. Both renderings show the same
numbers; ids and numbers only.
"""

from __future__ import annotations

from html import escape

from graft_eval_pipeline.evalset.scoring import TrialRate, TrialsSummary

TRIALS_NOTE = (
    "Each case ran {n} times. A rate counts every (case, trial) pair; its interval treats the "
    "trials of one case as one cluster (they are not independent). The standard metrics above "
    "are trial 0's."
)


def _value(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _interval(rate: TrialRate) -> str:
    return "" if rate.ci95 is None else f"[{rate.ci95[0]:.3f}–{rate.ci95[1]:.3f}]"


def _per_trial(rate: TrialRate) -> str:
    return ", ".join(_value(v) for v in rate.per_trial)


def _rate_cells(name: str, rate: TrialRate) -> list[str]:
    return [name, f"{rate.k}/{rate.n}", _value(rate.mean), _interval(rate), _per_trial(rate)]


RATE_HEADER = ["rate", "k/n (case, trial)", "mean", "95% CI (by case)", "per trial"]


def _under_any(summary: TrialsSummary) -> str:
    stat = summary.under_any_trial
    text = f"{stat.k}/{stat.n} {_value(stat.value)}"
    return text + (f" [{stat.ci95[0]:.3f}–{stat.ci95[1]:.3f}]" if stat.ci95 is not None else "")


def _flaky(summary: TrialsSummary) -> str:
    ids = summary.flaky_cases
    return f"{len(ids)}" + (f": {', '.join(ids)}" if ids else "")


def _cost(summary: TrialsSummary) -> str:
    return "n/a (a call had no price)" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"


def trials_markdown(summary: TrialsSummary) -> list[str]:
    """The section's markdown lines (without its heading)."""
    lines = [TRIALS_NOTE.format(n=summary.trials), ""]
    lines.append("| " + " | ".join(RATE_HEADER) + " |")
    lines.append("|" + "---|" * len(RATE_HEADER))
    lines += ["| " + " | ".join(_rate_cells(name, r)) + " |" for name, r in summary.rates.items()]
    lines += [
        "",
        f"- Under-classified in at least one trial: {_under_any(summary)} cases",
        f"- Flaky cases (the final class differs between trials): {_flaky(summary)}",
        f"- Cost of every trial: {_cost(summary)}",
    ]
    return lines


def trials_html(summary: TrialsSummary) -> str:
    """The section of report.html."""
    head = "".join(f"<th>{escape(h)}</th>" for h in RATE_HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in _rate_cells(name, r)) + "</tr>"
        for name, r in summary.rates.items()
    )
    return (
        f'<section id="trials"><h2>Repeated trials ({summary.trials} per case)</h2>'
        f"<p>{escape(TRIALS_NOTE.format(n=summary.trials))}</p>"
        f'<table id="trial-rates"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        f"<ul><li>Under-classified in at least one trial: {escape(_under_any(summary))} cases</li>"
        f'<li id="flaky">Flaky cases (the final class differs between trials): {escape(_flaky(summary))}</li>'
        f"<li>Cost of every trial: {escape(_cost(summary))}</li></ul></section>"
    )


def trials_metadata(summary: TrialsSummary | None) -> dict[str, int | float | None]:
    """Numbers for the Dagster report asset (plotted over runs).

    Trials per case, flaky cases and the share of cases under-classified in at least one trial (only
    the count for one trial).
    """
    if summary is None:
        return {"trials": 1}
    return {
        "trials": summary.trials,
        "flaky_cases": len(summary.flaky_cases),
        "under_any_trial": summary.under_any_trial.value,
    }
