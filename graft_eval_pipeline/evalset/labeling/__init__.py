"""Labeling: label sets, blind sessions, the labels inbox, double labeling and labeler agreement.

Also --apply, and Cohen's kappa as the agreement statistic.

What other stages, `defs/` and `cli/` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.labeling.agreement import (
    TARGET_RISK_KAPPA,
    AgreementReport,
    AgreementTally,
    agreement,
    agreement_check,
    render_agreement,
)
from graft_eval_pipeline.evalset.labeling.inbox import apply_label_file, assign_double, import_label_inbox
from graft_eval_pipeline.evalset.labeling.session import run_adjudication_session, run_label_session
from graft_eval_pipeline.evalset.labeling.set_scan import scan_set

__all__ = [
    "TARGET_RISK_KAPPA",
    "AgreementReport",
    "AgreementTally",
    "agreement",
    "agreement_check",
    "apply_label_file",
    "assign_double",
    "import_label_inbox",
    "render_agreement",
    "run_adjudication_session",
    "run_label_session",
    "scan_set",
]
