"""How a run executes its steps: chosen by run config or an environment variable, never a code edit.

The default is Dagster's `multi_or_in_process_executor` with in-process as its default: one
process per run, because the steps are short and the harness already runs its cases concurrently
(a step per subprocess re-imports the code location for each). Run config
`execution: config: multiprocess: {}` puts each step in its own process instead.

`GRAFT_EVAL_EXECUTOR` picks another executor for the whole code location, read when the code
location loads: `celery` (`dagster_celery.celery_executor`, extra `[celery]`) or `k8s`
(`dagster_k8s.k8s_job_executor`, extra `[k8s]`); their settings (broker, step pods) then come from
run config `execution: config: ...`. Every step shares only the set folder and the instance, so
those executors need the set folder on a volume every worker mounts (docs/deploying.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import dagster as dg

from graft_eval_pipeline.evalset.sets import EvalError

EXECUTOR_VAR = "GRAFT_EVAL_EXECUTOR"
DEFAULT_EXECUTOR = "in_process_or_multiprocess"
OTHER_EXECUTORS = {  # name -> (module, attribute, the extra that installs it)
    "celery": ("dagster_celery", "celery_executor", "celery"),
    "k8s": ("dagster_k8s", "k8s_job_executor", "k8s"),
}


def _as_given(config: Mapping[str, Any]) -> Mapping[str, Any]:
    return config


# Same executor and choices as `multi_or_in_process_executor`; only the default differs. Each
# choice's own fields are checked by that executor's schema (`configured` validates against it).
in_process_or_multiprocess_executor = dg.multi_or_in_process_executor.configured(
    _as_given,
    name=DEFAULT_EXECUTOR,
    config_schema=dg.Field(
        dg.Selector(  # type: ignore[no-untyped-call]  # dagster's config types are untyped
            {
                "in_process": dg.Field(dg.Permissive(), default_value={}),  # type: ignore[no-untyped-call]
                "multiprocess": dg.Field(dg.Permissive(), default_value={}),  # type: ignore[no-untyped-call]
            }
        ),
        default_value={"in_process": {}},
    ),
)


def executor_from_env(environ: Mapping[str, str]) -> dg.ExecutorDefinition:
    """The executor `GRAFT_EVAL_EXECUTOR` names (unset or empty: the default above)."""
    name = environ.get(EXECUTOR_VAR, "").strip() or DEFAULT_EXECUTOR
    if name == DEFAULT_EXECUTOR:
        return in_process_or_multiprocess_executor
    if name not in OTHER_EXECUTORS:
        choices = ", ".join([DEFAULT_EXECUTOR, *OTHER_EXECUTORS])
        raise EvalError(f"{EXECUTOR_VAR}={name!r} is not an executor: use one of {choices}, or unset it")
    module_name, attribute, extra = OTHER_EXECUTORS[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise EvalError(
            f"{EXECUTOR_VAR}={name} needs {module_name}: install the extra, "
            f"pip install -c constraints.txt 'graft-eval-pipeline[{extra}]'"
        ) from None
    executor: dg.ExecutorDefinition = getattr(module, attribute)
    return executor
