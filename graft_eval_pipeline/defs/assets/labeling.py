"""Labeling assets: import dropped label files, and measure inter-labeler agreement."""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import dagster as dg

from graft_eval_pipeline.defs.assets import EVALUATION_GROUP
from graft_eval_pipeline.defs.assets.export import case_files
from graft_eval_pipeline.defs.checks import KAPPA_CHECKS, kappa_check
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.labeling import AgreementReport, import_label_inbox, scan_set


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[case_files])
def label_import(context: dg.AssetExecutionContext, case_sets: CaseSetsResource) -> dg.MaterializeResult[Any]:
    """Merges label files from `<set>/labels-inbox/` into the cases; bad files stay, named."""
    result = import_label_inbox(case_sets.open_for_run(context), now=datetime.now(UTC))
    if result.bad_files:
        context.log.warning(
            f"{len(result.bad_files)} label file(s) left in labels-inbox: "
            + ", ".join(sorted(result.bad_files))
        )
    return dg.MaterializeResult(
        metadata={
            "imported_files": len(result.imported_files),
            "bad_files": dg.MetadataValue.json(result.bad_files),
            "labels_by_labeler": dg.MetadataValue.json(result.labels_by_labeler),
            "cases": result.case_count,
            "gold": result.gold_count,
            "needs_adjudication": len(result.needs_adjudication),
        }
    )


AGREEMENT_COLUMNS = dg.TableSchema(
    columns=[
        dg.TableColumn("pair", "string"),
        dg.TableColumn("shared", "int"),
        dg.TableColumn("risk_kappa", "float"),
        dg.TableColumn("risk_kappa_ci95_low", "float"),
        dg.TableColumn("risk_kappa_ci95_high", "float"),
        dg.TableColumn("risk_weighted_kappa", "float"),
        dg.TableColumn("flag_kappa", "float"),
        dg.TableColumn("oos_kappa", "float"),
    ]
)


@dg.asset(
    partitions_def=case_set_partitions,
    group_name=EVALUATION_GROUP,
    deps=[label_import],
    check_specs=KAPPA_CHECKS,
)
def labeler_agreement(
    context: dg.AssetExecutionContext, case_sets: CaseSetsResource
) -> Iterator[dg.Output[AgreementReport] | dg.AssetCheckResult]:
    """Cohen's kappa per labeler pair with its 95% interval, ids and numbers only.

    The check warns below the guide's target, on an undefined kappa (both labelers used one
    class) and when no pair was compared (agreement not measured): revise the guide, or assign
    double labeling, before trusting metrics.
    """
    report = scan_set(case_sets.open_for_run(context)).agreement  # the import's read, if it made one
    rows = [
        dg.TableRecord(
            {
                "pair": " / ".join(p.labelers),
                "shared": p.shared_cases,
                "risk_kappa": p.risk.kappa,
                "risk_kappa_ci95_low": p.risk.ci95[0] if p.risk.ci95 else None,
                "risk_kappa_ci95_high": p.risk.ci95[1] if p.risk.ci95 else None,
                "risk_weighted_kappa": p.risk.weighted_kappa,
                "flag_kappa": p.should_flag.kappa,
                "oos_kappa": p.out_of_scope.kappa,
            }
        )
        for p in report.pairs
    ]
    yield dg.Output(
        report,
        metadata={
            "pairs": len(report.pairs),
            "skipped_pairs": len(report.skipped_pairs),
            "agreement": dg.MetadataValue.table(rows, schema=AGREEMENT_COLUMNS),
        },
    )
    yield kappa_check(report)
