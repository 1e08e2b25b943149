"""Live mode's last look: a case whose prompt text holds a secret is not sent (secret_detected).

The secret is planted straight into a stored case, as an export with older rules would have left
it. The model API is the real Anthropic client on an `httpx2.MockTransport`, or an injected fake
client; nothing reaches the network. Every secret is made up and built at run time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import httpx2
import pytest

from graft_eval_pipeline.card.models import IssueInfo
from graft_eval_pipeline.card.options import PrepareOptions
from graft_eval_pipeline.card.prepare import prepare_card_inputs
from graft_eval_pipeline.cli import main
from graft_eval_pipeline.cli import run as cli_run
from graft_eval_pipeline.defs.assets import evaluation
from graft_eval_pipeline.defs.assets.evaluation import harness_run
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.run.harness import run_harness
from graft_eval_pipeline.evalset.run.live import anthropic_llm
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.run.results import read_card_results
from graft_eval_pipeline.evalset.run.secret_check import prompt_secret_kinds
from graft_eval_pipeline.evalset.sets.paths import CARD_RESULTS_FILE
from graft_eval_pipeline.evalset.sets.store import CaseSet, read_case, write_case
from graft_eval_pipeline_tests.builders import NOW, make_file, make_inputs
from graft_eval_pipeline_tests.live_fakes import (
    Confirm,
    Factory,
    FakeLive,
    MessagesApi,
    case_ids,
    live_options,
    live_set,
)

BASE_URL = "http://anthropic.invalid"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
PEM = ["-----BEGIN RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA" + "k" * 40, "-----END RSA PRIVATE KEY-----"]
LEAKY = case_ids(3)[1]


class NetworkForbidden(BaseException):
    """Raised on any request that no test transport answers."""


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GRAFT_EVAL_KEY", "ANTHROPIC_API_KEY", "GRAFT_LLM_MODEL_FAST", "GRAFT_LLM_MODEL_STRONG"):
        monkeypatch.delenv(name, raising=False)

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise NetworkForbidden("a test tried to reach the network")

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", refuse)
    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", refuse)


def plant(cs: CaseSet, case_id: str, value: str = STRIPE) -> None:
    """Put a secret into a stored case's patch, bypassing redaction."""
    case = read_case(cs, case_id)
    patch = f'@@ -1 +1,2 @@\n-const key = ""\n+const key = "{value}"\n+export default key'
    inputs = case.inputs.model_copy(
        update={"files": [make_file("src/util/format.ts", patch=patch, additions=2, deletions=1)]}
    )
    write_case(cs, case.model_copy(update={"inputs": inputs}))


def leaky_set(root: Path) -> CaseSet:
    """Three live cases (titles `GOALTEXT-4b1e change 0..2`); the middle one holds a secret."""
    cs = live_set(root, 3)
    plant(cs, LEAKY)
    return cs


def sent(users: list[str]) -> set[str]:
    """Which of the three cases a list of user prompts came from (by their title's number)."""
    return {case_ids(3)[i] for i in range(3) for user in users if f"change {i}<" in user}


# --- the check itself -----------------------------------------------------------------------------


def kinds_of(**over: Any) -> dict[str, int]:
    return prompt_secret_kinds(prepare_card_inputs(make_inputs(**over), PrepareOptions()))


def test_prompt_text_is_checked_in_every_field_that_reaches_a_prompt() -> None:
    assert kinds_of() == {}
    assert kinds_of(pr={"title": "token = peek_token(parser)", "body": "password = os.environ['PW']"}) == {}
    assert kinds_of(pr={"title": f"rotate {STRIPE}"}) == {"stripe_key": 1}
    assert kinds_of(issue=IssueInfo(number=7, title="t", body=f"key: {STRIPE}")) == {"stripe_key": 1}
    assert kinds_of(files=[make_file(f"config/{STRIPE}.json")]) == {"stripe_key": 1}
    block = "@@ -0,0 +1,3 @@\n" + "\n".join("+" + line for line in PEM)  # a key block across diff lines
    assert kinds_of(files=[make_file("deploy/id_rsa", patch=block, additions=3)]) == {"private_key": 1}


def test_a_secret_past_the_cut_is_not_sent_so_it_does_not_count() -> None:
    options = PrepareOptions()
    filler = "x" * (options.limits.max_text_chars + 100)
    assert kinds_of(pr={"body": f"{filler} {STRIPE}"}) == {}
    assert kinds_of(pr={"body": f"{STRIPE} {filler}"}) == {"stripe_key": 1}


# --- a live run through the real client --------------------------------------------------------


def run_dirs(set_dir: Path) -> list[Path]:
    return sorted((set_dir / "runs").iterdir())


def test_live_run_skips_the_case_with_a_secret_and_allow_secrets_sends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    cs = leaky_set(tmp_path)
    api = MessagesApi()
    pools: list[httpx2.AsyncClient] = []

    def factory(env: Any) -> Any:
        pools.append(httpx2.AsyncClient(transport=httpx2.MockTransport(api)))
        return anthropic_llm(env, http_client=pools[-1], base_url=BASE_URL)

    monkeypatch.setattr(cli_run, "LLM_FACTORY", factory)
    assert main(["run", "--set", str(cs.dir), "--live", "--yes"]) == 0
    out, err = capsys.readouterr()
    users = [body["messages"][0]["content"] for body in api.bodies]
    assert users and sent(users) == {case_ids(3)[0], case_ids(3)[2]}
    assert not any(STRIPE in user for user in users)
    assert "estimate: 2 case(s) to call, 0 cached, 1 skipped (secret detected)" in err
    assert f"{LEAKY} floor trivial skipped (secret_detected: stripe_key)" in err
    assert f"skipped (secret detected): {LEAKY}" in out
    (first_dir,) = run_dirs(cs.dir)
    report = load_report(first_dir / "report.json")
    assert {r.id: r.skipped for r in report.cases} == {
        case_ids(3)[0]: None,
        LEAKY: "secret_detected",
        case_ids(3)[2]: None,
    }
    assert report.run.complete is False and report.run.skipped_budget == 0
    assert report.metrics.skipped == 1 and report.metrics.run_cases == 2
    written = out + err + "".join(p.read_text() for p in first_dir.iterdir() if p.suffix in (".json", ".md"))
    assert STRIPE not in written and "GOALTEXT" not in written
    assert "skipped (secret detected) 1" in (first_dir / "report.md").read_text()

    calls_before = len(api.bodies)
    assert main(["run", "--set", str(cs.dir), "--live", "--yes", "--allow-secrets"]) == 0
    err = capsys.readouterr().err
    assert "estimate: 1 case(s) to call, 2 cached;" in err
    users = [body["messages"][0]["content"] for body in api.bodies[calls_before:]]
    assert sent(users) == {LEAKY} and any(STRIPE in user for user in users)
    second = load_report(next(d for d in run_dirs(cs.dir) if d != first_dir) / "report.json")
    assert all(r.skipped is None and r.status == "ok" for r in second.cases) and second.run.complete


def test_run_help_offers_allow_secrets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    assert "--allow-secrets" in capsys.readouterr().out


# --- the harness: estimate, confirmation, client, cache, fake mode -----------------------------


def test_the_estimate_leaves_out_the_skipped_case(tmp_path: Path) -> None:
    cs = leaky_set(tmp_path)
    shown: list[str] = []
    confirm, client = Confirm(), FakeLive()
    run = run_harness(
        live_options(cs, Factory(client), confirm, progress=shown.append, card_results=CARD_RESULTS_FILE)
    )
    allowed_confirm = Confirm(answer=False)  # declined: nothing is called, only the estimate seen
    with pytest.raises(Exception, match="declined"):
        run_harness(
            live_options(cs, Factory(FakeLive()), allowed_confirm, allow_secrets=True, use_cache=False)
        )
    (estimate,) = confirm.seen
    (allowed,) = allowed_confirm.seen
    assert (estimate.cases_to_call, estimate.cases_skipped_secret) == (2, 1)
    assert (allowed.cases_to_call, allowed.cases_skipped_secret) == (3, 0)
    assert 0 < estimate.estimated_tokens < allowed.estimated_tokens
    assert 0 < estimate.upper_bound_usd < allowed.upper_bound_usd
    assert sent([r.user for r in client.requests]) == {case_ids(3)[0], case_ids(3)[2]}
    assert [r.skipped for r in run.rows] == [None, "secret_detected", None]
    assert {i for i, _ in read_card_results(cs, CARD_RESULTS_FILE)} == {case_ids(3)[0], case_ids(3)[2]}
    assert not any(STRIPE in line for line in shown)


def test_when_every_case_holds_a_secret_nothing_is_confirmed_or_built(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 2)
    for case_id in case_ids(2):
        plant(cs, case_id)
    confirm, factory = Confirm(), Factory(FakeLive())
    run = run_harness(live_options(cs, factory, confirm))
    assert confirm.seen == [] and factory.built == 0
    assert [r.skipped for r in run.rows] == ["secret_detected"] * 2 and run.run.complete is False


def test_a_cached_result_of_a_case_with_a_secret_is_not_used_without_allow_secrets(tmp_path: Path) -> None:
    cs = leaky_set(tmp_path)
    client = FakeLive()
    run_harness(live_options(cs, Factory(client), allow_secrets=True))  # sends it, fills the cache
    calls = len(client.requests)
    run = run_harness(live_options(cs, Factory(client)))
    assert len(client.requests) == calls
    assert [(r.skipped, r.cached) for r in run.rows] == [
        (None, True),
        ("secret_detected", False),
        (None, True),
    ]


def test_fake_mode_is_unaffected(tmp_path: Path) -> None:
    cs = leaky_set(tmp_path)
    run = run_harness(RunOptions(set=cs, now=lambda: NOW, now_ms=lambda: 0))
    assert run.llm == "fake" and [r.skipped for r in run.rows] == [None] * 3 and run.run.complete


# --- Dagster ----------------------------------------------------------------------------------------


def materialize_harness(tmp_path: Path, config: dict[str, Any]) -> dg.ExecuteInProcessResult:
    sets = CaseSetsResource(eval_dir=str(tmp_path), synthetic_dir=str(tmp_path / "synthetic"))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("case_set", ["live-demo"])
    return dg.materialize(
        [harness_run],
        partition_key="live-demo",
        instance=instance,
        resources={"case_sets": sets, "io_manager": SealedIOManager(sets=sets)},
        run_config={"ops": {"harness_run": {"config": config}}},
        raise_on_error=False,
    )


def test_harness_asset_skips_the_case_and_allow_secrets_config_sends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = FakeLive()
    monkeypatch.setattr(evaluation, "anthropic_llm", lambda _env: client)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    leaky_set(tmp_path)
    live = {"mode": "live", "confirm_live": True, "max_cost_usd": 5.0, "use_cache": False}

    def metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
        event = result.asset_materializations_for_node("harness_run")[0]
        return {k: v.value for k, v in event.metadata.items()}

    first = materialize_harness(tmp_path, live)
    assert first.success
    shown = metadata(first)
    assert shown["skipped_secret_detected"] == 1 and shown["estimate_cases_skipped_secret"] == 1
    assert shown["cases_run"] == 2 and shown["skipped_budget"] == 0 and shown["complete"] is False
    assert sent([r.user for r in client.requests]) == {case_ids(3)[0], case_ids(3)[2]}
    assert STRIPE not in json.dumps(shown, default=str)

    client.requests.clear()
    second = materialize_harness(tmp_path, {**live, "allow_secrets": True})
    assert second.success and metadata(second)["skipped_secret_detected"] == 0
    assert sent([r.user for r in client.requests]) == set(case_ids(3))
