"""The card engine under evaluation (design section 3): floor, prepare, prompts, LLM, generate."""

from graft_eval_pipeline.card.fake_llm import (
    UnscriptedCall,
    agreeing_verifier,
    llm_for_case,
    null_llm,
    scripted_llm,
)
from graft_eval_pipeline.card.floor import (
    FLOOR_RULE_IDS,
    PATH_RULE_IDS,
    RULE_CLASS,
    FloorResult,
    compute_risk_floor,
)
from graft_eval_pipeline.card.generate import combine_risk, generate_card
from graft_eval_pipeline.card.globs import DOCS_GLOBS, TEST_GLOBS, glob_matcher
from graft_eval_pipeline.card.llm import LlmClient, LlmFailure, LlmReply, LlmRequest, Usage, check_reply
from graft_eval_pipeline.card.models import (
    RISK_CLASSES,
    RISK_ORDER,
    CardInputs,
    ChangedFile,
    FakeScript,
    RiskClass,
    max_risk,
)
from graft_eval_pipeline.card.options import (
    MAX_OUTPUT_TOKENS,
    Efforts,
    GenerateOptions,
    Limits,
    Models,
    PrepareOptions,
)
from graft_eval_pipeline.card.prepare import PreparedInputs, prepare_card_inputs
from graft_eval_pipeline.card.prompts import PROMPT_VERSION, prompt_fingerprint
from graft_eval_pipeline.card.result import (
    CallRecord,
    Card,
    CardResult,
    FailureReason,
    FloorRuleId,
    OutOfScopeEdit,
    RaisedBy,
    RiskSummary,
    VerifierResult,
)

__all__ = [
    "DOCS_GLOBS",
    "FLOOR_RULE_IDS",
    "MAX_OUTPUT_TOKENS",
    "PATH_RULE_IDS",
    "PROMPT_VERSION",
    "RISK_CLASSES",
    "RISK_ORDER",
    "RULE_CLASS",
    "TEST_GLOBS",
    "CallRecord",
    "Card",
    "CardInputs",
    "CardResult",
    "ChangedFile",
    "Efforts",
    "FailureReason",
    "FakeScript",
    "FloorResult",
    "FloorRuleId",
    "GenerateOptions",
    "Limits",
    "LlmClient",
    "LlmFailure",
    "LlmReply",
    "LlmRequest",
    "Models",
    "OutOfScopeEdit",
    "PrepareOptions",
    "PreparedInputs",
    "RaisedBy",
    "RiskClass",
    "RiskSummary",
    "UnscriptedCall",
    "Usage",
    "VerifierResult",
    "agreeing_verifier",
    "check_reply",
    "combine_risk",
    "compute_risk_floor",
    "generate_card",
    "glob_matcher",
    "llm_for_case",
    "max_risk",
    "null_llm",
    "prepare_card_inputs",
    "prompt_fingerprint",
    "scripted_llm",
]
