"""The card engine under evaluation (design section 3): floor, prepare, prompts, LLM, generate.

What the other packages use; everything else is internal to `card/`. The live Anthropic client
(anthropic_llm.py: the SDK) is not here: live mode imports it by its path where it builds one
(graft_eval_pipeline/heavy.py).
"""

from graft_eval_pipeline.card.engine import engine_fingerprint
from graft_eval_pipeline.card.fake_llm import llm_for_case
from graft_eval_pipeline.card.floor import FloorResult, compute_risk_floor, path_rules
from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.globs import DOCS_GLOBS, TEST_GLOBS, glob_matcher
from graft_eval_pipeline.card.llm import (
    BatchApiError,
    BatchLlmClient,
    BatchMiss,
    CallGate,
    GatedLlmClient,
    LlmClient,
    LlmFailure,
    LlmReply,
    LlmRequest,
    RateSignal,
    Usage,
)
from graft_eval_pipeline.card.log_guard import llm_logs_quiet
from graft_eval_pipeline.card.models import (
    RETRYABLE_FAILURES,
    RISK_CLASSES,
    RISK_ORDER,
    CamelModel,
    CardInputs,
    ChangedFile,
    ContentModel,
    FakeScript,
    IssueInfo,
    LlmPurpose,
    PullRequestInfo,
    RiskClass,
    max_risk,
)
from graft_eval_pipeline.card.options import MAX_OUTPUT_TOKENS, GenerateOptions, Models
from graft_eval_pipeline.card.prepare import PreparedInputs, prepare_card_inputs
from graft_eval_pipeline.card.prompts import PROMPT_VERSION, canonical_json, prompt_fingerprint
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.card.safe_text import to_terminal_safe

__all__ = [
    "DOCS_GLOBS",
    "MAX_OUTPUT_TOKENS",
    "PROMPT_VERSION",
    "RETRYABLE_FAILURES",
    "RISK_CLASSES",
    "RISK_ORDER",
    "TEST_GLOBS",
    "BatchApiError",
    "BatchLlmClient",
    "BatchMiss",
    "CallGate",
    "CamelModel",
    "CardInputs",
    "CardResult",
    "ChangedFile",
    "ContentModel",
    "FakeScript",
    "FloorResult",
    "GatedLlmClient",
    "GenerateOptions",
    "IssueInfo",
    "LlmClient",
    "LlmFailure",
    "LlmPurpose",
    "LlmReply",
    "LlmRequest",
    "Models",
    "PreparedInputs",
    "PullRequestInfo",
    "RateSignal",
    "RiskClass",
    "Usage",
    "canonical_json",
    "compute_risk_floor",
    "engine_fingerprint",
    "generate_card",
    "glob_matcher",
    "llm_for_case",
    "llm_logs_quiet",
    "max_risk",
    "path_rules",
    "prepare_card_inputs",
    "prompt_fingerprint",
    "to_terminal_safe",
]
