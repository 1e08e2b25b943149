"""Writes the secret-redaction corpus (true_positives.jsonl, lookalikes.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/make_corpus.py

Every value is FICTIONAL: drawn at random (fixed seed) from the documented shape of a format
(prefix, alphabet, length), never copied from anywhere, never a live credential. Each format is
described here independently of the redactor's own catalogue (so the corpus does not just echo
its rules) and names its source: the provider's documentation or a public scanner's rule or
test data (gitleaks, MIT; detect-secrets, Apache-2.0). Each format appears in several syntaxes
(code, YAML, JSON, .env, shell, a bare token), since the format, not the example, is the target.
"""

from __future__ import annotations

import base64
import json
import random
import re
import re._parser as sre_parse  # type: ignore[import-not-found]
import string
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
GL = "gitleaks (MIT) cmd/generate/config/rules/"
DS = "detect-secrets (Apache-2.0) "
SEED = 20261130
rng = random.Random(SEED)

# ---------------------------------------------------------------------------------------------
# A tiny sampler for the regex subset used by the format specs below.


def _sample(tree: list) -> str:  # type: ignore[type-arg]
    out = []
    for op, arg in tree:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "IN":
            chars: list[str] = []
            for iop, iarg in arg:
                iname = str(iop)
                if iname == "LITERAL":
                    chars.append(chr(iarg))
                elif iname == "RANGE":
                    chars.extend(chr(c) for c in range(iarg[0], iarg[1] + 1))
                elif iname == "CATEGORY":
                    cat = str(iarg)
                    chars.extend(
                        string.digits if "DIGIT" in cat else string.ascii_letters + string.digits + "_"
                    )
            out.append(rng.choice(chars))
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            lo, hi, sub = arg
            hi = lo + 8 if hi > 10_000 else hi
            for _ in range(rng.randint(lo, hi)):
                out.append(_sample(sub))
        elif name == "SUBPATTERN":
            out.append(_sample(arg[-1]))
        elif name == "BRANCH":
            out.append(_sample(rng.choice(arg[1])))
        elif name == "CATEGORY":
            out.append(rng.choice(string.digits if "DIGIT" in str(arg) else string.ascii_letters))
        else:
            raise ValueError(f"unsupported regex element {name}")
    return "".join(out)


def gen(spec: str) -> str:
    return _sample(list(sre_parse.parse(spec)))


def b62(n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def hexs(n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


# ---------------------------------------------------------------------------------------------
# Token formats: (type, expected kind, value spec, source).
FORMATS: list[tuple[str, str, str, str]] = [
    (
        "aws_access_key_id",
        "aws_key",
        "AKIA[A-Z2-7]{16}",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html",
    ),
    (
        "aws_temporary_key_id",
        "aws_key",
        "ASIA[A-Z2-7]{16}",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html",
    ),
    ("aws_key_id_abia", "aws_key", "ABIA[A-Z2-7]{16}", DS + "detect_secrets/plugins/aws.py"),
    ("aws_key_id_acca", "aws_key", "ACCA[A-Z2-7]{16}", DS + "detect_secrets/plugins/aws.py"),
    ("aws_key_id_a3t", "aws_key", "A3T[A-Z0-9][A-Z2-7]{16}", GL + "aws.go"),
    (
        "aws_session_token",
        "aws_session_token",
        "IQoJb3JpZ2luX2VjE[A-Za-z0-9/+]{200,260}",
        "https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html",
    ),
    (
        "aws_bedrock_api_key",
        "aws_bedrock_key",
        "ABSK[A-Za-z0-9+/]{120}",
        DS + "detect_secrets/plugins/amazon_bedrock.py",
    ),
    (
        "gcp_api_key",
        "gcp_api_key",
        "AIza[0-9A-Za-z_-]{35}",
        "https://cloud.google.com/docs/authentication/api-keys",
    ),
    (
        "gcp_oauth_client_secret",
        "gcp_oauth_secret",
        "GOCSPX-[A-Za-z0-9_-]{28}",
        "https://developers.google.com/identity/protocols/oauth2",
    ),
    (
        "gcp_oauth_access_token",
        "gcp_oauth_token",
        "ya29\\.[A-Za-z0-9_-]{60,120}",
        "https://developers.google.com/identity/protocols/oauth2",
    ),
    (
        "gcp_oauth_refresh_token",
        "gcp_oauth_token",
        "1//0[A-Za-z0-9_-]{60,90}",
        "https://developers.google.com/identity/protocols/oauth2",
    ),
    (
        "azure_ad_client_secret",
        "azure_client_secret",
        "[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{34}",
        GL + "azure.go",
    ),
    ("alibaba_access_key_id", "alibaba_key", "LTAI[A-Za-z0-9]{20}", GL + "alibaba.go"),
    (
        "tencent_secret_id",
        "tencent_key",
        "AKID[A-Za-z0-9]{32}",
        "https://www.tencentcloud.com/document/product/598/37140",
    ),
    (
        "google_hmac_access_id",
        "gcp_hmac_key",
        "GOOG1[A-Z0-9]{56}",
        "https://cloud.google.com/storage/docs/authentication/hmackeys",
    ),
    ("digitalocean_pat", "digitalocean_token", "dop_v1_[a-f0-9]{64}", GL + "digitalocean.go"),
    ("digitalocean_oauth", "digitalocean_token", "doo_v1_[a-f0-9]{64}", GL + "digitalocean.go"),
    ("digitalocean_refresh", "digitalocean_token", "dor_v1_[a-f0-9]{64}", GL + "digitalocean.go"),
    ("heroku_api_key_v2", "heroku_key", "HRKU-AA[0-9a-zA-Z_-]{58}", GL + "heroku.go"),
    ("flyio_token", "flyio_token", "fo1_[A-Za-z0-9_-]{43}", GL + "flyio.go"),
    ("flyio_macaroon", "flyio_token", "fm2_[A-Za-z0-9+/]{120,160}", GL + "flyio.go"),
    ("scalingo_token", "scalingo_token", "tk-us-[A-Za-z0-9_-]{48}", GL + "scalingo.go"),
    ("openshift_user_token", "openshift_token", "sha256~[A-Za-z0-9_-]{43}", GL + "openshift.go"),
    ("cloudflare_origin_ca_key", "cloudflare_key", "v1\\.0-[a-f0-9]{24}-[a-f0-9]{146}", GL + "cloudflare.go"),
    (
        "github_pat_classic",
        "github_token",
        "ghp_[A-Za-z0-9]{36}",
        "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
    ),
    (
        "github_oauth",
        "github_token",
        "gho_[A-Za-z0-9]{36}",
        "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
    ),
    (
        "github_user_to_server",
        "github_token",
        "ghu_[A-Za-z0-9]{36}",
        "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
    ),
    (
        "github_server_to_server",
        "github_token",
        "ghs_[A-Za-z0-9]{36}",
        "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
    ),
    (
        "github_refresh",
        "github_token",
        "ghr_[A-Za-z0-9]{36}",
        "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
    ),
    (
        "github_fine_grained_pat",
        "github_token",
        "github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
        "https://github.blog/changelog/2022-10-18-introducing-fine-grained-personal-access-tokens/",
    ),
    (
        "gitlab_pat",
        "gitlab_token",
        "glpat-[A-Za-z0-9_-]{20}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_pat_routable",
        "gitlab_token",
        "glpat-[A-Za-z0-9_-]{27,40}\\.01\\.[0-9a-z]{9}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_deploy_token",
        "gitlab_token",
        "gldt-[A-Za-z0-9_-]{20}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_runner_token",
        "gitlab_token",
        "glrt-[A-Za-z0-9_-]{20}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_feed_token",
        "gitlab_token",
        "glft-[A-Za-z0-9_-]{20}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_cicd_job_token",
        "gitlab_token",
        "glcbt-[0-9a-f]{2}_[A-Za-z0-9_-]{20}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_oauth_secret",
        "gitlab_token",
        "gloas-[A-Za-z0-9_-]{64}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_agent_token",
        "gitlab_token",
        "glagent-[A-Za-z0-9_-]{50}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_trigger_token",
        "gitlab_token",
        "glptt-[a-f0-9]{40}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_scim_token",
        "gitlab_token",
        "glsoat-[A-Za-z0-9_-]{20}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "gitlab_runner_registration",
        "gitlab_token",
        "GR1348941[A-Za-z0-9_-]{20}",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    (
        "bitbucket_app_password",
        "atlassian_token",
        "ATBB[A-Za-z0-9]{32}[A-F0-9]{8}",
        "https://support.atlassian.com/bitbucket-cloud/docs/app-passwords/",
    ),
    ("atlassian_api_token", "atlassian_token", "ATATT3xFfGF0[A-Za-z0-9_=-]{170,180}", GL + "atlassian.go"),
    (
        "npm_access_token",
        "npm_token",
        "npm_[A-Za-z0-9]{36}",
        "https://github.blog/2021-09-23-announcing-npms-new-access-token-format/",
    ),
    (
        "pypi_upload_token",
        "pypi_token",
        "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{70,160}",
        "https://pypi.org/help/#apitoken",
    ),
    (
        "testpypi_upload_token",
        "pypi_token",
        "pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{70,120}",
        DS + "detect_secrets/plugins/pypi_token.py",
    ),
    ("rubygems_api_key", "rubygems_token", "rubygems_[a-f0-9]{48}", GL + "rubygems.go"),
    ("clojars_token", "clojars_token", "CLOJARS_[a-z0-9]{60}", GL + "clojars.go"),
    (
        "docker_hub_pat",
        "docker_token",
        "dckr_pat_[A-Za-z0-9_-]{27}",
        "https://docs.docker.com/security/for-developers/access-tokens/",
    ),
    (
        "docker_hub_oat",
        "docker_token",
        "dckr_oat_[A-Za-z0-9_-]{32}",
        "https://docs.docker.com/security/for-developers/access-tokens/",
    ),
    ("artifactory_api_key", "artifactory_token", "AKCp[A-Za-z0-9]{69}", GL + "artifactory.go"),
    ("artifactory_reference_token", "artifactory_token", "cmVmd[A-Za-z0-9]{59}", GL + "artifactory.go"),
    (
        "nuget_api_key",
        "nuget_key",
        "oy2[a-z0-9]{43}",
        "https://learn.microsoft.com/en-us/nuget/nuget-org/scoped-api-keys",
    ),
    ("octopus_deploy_api_key", "octopus_key", "API-[A-Z0-9]{26}", GL + "octopus.go"),
    ("pulumi_token", "pulumi_token", "pul-[a-f0-9]{40}", GL + "pulumi.go"),
    ("prefect_token", "prefect_token", "pnu_[A-Za-z0-9]{36}", GL + "prefect.go"),
    (
        "terraform_cloud_token",
        "terraform_token",
        "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{67}",
        GL + "hashicorp.go",
    ),
    (
        "vault_service_token",
        "vault_token",
        "hvs\\.[A-Za-z0-9_-]{90,100}",
        "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes",
    ),
    (
        "vault_batch_token",
        "vault_token",
        "hvb\\.[A-Za-z0-9_-]{140,160}",
        "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes",
    ),
    ("doppler_personal_token", "doppler_token", "dp\\.pt\\.[A-Za-z0-9]{43}", GL + "doppler.go"),
    (
        "doppler_service_token",
        "doppler_token",
        "dp\\.st\\.[a-z0-9_]{2,20}\\.[A-Za-z0-9]{40}",
        GL + "doppler.go",
    ),
    ("infracost_token", "infracost_token", "ico-[A-Za-z0-9]{32}", GL + "infracost.go"),
    ("sourcegraph_token", "sourcegraph_token", "sgp_[a-f0-9]{16}_[a-f0-9]{40}", GL + "sourcegraph.go"),
    (
        "buildkite_token",
        "buildkite_token",
        "bkua_[a-f0-9]{40}",
        "https://buildkite.com/docs/apis/managing-api-tokens",
    ),
    (
        "circleci_pat",
        "circleci_token",
        "CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}",
        "https://circleci.com/docs/managing-api-tokens/",
    ),
    (
        "netlify_pat",
        "netlify_token",
        "nfp_[A-Za-z0-9]{36}",
        "https://docs.netlify.com/api/get-started/#authentication",
    ),
    ("render_api_key", "render_key", "rnd_[A-Za-z0-9]{32}", "https://render.com/docs/api#authentication"),
    (
        "anthropic_api_key",
        "anthropic_key",
        "sk-ant-api03-[A-Za-z0-9_-]{93}AA",
        "https://docs.anthropic.com/en/api/overview#authentication",
    ),
    ("anthropic_admin_key", "anthropic_key", "sk-ant-admin01-[A-Za-z0-9_-]{93}AA", GL + "anthropic.go"),
    (
        "openai_project_key",
        "openai_key",
        "sk-proj-[A-Za-z0-9_-]{58}T3BlbkFJ[A-Za-z0-9_-]{58}",
        GL + "openai.go",
    ),
    (
        "openai_service_account_key",
        "openai_key",
        "sk-svcacct-[A-Za-z0-9_-]{58}T3BlbkFJ[A-Za-z0-9_-]{58}",
        GL + "openai.go",
    ),
    (
        "openai_legacy_key",
        "openai_key",
        "sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
        DS + "detect_secrets/plugins/openai.py",
    ),
    (
        "openrouter_key",
        "openrouter_key",
        "sk-or-v1-[a-f0-9]{64}",
        "https://openrouter.ai/docs/api-reference/authentication",
    ),
    ("groq_key", "groq_key", "gsk_[A-Za-z0-9]{52}", GL + "groq.go"),
    ("xai_key", "xai_key", "xai-[A-Za-z0-9]{80}", "https://docs.x.ai/docs/api-reference#authentication"),
    ("perplexity_key", "perplexity_key", "pplx-[A-Za-z0-9]{48}", GL + "perplexity.go"),
    (
        "replicate_token",
        "replicate_token",
        "r8_[A-Za-z0-9]{37}",
        "https://replicate.com/docs/reference/http#authentication",
    ),
    (
        "huggingface_token",
        "huggingface_token",
        "hf_[A-Za-z]{34}",
        "https://huggingface.co/docs/hub/security-tokens",
    ),
    ("huggingface_org_token", "huggingface_token", "api_org_[A-Za-z]{34}", GL + "huggingface.go"),
    ("langsmith_key", "langsmith_key", "lsv2_pt_[a-f0-9]{32}_[a-f0-9]{10}", GL + "langsmith.go"),
    (
        "nvidia_key",
        "nvidia_key",
        "nvapi-[A-Za-z0-9_-]{64}",
        "https://docs.api.nvidia.com/nim/reference/authentication",
    ),
    (
        "tavily_key",
        "tavily_key",
        "tvly-[A-Za-z0-9]{32}",
        "https://docs.tavily.com/documentation/api-reference/introduction",
    ),
    (
        "pinecone_key",
        "pinecone_key",
        "pcsk_[A-Za-z0-9]{5}_[A-Za-z0-9]{60}",
        "https://docs.pinecone.io/guides/projects/manage-api-keys",
    ),
    (
        "elevenlabs_key",
        "elevenlabs_key",
        "sk_[a-f0-9]{48}",
        "https://elevenlabs.io/docs/api-reference/authentication",
    ),
    ("deepseek_key", "deepseek_key", "sk-[a-f0-9]{32}", "https://api-docs.deepseek.com/"),
    (
        "slack_bot_token",
        "slack_token",
        "xoxb-[0-9]{11}-[0-9]{13}-[A-Za-z0-9]{24}",
        "https://api.slack.com/authentication/token-types",
    ),
    (
        "slack_user_token",
        "slack_token",
        "xoxp-[0-9]{11}-[0-9]{11}-[0-9]{13}-[a-f0-9]{32}",
        "https://api.slack.com/authentication/token-types",
    ),
    ("slack_legacy_workspace_token", "slack_token", "xoxa-2-[0-9]{11}-[A-Za-z0-9]{24}", GL + "slack.go"),
    ("slack_config_refresh_token", "slack_token", "xoxe-1-[A-Z0-9]{146}", GL + "slack.go"),
    ("slack_config_access_token", "slack_token", "xoxe\\.xoxp-1-[A-Z0-9]{163}", GL + "slack.go"),
    (
        "slack_app_token",
        "slack_token",
        "xapp-1-A[A-Z0-9]{10}-[0-9]{13}-[a-f0-9]{64}",
        "https://api.slack.com/authentication/token-types#app-level",
    ),
    (
        "slack_webhook",
        "slack_webhook",
        "https://hooks\\.slack\\.com/services/T[A-Z0-9]{10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}",
        "https://api.slack.com/messaging/webhooks",
    ),
    (
        "slack_workflow_webhook",
        "slack_webhook",
        "https://hooks\\.slack\\.com/workflows/T[A-Z0-9]{10}/A[A-Z0-9]{10}/[0-9]{18}/[A-Za-z0-9]{24}",
        GL + "slack.go",
    ),
    (
        "discord_webhook",
        "discord_webhook",
        "https://discord\\.com/api/webhooks/[0-9]{18}/[A-Za-z0-9_-]{68}",
        "https://discord.com/developers/docs/resources/webhook",
    ),
    (
        "discord_bot_token",
        "discord_token",
        "[MN][A-Za-z0-9]{23}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{27}",
        DS + "detect_secrets/plugins/discord.py",
    ),
    (
        "teams_webhook",
        "teams_webhook",
        "https://contoso\\.webhook\\.office\\.com/webhookb2/[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}@[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}/IncomingWebhook/[a-f0-9]{32}/[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
        GL + "microsoft.go",
    ),
    (
        "telegram_bot_token",
        "telegram_token",
        "[0-9]{9,10}:AA[A-Za-z0-9_-]{33}",
        "https://core.telegram.org/bots/api#authorizing-your-bot",
    ),
    ("twilio_api_key", "twilio_key", "SK[0-9a-f]{32}", "https://www.twilio.com/docs/iam/api-keys"),
    ("twilio_account_sid", "twilio_key", "AC[0-9a-f]{32}", DS + "detect_secrets/plugins/twilio.py"),
    (
        "sendgrid_api_key",
        "sendgrid_key",
        "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}",
        "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys",
    ),
    ("mailgun_api_key", "mailgun_key", "key-[a-f0-9]{32}", GL + "mailgun.go"),
    (
        "mailchimp_api_key",
        "mailchimp_key",
        "[a-f0-9]{32}-us[0-9]{1,2}",
        DS + "detect_secrets/plugins/mailchimp.py",
    ),
    ("brevo_api_key", "brevo_key", "xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", GL + "sendinblue.go"),
    ("linear_api_key", "linear_key", "lin_api_[A-Za-z0-9]{40}", GL + "linear.go"),
    ("notion_token", "notion_token", "ntn_[0-9]{11}[A-Za-z0-9]{35}", GL + "notion.go"),
    (
        "notion_internal_secret",
        "notion_token",
        "secret_[A-Za-z0-9]{43}",
        "https://developers.notion.com/docs/authorization",
    ),
    (
        "asana_pat",
        "asana_token",
        "2/[0-9]{16}/[0-9]{16}:[a-f0-9]{32}",
        "https://developers.asana.com/docs/personal-access-token",
    ),
    (
        "figma_pat",
        "figma_token",
        "figd_[A-Za-z0-9_-]{40}",
        "https://www.figma.com/developers/api#access-tokens",
    ),
    (
        "airtable_pat",
        "airtable_token",
        "pat[A-Za-z0-9]{14}\\.[a-f0-9]{64}",
        "https://airtable.com/developers/web/guides/personal-access-tokens",
    ),
    ("typeform_token", "typeform_token", "tfp_[A-Za-z0-9_]{44}_[A-Za-z0-9]{14}", GL + "typeform.go"),
    ("frameio_token", "frameio_token", "fio-u-[A-Za-z0-9_=-]{64}", GL + "frameio.go"),
    ("readme_api_key", "readme_key", "rdme_[a-z0-9]{70}", GL + "readme.go"),
    ("postman_api_key", "postman_key", "PMAK-[a-f0-9]{24}-[a-f0-9]{34}", GL + "postman.go"),
    ("dropbox_short_lived_token", "dropbox_token", "sl\\.[A-Za-z0-9_-]{135}", GL + "dropbox.go"),
    (
        "mapbox_secret_token",
        "mapbox_token",
        "sk\\.eyJ1Ijoi[A-Za-z0-9]{40,60}\\.[A-Za-z0-9_-]{22}",
        "https://docs.mapbox.com/help/glossary/access-token/",
    ),
    ("stripe_live_secret_key", "stripe_key", "sk_live_[A-Za-z0-9]{24,99}", "https://docs.stripe.com/keys"),
    ("stripe_test_secret_key", "stripe_key", "sk_test_[A-Za-z0-9]{24,99}", "https://docs.stripe.com/keys"),
    ("stripe_restricted_key", "stripe_key", "rk_live_[A-Za-z0-9]{24,99}", "https://docs.stripe.com/keys"),
    (
        "stripe_webhook_secret",
        "stripe_key",
        "whsec_[A-Za-z0-9]{32}",
        "https://docs.stripe.com/webhooks#verify-events",
    ),
    ("square_access_token", "square_token", "EAAA[A-Za-z0-9_-]{60}", GL + "square.go"),
    ("square_sandbox_token", "square_token", "sq0atp-[A-Za-z0-9_-]{22}", GL + "square.go"),
    (
        "square_oauth_secret",
        "square_token",
        "sq0csp-[A-Za-z0-9_-]{43}",
        DS + "detect_secrets/plugins/square_oauth.py",
    ),
    (
        "shopify_access_token",
        "shopify_token",
        "shpat_[a-f0-9]{32}",
        "https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens",
    ),
    ("shopify_custom_app_token", "shopify_token", "shpca_[a-f0-9]{32}", GL + "shopify.go"),
    ("shopify_private_app_token", "shopify_token", "shppa_[a-f0-9]{32}", GL + "shopify.go"),
    ("shopify_shared_secret", "shopify_token", "shpss_[a-f0-9]{32}", GL + "shopify.go"),
    ("facebook_page_token", "facebook_token", "EAAC[A-Za-z0-9]{120,180}", GL + "facebook.go"),
    ("flutterwave_secret_key", "flutterwave_key", "FLWSECK_TEST-[a-h0-9]{32}-X", GL + "flutterwave.go"),
    ("easypost_api_key", "easypost_key", "EZAK[A-Za-z0-9]{54}", GL + "easypost.go"),
    ("easypost_test_key", "easypost_key", "EZTK[A-Za-z0-9]{54}", GL + "easypost.go"),
    ("duffel_token", "duffel_token", "duffel_test_[A-Za-z0-9_=-]{43}", GL + "duffel.go"),
    ("shippo_token", "shippo_token", "shippo_live_[a-f0-9]{40}", GL + "shippo.go"),
    (
        "braintree_access_token",
        "braintree_token",
        "access_token\\$production\\$[0-9a-z]{16}\\$[0-9a-f]{32}",
        GL + "braintree.go",
    ),
    (
        "plaid_access_token",
        "plaid_token",
        "access-sandbox-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        GL + "plaid.go",
    ),
    ("databricks_token", "databricks_token", "dapi[a-f0-9]{32}", GL + "databricks.go"),
    ("dynatrace_token", "dynatrace_token", "dt0c01\\.[A-Z0-9]{24}\\.[A-Z0-9]{64}", GL + "dynatrace.go"),
    ("grafana_cloud_token", "grafana_token", "glc_[A-Za-z0-9+/]{32,80}={0,2}", GL + "grafana.go"),
    ("grafana_service_account", "grafana_token", "glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}", GL + "grafana.go"),
    ("newrelic_user_key", "newrelic_key", "NRAK-[A-Z0-9]{27}", GL + "newrelic.go"),
    ("newrelic_insert_key", "newrelic_key", "NRII-[A-Za-z0-9_-]{32}", GL + "newrelic.go"),
    ("newrelic_browser_key", "newrelic_key", "NRJS-[a-f0-9]{19}", GL + "newrelic.go"),
    (
        "newrelic_license_key",
        "newrelic_key",
        "[a-f0-9]{36}NRAL",
        "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/",
    ),
    ("sentry_user_token", "sentry_token", "sntryu_[a-f0-9]{64}", GL + "sentry.go"),
    (
        "honeycomb_ingest_key",
        "honeycomb_key",
        "hcaik_[a-z0-9]{58}",
        "https://docs.honeycomb.io/get-started/configure/environments/manage-api-keys/",
    ),
    ("posthog_personal_key", "posthog_key", "phx_[A-Za-z0-9]{43}", "https://posthog.com/docs/api"),
    ("planetscale_token", "planetscale_token", "pscale_tkn_[A-Za-z0-9_]{43}", GL + "planetscale.go"),
    ("planetscale_password", "planetscale_token", "pscale_pw_[A-Za-z0-9_]{43}", GL + "planetscale.go"),
    ("supabase_pat", "supabase_key", "sbp_[a-f0-9]{40}", "https://supabase.com/docs/guides/api/api-keys"),
    ("clickhouse_cloud_secret", "clickhouse_key", "4b1d[A-Za-z0-9]{38}", GL + "clickhouse.go"),
    (
        "astra_token",
        "astra_token",
        "AstraCS:[A-Za-z]{24}:[a-f0-9]{64}",
        "https://docs.datastax.com/en/astra-db-serverless/administration/manage-application-tokens.html",
    ),
    (
        "harness_pat",
        "harness_token",
        "pat\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{20}",
        GL + "harness.go",
    ),
    (
        "launchdarkly_api_key",
        "launchdarkly_key",
        "api-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        GL + "launchdarkly.go",
    ),
    ("settlemint_pat", "settlemint_token", "sm_pat_[A-Za-z0-9]{16}", GL + "settlemint.go"),
    ("maxmind_license_key", "maxmind_key", "[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", GL + "maxmind.go"),
    (
        "onepassword_secret_key",
        "onepassword_key",
        "A3-[A-Z0-9]{6}-[A-Z0-9]{11}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        GL + "1password.go",
    ),
    ("onepassword_service_token", "onepassword_key", "ops_eyJ[A-Za-z0-9+/]{250,300}", GL + "1password.go"),
    (
        "age_secret_key",
        "age_key",
        "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "https://age-encryption.org/v1",
    ),
    ("adobe_client_secret", "adobe_secret", "p8e-[A-Za-z0-9]{32}", GL + "adobe.go"),
    ("intra42_secret", "intra42_secret", "s-s4t2ud-[a-f0-9]{64}", GL + "intra42.go"),
    (
        "django_insecure_key",
        "django_secret_key",
        "django-insecure-[a-z0-9!@#%^&*(=+_-]{50}",
        "https://docs.djangoproject.com/en/stable/ref/settings/#secret-key",
    ),
    ("yandex_api_key", "yandex_key", "AQVN[A-Za-z0-9_-]{35,38}", GL + "yandex.go"),
    ("contentful_pat", "contentful_token", "CFPAT-[A-Za-z0-9_-]{43}", GL + "contentful.go"),
    (
        "firebase_fcm_server_key",
        "firebase_key",
        "AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{134}",
        "https://firebase.google.com/docs/cloud-messaging/auth-server",
    ),
    ("twitter_bearer_token", "twitter_token", "AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{80,100}", GL + "twitter.go"),
    (
        "authress_key",
        "authress_key",
        "sc_[a-z0-9]{12}\\.[a-z0-9]{5}\\.acc_[a-z0-9]{20}\\.[A-Za-z0-9_-]{60}",
        GL + "authress.go",
    ),
]


def _jwt(payload: dict[str, object], alg: str = "HS256", signed: bool = True) -> str:
    def enc(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")

    head = enc({"alg": alg if signed else "none", "typ": "JWT"})
    body = enc(payload)
    sig = base64.urlsafe_b64encode(rng.randbytes(32)).decode().rstrip("=") if signed else ""
    return f"{head}.{body}.{sig}"


# Contexts for a bare token: the redactor must find it without a helpful name.
TOKEN_CONTEXTS = [
    'export {NAME}="{v}"',
    "{name}: {v}",
    '  "{name}": "{v}",',
    'client = Client("{v}")',
    "const creds = '{v}';",
    "# rotated 2026-03-01: {v}",
    "curl -s https://api.example.test/v1 -H 'X-Auth: {v}'",
    "{NAME}={v}",
    "    api.setCredentials(`{v}`)",
    "<value>{v}</value>",
]


def _names(kind: str) -> tuple[str, str]:
    base = kind.replace("_key", "").replace("_token", "").replace("_secret", "")
    return base + "_credential", base.upper() + "_CREDENTIAL"


def token_entries() -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    for index, (kind_type, kind, spec, source) in enumerate(FORMATS):
        name, upper = _names(kind)
        for repeat in range(2):
            value = gen(spec)
            context = TOKEN_CONTEXTS[(index * 2 + repeat) % len(TOKEN_CONTEXTS)]
            line = context.replace("{NAME}", upper).replace("{name}", name).replace("{v}", value)
            entries.append(_tp(line, value, kind_type, kind, source))
    payloads: tuple[dict[str, object], ...] = (
        {"sub": "u-" + hexs(8), "iat": 1760000000},
        {"iss": "https://id.example.test", "scope": "read"},
    )
    for repeat, payload in enumerate(payloads):
        token = _jwt(payload)
        line = f"Authorization: Bearer {token}" if repeat else f'session_cookie = "{token}"'
        entries.append(_tp(line, token, "jwt", "jwt", "https://datatracker.ietf.org/doc/html/rfc7519"))
    unsigned = _jwt({"sub": "svc-" + hexs(6), "role": "admin"}, signed=False)
    entries.append(
        _tp(
            f"fixture_header = '{unsigned}'",
            unsigned,
            "jwt_unsigned",
            "jwt",
            "https://datatracker.ietf.org/doc/html/rfc7519#section-6",
        )
    )
    return entries


def _tp(line: str, secret: str, type_: str, kind: str, source: str) -> dict[str, object]:
    return {"line": line, "secret": secret, "type": type_, "kind": kind, "source": source, "fictional": True}


def _pem_body(lines: int) -> list[str]:
    return [base64.b64encode(rng.randbytes(48)).decode() for _ in range(lines)]


def structured_entries() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    pem = "https://datatracker.ietf.org/doc/html/rfc7468"
    for label in (
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "EC PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "DSA PRIVATE KEY",
    ):
        body = _pem_body(3)
        block = "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"])
        out.append(_tp(block, body[1], "pem_" + label.lower().replace(" ", "_"), "private_key", pem))
    body = _pem_body(3)
    openssh = "\n".join(
        [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAAA" + body[0][:40],
            *body[1:],
            "-----END OPENSSH PRIVATE KEY-----",
        ]
    )
    out.append(
        _tp(
            openssh,
            body[1],
            "openssh_private_key",
            "private_key",
            "https://github.com/openssh/openssh-portable/blob/master/PROTOCOL.key",
        )
    )
    body = _pem_body(4)
    pgp = "\n".join(
        [
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "",
            *body,
            "=" + b62(4),
            "-----END PGP PRIVATE KEY BLOCK-----",
        ]
    )
    out.append(
        _tp(
            pgp,
            body[2],
            "pgp_private_key",
            "private_key",
            "https://datatracker.ietf.org/doc/html/rfc4880#section-6.2",
        )
    )
    body = _pem_body(3)
    putty = "\n".join(
        [
            "PuTTY-User-Key-File-3: ssh-ed25519",
            "Encryption: none",
            "Comment: ed25519-key-fictional",
            "Public-Lines: 2",
            body[0],
            "Private-Lines: 1",
            body[1],
            "Private-MAC: " + hexs(64),
        ]
    )
    out.append(
        _tp(
            putty,
            body[1],
            "putty_private_key",
            "private_key",
            "https://the.earth.li/~sgtatham/putty/0.78/htmldoc/AppendixC.html",
        )
    )
    body = _pem_body(2)
    ssh2 = "\n".join(
        [
            "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
            'Comment: "fictional"',
            *body,
            "---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        ]
    )
    out.append(
        _tp(ssh2, body[0], "ssh2_private_key", "private_key", DS + "detect_secrets/plugins/private_key.py")
    )
    body = _pem_body(4)
    gcp = (
        '  "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + "\\n".join(body)
        + '\\n-----END PRIVATE KEY-----\\n",'
    )
    out.append(
        _tp(
            gcp,
            body[2],
            "gcp_service_account_private_key",
            "private_key",
            "https://cloud.google.com/iam/docs/keys-create-delete#creating",
        )
    )
    body = _pem_body(3)
    concat = "\n".join(
        [
            'KEY = ("-----BEGIN EC PRIVATE KEY-----\\n"',
            *(f'       "{b}\\n"' for b in body),
            '       "-----END EC PRIVATE KEY-----\\n")',
        ]
    )
    out.append(_tp(concat, body[1], "pem_in_string_concatenation", "private_key", pem))
    b64pem = base64.b64encode(
        (
            "-----BEGIN RSA PRIVATE KEY-----\n"
            + "\n".join(_pem_body(3))
            + "\n-----END RSA PRIVATE KEY-----\n"
        ).encode()
    ).decode()
    out.append(
        _tp(
            f"  tls.key: {b64pem}",
            b64pem,
            "k8s_secret_base64_pem",
            "private_key",
            "https://kubernetes.io/docs/concepts/configuration/secret/#tls-secrets",
        )
    )
    # URLs with user:password@
    rfc3986 = "https://datatracker.ietf.org/doc/html/rfc3986#section-3.2.1"
    for scheme, user, host in (
        ("postgres", "app", "db.internal.test:5432/app"),
        ("postgresql", "svc_reader", "10.0.0.12/orders"),
        ("mysql", "root", "mysql.example.test:3306/shop"),
        ("mongodb+srv", "atlas-admin", "cluster0.abcde.mongodb.net/test"),
        ("redis", "", "cache.example.test:6379/0"),
        ("amqp", "guest-svc", "mq.example.test:5672/%2f"),
        ("https", "x-access-token", "github.com/acme/repo.git"),
        ("https", "deploy", "nexus.example.test/repository/pypi/simple"),
        ("ftp", "upload", "files.example.test/incoming"),
        ("smtp", "mailer", "smtp.example.test:587"),
    ):
        pw = gen("[A-Za-z0-9!*_-]{14,24}")
        url = f"{scheme}://{user}:{pw}@{host}"
        line = rng.choice(
            (f'DATABASE_URL="{url}"', f"url: {url}", f"conn = connect('{url}')", f"git clone {url}")
        )
        out.append(_tp(line, pw, "url_with_password_" + scheme.replace("+", "_"), "url_password", rfc3986))
    out.append(
        _tp(
            "https://username:password@yelp.com",
            "password",
            "url_with_password_literal",
            "url_password",
            DS + "tests/plugins/basic_auth_test.py",
        )
    )
    # Connection strings
    azure = "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string"
    key88 = base64.b64encode(rng.randbytes(64)).decode()
    out.append(
        _tp(
            f'"Storage": "DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey={key88};EndpointSuffix=core.windows.net"',
            key88,
            "azure_storage_connection_string",
            "connection_string",
            azure,
        )
    )
    sak = base64.b64encode(rng.randbytes(32)).decode()
    out.append(
        _tp(
            f"SERVICEBUS=Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sak}",
            sak,
            "azure_service_bus_connection_string",
            "connection_string",
            "https://learn.microsoft.com/en-us/azure/service-bus-messaging/service-bus-sas",
        )
    )
    pw = gen("[A-Za-z0-9#!]{16}")
    out.append(
        _tp(
            f'"Default": "Server=tcp:sql.example.test,1433;Initial Catalog=app;User ID=app;Password={pw};Encrypt=True;"',
            pw,
            "sqlserver_connection_string",
            "connection_string",
            "https://learn.microsoft.com/en-us/dotnet/api/system.data.sqlclient.sqlconnection.connectionstring",
        )
    )
    pw = gen("[A-Za-z0-9]{18}")
    out.append(
        _tp(
            f"jdbc:sqlserver://db.example.test:1433;databaseName=app;user=app;password={pw};",
            pw,
            "jdbc_connection_string",
            "connection_string",
            "https://learn.microsoft.com/en-us/sql/connect/jdbc/building-the-connection-url",
        )
    )
    sig = (
        base64.b64encode(rng.randbytes(32))
        .decode()
        .replace("+", "%2B")
        .replace("/", "%2F")
        .replace("=", "%3D")
    )
    out.append(
        _tp(
            f"https://acme.blob.core.windows.net/c/report.csv?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-01T00:00:00Z&sig={sig}",
            sig,
            "azure_sas_token",
            "connection_string",
            "https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas",
        )
    )
    # Authorization headers
    basic = base64.b64encode(f"svc-user:{gen('[A-Za-z0-9]{16}')}".encode()).decode()
    out.append(
        _tp(
            f"Authorization: Basic {basic}",
            basic,
            "http_basic_auth_header",
            "auth_header",
            "https://datatracker.ietf.org/doc/html/rfc7617",
        )
    )
    basic = base64.b64encode(f"deploy:{gen('[A-Za-z0-9]{20}')}".encode()).decode()
    out.append(
        _tp(
            f'    headers = {{"Authorization": "Basic {basic}"}}',
            basic,
            "http_basic_auth_header",
            "auth_header",
            "https://datatracker.ietf.org/doc/html/rfc7617",
        )
    )
    bearer = gen("[A-Za-z0-9_-]{40}")
    out.append(
        _tp(
            f"curl -H 'Authorization: Bearer {bearer}' https://api.example.test/me",
            bearer,
            "http_bearer_header",
            "auth_header",
            "https://datatracker.ietf.org/doc/html/rfc6750#section-2.1",
        )
    )
    bearer = gen("[a-f0-9]{40}")
    out.append(
        _tp(
            f'req.Header.Set("Authorization", "token {bearer}")',
            bearer,
            "http_token_header",
            "auth_header",
            "https://docs.github.com/en/rest/authentication/authenticating-to-the-rest-api",
        )
    )
    bearer = gen("[A-Za-z0-9]{32}")
    out.append(
        _tp(
            f"  Authorization: Bearer {bearer}",
            bearer,
            "http_bearer_header",
            "auth_header",
            "https://datatracker.ietf.org/doc/html/rfc6750#section-2.1",
        )
    )
    pw = gen("[A-Za-z0-9]{14}")
    out.append(
        _tp(
            f"curl -u admin:{pw} https://jenkins.example.test/api/json",
            pw,
            "curl_basic_auth",
            "basic_auth",
            GL + "curl.go",
        )
    )
    npm = "00000000-0000-0000-0000-000000000000"
    npm = "-".join(hexs(n) for n in (8, 4, 4, 4, 12))
    out.append(
        _tp(
            f"//registry.npmjs.org/:_authToken={npm}",
            npm,
            "npmrc_legacy_token",
            "assignment",
            DS + "detect_secrets/plugins/npm.py",
        )
    )
    aws = gen("[A-Za-z0-9/+]{40}")
    out.append(
        _tp(
            f"aws_secret_access_key = {aws}",
            aws,
            "aws_secret_access_key",
            "aws_secret_key",
            DS + "detect_secrets/plugins/aws.py",
        )
    )
    aws = gen("[A-Za-z0-9/+]{40}")
    out.append(
        _tp(
            f'  AWS_SECRET_ACCESS_KEY: "{aws}"', aws, "aws_secret_access_key", "aws_secret_key", GL + "aws.go"
        )
    )
    return out


# Generic assignments: secret-named keys in many syntaxes, random values of several shapes.
NAMES = [
    "password",
    "passwd",
    "pwd",
    "db_password",
    "DB_PASSWORD",
    "dbPassword",
    "adminPass",
    "MYSQL_ROOT_PASSWORD",
    "secret",
    "client_secret",
    "clientSecret",
    "CLIENT_SECRET",
    "webhook_secret",
    "app-secret",
    "JWT_SECRET",
    "secret_key",
    "SECRET_KEY",
    "secretKey",
    "api_key",
    "apiKey",
    "API_KEY",
    "x-api-key",
    "ApiKey",
    "access_key",
    "accessKey",
    "private_key",
    "privateKey",
    "auth_token",
    "authToken",
    "access_token",
    "accessToken",
    "refresh_token",
    "JIRA_API_TOKEN",
    "SLACK_BOT_TOKEN",
    "bearer_token",
    "token",
    "TOKEN",
    "credentials",
    "encryption_key",
    "signing_key",
    "master_key",
    "session_secret",
    "passphrase",
    "consumer_secret",
    "license_key",
    "service_account_key",
    "storage_account_key",
    "secret_key_base",
]
VALUES = [
    "[A-Za-z0-9]{16,32}",
    "[a-f0-9]{32}",
    "[a-f0-9]{64}",
    "[A-Za-z0-9+/]{40}",
    "[A-Za-z0-9_-]{24,40}",
    "[A-Z0-9]{20}",
    "[a-z0-9]{12,20}",
    "[A-Za-z0-9!@#%^*]{12,18}",
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
]
SYNTAXES = [
    ("python", '{n} = "{v}"'),
    ("python_single", "{n} = '{v}'"),
    ("yaml", "{n}: {v}"),
    ("yaml_quoted", '{n}: "{v}"'),
    ("json", '  "{n}": "{v}",'),
    ("json_escaped", '"{{\\"{n}\\": \\"{v}\\"}}"'),
    ("toml", '{n} = "{v}"'),
    ("ini", "{n}={v}"),
    ("dotenv", "{N}={v}"),
    ("dotenv_quoted", '{N}="{v}"'),
    ("shell_export", "export {N}='{v}'"),
    ("dockerfile_env", "ENV {N}={v}"),
    ("dockerfile_env_space", "ENV {N} {v}"),
    ("go_short", '{n} := "{v}"'),
    ("go_var", 'var {n} string = "{v}"'),
    ("go_backtick", "{n} := `{v}`"),
    ("php_array", "    '{n}' => '{v}',"),
    ("php_var", '${n} = "{v}";'),
    ("ruby_symbol", '  {n}: "{v}",'),
    ("ruby_hashrocket", '  :{n} => "{v}",'),
    ("r_arrow", '{n} <- "{v}"'),
    ("java", 'private static final String {N} = "{v}";'),
    ("csharp", 'string {n} = "{v}";'),
    ("kotlin", 'val {n}: String = "{v}"'),
    ("typescript", 'const {n}: string = "{v}";'),
    ("js_object", "  {n}: '{v}',"),
    ("xml_element", "<{n}>{v}</{n}>"),
    ("xml_attribute", '<add key="{n}" value="{v}" />'),
    ("xml_attr_inline", '<connection {n}="{v}" />'),
    ("properties", "app.datasource.{n}={v}"),
    ("makefile", "{N} ?= {v}"),
    ("hcl", '  {n} = "{v}"'),
    ("k8s_env", '- name: {N}\n  value: "{v}"'),
    ("cli_flag", "tool login --{k} {v}"),
    ("cli_flag_eq", "tool login --{k}={v}"),
    ("kubectl_literal", "kubectl create secret generic app --from-literal={n}={v}"),
    ("query_string", "https://api.example.test/v2/items?{n}={v}&page=2"),
    ("comparison", 'if {n} == "{v}":'),
    ("php_define", "define('{N}', '{v}');"),
    ("yaml_block", "{n}: |\n  {v}"),
    ("markdown", "**{N}**: `{v}`"),
]


def _upper(name: str) -> str:
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i and name[i - 1].islower():
            out.append("_")
        out.append("_" if c == "-" else c.upper())
    return "".join(out)


def assignment_entries() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for index, (syntax, template) in enumerate(SYNTAXES):
        for repeat in range(3):
            name = NAMES[(index * 3 + repeat * 7) % len(NAMES)]
            value = gen(VALUES[(index + repeat) % len(VALUES)])
            if not any(c.isdigit() for c in value):
                value = value[:-2] + str(rng.randint(10, 99))
            kebab = name.replace("_", "-").lower()
            line = (
                template.replace("{N}", _upper(name))
                .replace("{n}", name)
                .replace("{k}", kebab)
                .replace("{v}", value)
            )
            out.append(_tp(line, value, "assignment_" + syntax, "assignment", _ASSIGN_SOURCE))
    return out


_ASSIGN_SOURCE = (
    GL + "generic.go and utils/generate.go (assignment syntaxes); " + DS + "tests/plugins/keyword_test.py"
)


# The assignment syntaxes gitleaks generates its rules' test secrets in (utils/generate.go,
# GenerateSampleSecrets), with provider names as identifiers and fresh fictional values.
GITLEAKS_SYNTAXES = [
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{{\n    "{i}_token": "{s}"\n}}',
    '\\{{\n    \\"{i}_token\\": \\"{s}\\"\n\\}}',
    "<{i}Token>{s}</{i}Token>",
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    "{i}_token: |\n  {s}",
    "{i}_token: >\n  {s}",
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    '{i}Token = "{s}"',
    "{i}Token,{s},",
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"',
    '{i}_TOKEN := "{s}"',
    '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"',
    '{i}_TOKEN ?= "{s}"',
    '{i}_TOKEN += "{s}"',
    '{i}_api_token = "{s}"',
]
PROVIDERS = [
    ("adafruit", "[a-z0-9_-]{32}"),
    ("airtable", "[a-z0-9]{17}"),
    ("algolia", "[a-z0-9]{32}"),
    ("asana", "[0-9]{16}"),
    ("bitbucket", "[a-z0-9=_-]{64}"),
    ("cloudflare", "[a-z0-9_-]{40}"),
    ("codecov", "[a-z0-9]{32}"),
    ("datadog", "[a-z0-9]{40}"),
    ("discord", "[a-f0-9]{64}"),
    ("dropbox", "[a-z0-9]{15}"),
    ("fastly", "[a-z0-9=_-]{32}"),
    ("finnhub", "[a-z0-9]{20}"),
    ("gitter", "[a-z0-9_-]{40}"),
    ("heroku", "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    ("kraken", "[a-z0-9/=_+-]{80,90}"),
    ("launchdarkly", "[a-z0-9=_-]{40}"),
    ("mattermost", "[a-z0-9]{26}"),
    ("netlify", "[a-z0-9=_-]{40,46}"),
    ("sentry", "[a-f0-9]{64}"),
    ("travis", "[a-z0-9]{22}"),
    ("twitch", "[a-z0-9]{30}"),
    ("twitter", "[a-z0-9]{45}"),
    ("typeform", "tfp_[a-z0-9._=-]{59}"),
    ("yandex", "AQVN[A-Za-z0-9_-]{35,38}"),
]


def gitleaks_syntax_entries() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for index, template in enumerate(GITLEAKS_SYNTAXES):
        provider, spec = PROVIDERS[index % len(PROVIDERS)]
        value = gen(spec)
        while not any(c.isdigit() for c in value):
            value = gen(spec)
        line = template.replace("{i}", provider).replace("{s}", value).replace("{{", "{").replace("}}", "}")
        line = line.replace("\\n", "\n")
        out.append(
            _tp(
                line.replace("\n", "\n"),
                value,
                f"semi_generic_{provider}",
                "assignment",
                GL + "../utils/generate.go (GenerateSampleSecrets) and " + provider + ".go",
            )
        )
    return out


def detect_secrets_keyword_entries() -> list[dict[str, object]]:
    """detect-secrets' keyword plugin test shapes (tests/plugins/keyword_test.py), fresh values."""
    shapes = [
        'apikey := "{s}"',
        "apikey:='{s}'",
        "apikey := {s}",
        "'theapikey': '{s}'",
        '"theapikey": "{s}"',
        "apikey: {s}",
        "theapikey:{s}",
        'apikey = @"{s}"',
        'apikey[]= "{s}"',
        'some_dict["secret"] = "{s}"',
        "the_password= '{s}'",
        "some_dict['secret'] = {s}",
        "my_password ={s}",
        'private_key "{s}";',
        "private_key '{s}';",
        'if (db_pass == "{s}") {{',
        'char password[25] = "{s}";',
        'std::string secret("{s}");',
        "contrasena = '{s}'",
    ]
    out: list[dict[str, object]] = []
    for shape in shapes:
        value = gen("[A-Za-z0-9]{6}[!#%&*+=@^~-][A-Za-z0-9]{8,14}")
        line = shape.replace("{s}", value).replace("{{", "{")
        out.append(
            _tp(
                line,
                value,
                "keyword_" + re.sub(r"\W+", "_", shape.split("{s}")[0]).strip("_").lower(),
                "assignment",
                DS + "tests/plugins/keyword_test.py",
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# Look-alikes: must come out unchanged.
def lookalikes() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []

    def add(type_: str, source: str, *lines: str) -> None:
        out.extend({"line": line, "type": type_, "source": source} for line in lines)

    issue = "issue 12 (look-alikes rewritten by the old rules)"
    add(
        "reference_or_call",
        issue,
        "token = peek_token(parser)",
        'password = os.environ["DB_PASSWORD"]',
        'api_key: "YOUR_API_KEY"',
        "x-api-key: {{apiKey}}",
        'kubectl create secret generic db --from-literal=password="$APP_PASSWORD"',
        "token = self.lexer.next_token()",
        "password = getpass.getpass()",
        "token := lexer.Next()",
        "let token = tokens[i];",
        'api_key = api_key or os.getenv("OPENAI_API_KEY")',
        "const apiKey = process.env.API_KEY;",
        "client_secret = settings.CLIENT_SECRET",
        "private_key = load_pem_private_key(data, password=None)",
        'auth_token = request.headers.get("Authorization")',
        "secret = base64.b64decode(encoded_secret)",
        "<password>${db.password}</password>",
        "password: ${DB_PASSWORD}",
        'token = "{{ secrets.GITHUB_TOKEN }}"',
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "secret: !Ref DatabaseSecret",
        "password: ((concourse_db_password))",
        "set PASSWORD=%DB_PASSWORD%",
        "$password = $input;",
        "apiKey: this.apiKey,",
        "apiKey: fs.readFileSync('key.txt', 'utf8'),",
        'my_password = request.json_body["password"]',
        "login(username=username, password=password)",
        "password = hash_password(raw_password, salt)",
        "token = jwt.encode(payload, key, algorithm='HS256')",
        "access_token = response.json()['access_token']",
        "secretKeyRef:",
        "  valueFrom:\n    secretKeyRef:\n      name: db-credentials\n      key: password",
        "password = cfg.Password",
        "Token token = tokenizer.nextToken();",
        "CancellationToken token = default;",
        "var token = await GetTokenAsync(cancellationToken);",
        "secret_value = client.get_secret_value(SecretId=secret_arn)",
        "password: !vault |",
        "token: <%= ENV['API_TOKEN'] %>",
        "auth = HTTPBasicAuth(user, password)",
        "password = None",
        "token = null;",
        "auth: true",
        'credentials: "include"',
        "credentials: 'same-origin'",
        'auth: "basic"',
        "secret = ''",
        "password: ''",
        'api_key = ""',
        "token: '***'",
        "password: REDACTED",
        'password = "changeme"',
        'password = "<your-password>"',
        'api_key = "xxxxxxxxxxxxxxxxxxxxxxxx"',
        'secret_name = "prod-db-credentials"',
        'SECRET_ENV_VAR = "DB_PASSWORD"',
        'password_field = "user_password"',
        "Authorization: Bearer ${TOKEN}",
        'headers = {"Authorization": f"Bearer {token}"}',
        'headers["Authorization"] = "Bearer " + access_token',
        'Authorization: Basic realm="Restricted"',
        "postgres://user:{{ .Values.db.password }}@localhost:5432/app",
        "https://user:${DB_PASS}@db.example.test/app",
        "mysql://root:<password>@127.0.0.1/test",
        "redis://:{{ .Values.redis.password }}@redis:6379",
        'theapikey := "somefakekey"',
        'my_password = "fakesecret"',
        "password: dummy-password-for-tests",
        'password = "example-password-123"',
        'token = "sample_token_value_123"',
        "api_key: <INSERT_API_KEY_HERE>",
        'TOKEN = "TODO"',
        "token_type = 'Bearer'",
        "grant_type=client_credentials&scope=read",
    )
    add(
        "name_not_secret",
        issue,
        "token_count = 12345678901",
        "max_tokens = 4096",
        'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")',
        "password_hash = bcrypt.hashpw(password, salt)",
        "if token.type == TokenType.IDENT:",
        'secretary: "Jane Doe"',
        "apikeys = load_keys(path)",
        'next_page_token = "CAUQAA"',
        'page_token = "AHWqTUnbW3Jx5xkQ"',
        'csrf_token = "{{ csrf_token() }}"',
        "password_min_length = 12",
        'token_url = "https://oauth2.example.test/token"',
        'secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf"',
        'public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB3f7dPq9XlQ2yXhQmRk4s8vYt2NnEo1Tq3xZ8w1c2d fictional@host"',
        'keyboard_layout = "en-US-international"',
        "bypass = True",
        'monkey = "a1b2c3d4e5f6"',
        "primary_key = 'user_id'",
        'cache_key = f"user:{user_id}:profile"',
        'idempotency_key = "order-2026-11-30-000123"',
        "author = 'Jane Q. Public'",
        'password_reset_url = "https://app.example.test/reset"',
        'secret_path = "/run/secrets/db_password"',
        "private_key_file = ~/.ssh/id_ed25519",
        'token_file: "/var/run/secrets/kubernetes.io/serviceaccount/token"',
        'tls_key_path = "certs/server.key"',
        "passwordless: true",
        "token_expiry_seconds = 3600",
    )
    for _ in range(12):
        sha = hexs(40)
        add(
            "git_sha",
            "https://git-scm.com/docs/gitglossary#def_object_name",
            rng.choice(
                (
                    f"commit {sha}",
                    f'  "sha": "{sha}",',
                    f"Fixes a regression introduced in {sha[:12]} (see {sha})",
                    f"    rev: {sha}",
                    f"git checkout {sha}",
                    f'head_sha = "{sha}"',
                )
            ),
        )
    for _ in range(12):
        uid = "-".join(hexs(n) for n in (8, 4, 4, 4, 12))
        add(
            "uuid",
            "https://datatracker.ietf.org/doc/html/rfc9562",
            rng.choice(
                (
                    f'  "id": "{uid}",',
                    f"request_id = '{uid}'",
                    f"tenantId: {uid}",
                    f"<ProjectGuid>{{{uid.upper()}}}</ProjectGuid>",
                    f"trace_id={uid}",
                    f'subscription_id = "{uid}"',
                )
            ),
        )
    for _ in range(10):
        digest = base64.b64encode(rng.randbytes(64)).decode()
        add(
            "integrity_hash",
            "https://docs.npmjs.com/cli/v10/configuring-npm/package-lock-json#packages",
            rng.choice(
                (
                    f'      "integrity": "sha512-{digest}",',
                    f"  integrity sha512-{digest}",
                    f'<script src="app.js" integrity="sha384-{digest[:64]}" crossorigin="anonymous"></script>',
                    f"golang.org/x/crypto v0.31.0 h1:{digest[:43]}=",
                    f"  resolution: {{integrity: sha512-{digest}}}",
                )
            ),
        )
    for _ in range(8):
        blob = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(90)).decode()
        add(
            "base64_image",
            "https://datatracker.ietf.org/doc/html/rfc2397",
            rng.choice(
                (
                    f'<img src="data:image/png;base64,{blob}" alt="logo">',
                    f"  background-image: url(data:image/png;base64,{blob});",
                    f'const ICON = "data:image/png;base64,{blob}";',
                )
            ),
        )
    for _ in range(10):
        colour = "#" + hexs(rng.choice((3, 6, 8)))
        add(
            "css_colour",
            "https://www.w3.org/TR/css-color-4/#hex-notation",
            rng.choice(
                (
                    f"  color: {colour};",
                    f"  --brand-primary: {colour};",
                    f'fill="{colour}"',
                    f"theme.accent = '{colour}'",
                )
            ),
        )
    words = [
        "request",
        "handler",
        "factory",
        "provider",
        "token",
        "password",
        "secret",
        "validator",
        "configuration",
        "manager",
    ]
    for _ in range(10):
        ident = "".join(w.capitalize() for w in rng.sample(words, 5))
        add(
            "long_identifier",
            issue,
            rng.choice(
                (
                    f"const {ident[0].lower()}{ident[1:]} = create{ident}();",
                    f"class {ident}(Base):",
                    f"import {{ {ident} }} from './{ident.lower()}';",
                    f"SECRET_TOKEN_PASSWORD_{ident.upper()}_ENABLED = True",
                )
            ),
        )
    for _ in range(8):
        hexdigest = hexs(64)
        add(
            "checksum",
            "https://docs.docker.com/reference/cli/docker/image/pull/#pull-an-image-by-digest-immutable-identifier",
            rng.choice(
                (
                    f"FROM python:3.12-slim@sha256:{hexdigest}",
                    f"checksum: {hexdigest}",
                    f'sha256 "{hexdigest}"',
                    f"  digest: sha256:{hexdigest}",
                )
            ),
        )
    add(
        "pem_mention",
        pem_source := "https://datatracker.ietf.org/doc/html/rfc7468",
        'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):',
        'PEM_HEADER = "-----BEGIN PRIVATE KEY-----"\nPEM_FOOTER = "-----END PRIVATE KEY-----"',
        "-----BEGIN CERTIFICATE-----\n" + "\n".join(_pem_body(2)) + "\n-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\n" + "\n".join(_pem_body(2)) + "\n-----END PUBLIC KEY-----",
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ" + b62(60) + " fictional@laptop",
        "# Paste the -----BEGIN OPENSSH PRIVATE KEY----- block into the CI variable SSH_KEY.",
    )
    del pem_source
    add(
        "documented_example",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "stripe.api_key = 'sk_test_xxxxxxxxxxxxxxxxxxxxxxxx'",
        "OPENAI_API_KEY=sk-your-api-key-here",
        "SLACK_WEBHOOK=https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX",
    )
    add(
        "scanner_false_positive",
        GL + "generic.go (fps)",
        '"accessor":"rA1wk0Y45YCufyfq",',
        "report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d",
        'accessibilityYesOptionId = "0736f5ef-7e88-499a-80cc-90c85d2a5180"',
        'this.ultraPictureBox1.Name = "ultraPictureBox1";',
        "COMMUNICATION_API_VERSION=rc0.13.0_20230412_0712-SNAPSHOT",
        "MantleAPI_version=9a038989604e8da62ecddbe2094b16ce1b778be1",
        "[DEBUG]\t\torg.slf4j.slf4j-api:jar:1.7.8.:compile (version managed from default)",
        "apiUrl=apigee.corpint.com",
        'X-API-Name": "NRG0-Hermes-INTERNAL-API",',
        'author = "james.fake@ymail.com",',
        "X-MS-Exchange-Organization-AuthSource: sm02915.int.contoso.com",
        "withCredentials([usernamePassword(credentialsId: '29f63271-dc2f-4734-8221-5b31b5169bac', "
        "usernameVariable: 'USERNAME', passwordVariable: 'PASSWORD')]) {",
        "credentialsId: 'ff083f76-7804-4ef1-80e4-fe975bb9141b'",
        '  "credentialId": "B9mTcFSck2LzJO2S3ols63",',
        'environment {\n\tCREDENTIALS_ID = "K8S_CRED"\n}',
        "dev.credentials.url=dev-lb1.api.f4ke.com:5215",
        'keyword: "Befaehigung_P2"',
        'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
        "primaryKey=" + gen("[a-zA-Z0-9_.=-]{30}"),
        "foreignKey=" + gen("[a-zA-Z0-9_.=-]{30}"),
        "key_down_event=" + gen("[a-zA-Z0-9_.=-]{30}"),
        "issuerKeyHash=" + gen("[a-zA-Z0-9_.=-]{30}"),
        '<entry key="jetbrains.mps.v8_elimination" value="executed" />',
        "IceSSL.KeyFile=s_rsa1024_priv.pem",
        '"bucket_key": "SalesResults-1.2"',
        "schemaKey = 'DOC_Vector_5_32'",
        "app.keystore.file=env/cert.p12",
        "-DKEYTAB_FILE=/tmp/app.keytab",
        "\tdoc.Security.KeySize = PdfEncryptionKeySize.Key128Bit;",
        ',apiKey:"6fe4476ee5a1832882e326b506d14126",',
        'const validKeyChars = "0123456789abcdefghijklmnopqrstuvwxyz_-."',
        "key_length = XSalsa20.key_length",
        "            keyPressed = kVK_Return.u16",
        "PuttyPassword=0",
        'LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"',
        "  <UserSecretsId>79a3edd0-2092-40a2-a04d-dcb46d5ca9ed</UserSecretsId>",
        "secret_length = X25519.secret_length",
        "#    JFROG_SECRET = $(cat /run/secrets/jfrog_secret) && \\",
        "    access_token_url='https://github.com/login/oauth/access_token',",
        'publicToken = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
        'notes            = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"',
        "csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==",
        'clientId = "73082700-1f09-405b-80d0-3131bfd6272d"',
        "GITHUB_API_KEY=\nDYNATRACE_API_KEY=",
        "snowflake.password=\njdbc.snowflake.url=",
        'SRCREV_moby = "43fc912ef59a83054ea7f6706df4d53a7dea4d80"',
        'LIC_FILES_CHKSUM = "file://${WORKDIR}/license.html;md5=5c94767cedb5d6987c902ac850ded2c6"',
    )
    add(
        "scanner_false_positive",
        DS + "tests/plugins/keyword_test.py (negatives)",
        'theapikey := ""',
        'theapikey: ""',
        "password: ${link}",
        'my_password = ""',
        "my_password = foo(hey)you",
        "my_password = True",
        'private_key "";',
        "private_key '\"no spaces';",
    )
    add(
        "ordinary_code",
        issue,
        "for (let i = 0; i < tokens.length; i++) {",
        "def authenticate(self, token: str) -> bool:",
        "    return self._secret is not None",
        "const [password, setPassword] = useState('');",
        '<input type="password" name="password" autocomplete="current-password">',
        "SELECT id, password_hash FROM users WHERE email = $1",
        "// TODO: rotate the API key before launch",
        "raise ValueError('password must be at least 12 characters')",
        "assert token.kind == 'NUMBER', token",
        "version: 2.14.3-rc.1+build.20261130",
        "  timeout: 30s",
        "https://api.example.test/v1/users?page=2&per_page=100",
        "Co-authored-by: Claude <noreply@anthropic.com>",
        "[![Build](https://github.com/acme/widget/actions/workflows/ci.yml/badge.svg)](https://github.com/acme/widget)",
        "image: ghcr.io/acme/api:1f3c2b9",
        "  - name: Checkout\n    uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11",
        "key = (user_id, tenant_id)",
        "secret_santa_assignments = shuffle(participants)",
        "passport_number_pattern = r'^[A-Z0-9]{9}$'",
        "x = base64.b64encode(b'hello world, this is not a secret')",
    )
    return out


# ---------------------------------------------------------------------------------------------
# Kinds issue 25 lists that the entries above lack (formats neither our catalogue nor, for most,
# gitleaks names), and a token of no known format next to a secret-ish word on the same line or
# the one before (the high-entropy rule). Shapes from the providers' documentation or gitleaks'
# rules; every value drawn here at random (generated after the look-alikes, so the entries above
# keep their values).
_MS = "https://learn.microsoft.com/en-us/azure/devops/organizations/accounts/use-personal-access-tokens-to-authenticate"
_VAULT = "https://developer.hashicorp.com/vault/docs/concepts/seal"
_NR = "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/"
_SF = "https://help.salesforce.com/s/articleView?id=sf.remoteaccess_oauth_flows.htm"
_TWITCH = "https://help.twitch.tv/s/article/twitch-stream-key-faq"
_DT = "https://docs.dependencytrack.org/integrations/rest-api/"
_JINA = "https://jina.ai/api-dashboard/"
_DD = "https://docs.datadoghq.com/account_management/api-app-keys/"
_TWILIO = "https://www.twilio.com/docs/iam/credentials/api"
_TEAMS = "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook"
_TG = "https://core.telegram.org/bots/api#authorizing-your-bot"
_CF = "https://developers.cloudflare.com/fundamentals/api/get-started/token-formats/ (issue 25, third round)"
_CLI = "issue 25 (held-out misses by cause: command-line and prose credentials; syntax written here)"
_NETRC = "https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html"
_GUID = "[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"
ISSUE25_FORMATS: list[tuple[str, str, str, str, str]] = [
    # (type, expected kind, line template with {v}, value spec, source)
    ("azure_devops_pat", "assignment", 'azure_devops_token: "{v}"', "[a-z2-7]{52}", _MS),
    (
        "azure_devops_pat",
        "url_password",
        "git remote add ado https://ci:{v}@dev.azure.com/acme/app/_git/app",
        "[a-z2-7]{52}",
        _MS,
    ),
    ("vault_unseal_key", "high_entropy", "Unseal Key 1: {v}", "[A-Za-z0-9+/]{43}=", _VAULT),
    (
        "vault_unseal_key",
        "high_entropy",
        "# vault operator unseal (key 2 of 5)\n{v}",
        "[A-Za-z0-9+/]{43}=",
        _VAULT,
    ),
    ("newrelic_query_key", "high_entropy", "newrelic.query_key: NRIQ-{v}", "[A-Za-z0-9_-]{32}", _NR),
    (
        "newrelic_query_key",
        "gl_curl_auth_header",
        "curl -H 'X-Query-Key: NRIQ-{v}' https://insights-api.example.test",
        "[A-Za-z0-9_-]{32}",
        _NR,
    ),
    (
        "salesforce_access_token",
        "assignment",
        "SF_ACCESS_TOKEN={v}",
        "00D[A-Za-z0-9]{12}![A-Za-z0-9._]{96}",
        _SF,
    ),
    (
        "salesforce_access_token",
        "auth_header",
        "Authorization: Bearer {v}",
        "00D[A-Za-z0-9]{12}![A-Za-z0-9._]{96}",
        _SF,
    ),
    ("sonarqube_user_token", "gl_sonar_api_token", "sonar.token={v}", "squ_[a-f0-9]{40}", GL + "sonar.go"),
    (
        "sonarqube_project_token",
        "gl_sonar_api_token",
        'SONAR_TOKEN: "{v}"',
        "sqp_[a-f0-9]{40}",
        GL + "sonar.go",
    ),
    ("twitch_stream_key", "assignment", 'stream_key = "{v}"', "live_[0-9]{9}_[A-Za-z0-9]{30}", _TWITCH),
    ("twitch_stream_key", "assignment", "obs --stream-key {v}", "live_[0-9]{9}_[A-Za-z0-9]{30}", _TWITCH),
    (
        "adafruit_io_key",
        "gl_adafruit_api_key",
        'ADAFRUIT_IO_KEY = "{v}"',
        "aio_[A-Za-z0-9]{28}",
        GL + "adafruit.go",
    ),
    ("dependency_track_key", "dependency_track_key", "DT_API_KEY={v}", "odt_[A-Za-z0-9]{32}", _DT),
    (
        "dependency_track_key",
        "dependency_track_key",
        "curl -H 'X-Api-Key: {v}' https://dtrack.example.test/api/v1/project",
        "odt_[A-Za-z0-9]{32}",
        _DT,
    ),
    ("jina_api_key", "assignment", 'JINA_API_KEY="{v}"', "jina_[a-f0-9]{32}[A-Za-z0-9_-]{28}", _JINA),
    (
        "jina_api_key",
        "auth_header",
        "-H 'Authorization: Bearer {v}'",
        "jina_[a-f0-9]{32}[A-Za-z0-9_-]{28}",
        _JINA,
    ),
    ("datadog_app_key", "assignment", "DD_APP_KEY={v}", "[a-f0-9]{38}[0-9][a-f]", _DD),
    ("datadog_app_key", "assignment", 'datadog:\n  application_key: "{v}"', "[a-f0-9]{38}[0-9][a-f]", _DD),
    ("twilio_auth_token", "assignment", "TWILIO_AUTH_TOKEN={v}", "[a-f0-9]{30}[0-9][a-f]", _TWILIO),
    # A token of no known format next to a secret-ish word: same line, or the line before.
    (
        "near_keyword_call",
        "assignment",
        "    api.setCredentials(`{v}`)",
        "[A-Za-z0-9]{40}",
        GL + "generic.go",
    ),
    (
        "near_keyword_header",
        "gl_curl_auth_header",
        "curl -H 'X-Auth-Token: {v}' https://api.example.test",
        "[A-Za-z0-9_-]{36}",
        GL + "generic.go",
    ),
    (
        "near_keyword_comment_above",
        "high_entropy",
        "# staging API token (rotate monthly)\n{v}",
        "[A-Za-z0-9]{32}",
        GL + "generic.go",
    ),
    (
        "near_keyword_comment_above",
        "high_entropy",
        '// service credentials, see vault\nconst c = ["{v}"];',
        "[A-Za-z0-9+/]{40}",
        GL + "generic.go",
    ),
    ("near_keyword_hex", "assignment", 'client.auth("{v}", region)', "[a-f0-9]{48}", GL + "generic.go"),
    (
        "near_keyword_base32",
        "high_entropy",
        "totp secret for the bot: {v}",
        "[A-Z2-7]{32}",
        GL + "generic.go",
    ),
    (
        "near_keyword_after",
        "high_entropy",
        'client.connect(host, 443, "{v}")  # the token',
        "[A-Za-z0-9_]{40}",
        GL + "generic.go",
    ),
    (
        "near_keyword_webhook_path",
        "high_entropy",
        "curl -X POST https://hooks.example.test/services/{v} # webhook token",
        "[A-Za-z0-9]{44}",
        GL + "generic.go",
    ),
    # Issue 25, second round: formats the catalogue lacked and generic syntaxes (values made up).
    (
        "dependency_track_key",
        "dependency_track_key",
        "dependencyTrack:\n  apiKey: {v}",
        "odt_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}",
        _DT,
    ),
    (
        "teams_webhook_legacy",
        "teams_webhook",
        "TEAMS_HOOK=https://outlook.office.com/webhook/{v}",
        _GUID + "@" + _GUID + "/IncomingWebhook/[a-f0-9]{32}/" + _GUID,
        _TEAMS,
    ),
    (
        "teams_webhook_legacy",
        "teams_webhook",
        'notify(url="https://outlook.office.com/webhook/{v}")',
        _GUID + "@" + _GUID + "/IncomingWebhook/[a-f0-9]{32}/" + _GUID,
        _TEAMS,
    ),
    ("newrelic_admin_key", "newrelic_key", 'NEW_RELIC_ADMIN_KEY="{v}"', "NRAA-[a-f0-9]{27}", _NR),
    ("newrelic_admin_key", "newrelic_key", "newrelic.admin: {v}", "NRAA-[A-Za-z0-9]{27}", _NR),
    ("newrelic_license_key_eu", "newrelic_key", "license_key: {v}", "eu01xx[a-f0-9]{30}NRAL", _NR),
    ("newrelic_license_key_eu", "newrelic_key", "NEW_RELIC_LICENSE_KEY={v}", "eu01xx[a-f0-9]{30}NRAL", _NR),
    (
        "telegram_bot_token",
        "telegram_token",
        "updater = Updater(token='{v}')",
        "[0-9]{10}:AA[A-Za-z0-9_-]{31}",
        _TG,
    ),
    ("telegram_bot_token", "telegram_token", "TELEGRAM_BOT_TOKEN={v}", "[0-9]{9}:AA[A-Za-z0-9_-]{32}", _TG),
    ("cli_user_password", "assignment", "psexec \\\\build01 -u svc -p {v} cmd", "[A-Za-z0-9#%!]{10}", _CLI),
    ("cli_user_password", "assignment", "mysqldump -u backup -p{v} shop > shop.sql", "[A-Za-z0-9]{12}", _CLI),
    ("cli_password_flag", "assignment", "New-Session -User ops -Password {v}", "[A-Za-z0-9]{14}", _CLI),
    ("cli_password_flag", "assignment", "deploy --password={v} --env prod", "[A-Za-z0-9]{12}", _CLI),
    ("cli_user_password", "assignment", "tool.exe /u:deploy /p:{v}", "[A-Za-z0-9]{12}", _CLI),
    (
        "netrc_lines",
        "basic_auth",
        "machine git.example.test\n  login ci\n  password {v}",
        "[A-Za-z0-9]{16}",
        _NETRC,
    ),
    (
        "netrc_lines",
        "basic_auth",
        "machine ftp.example.test\nlogin ops\npassword {v}",
        "[A-Za-z0-9]{12}",
        _NETRC,
    ),
    (
        "prose_password",
        "assignment",
        "The password is '{v}', rotate it after the demo.",
        "[A-Za-z0-9]{10}",
        _CLI,
    ),
    ("quoted_passphrase", "assignment", "password = '{v}'", "pale [a-z]{3}[0-9] river", _CLI),
    # Issue 25, third round: Cloudflare's scannable credentials (values made up).
    (
        "cloudflare_user_token",
        "cloudflare_key",
        "CLOUDFLARE_API_TOKEN={v}",
        "cfut_[A-Za-z0-9]{40}[0-9a-f]{8}",
        _CF,
    ),
    (
        "cloudflare_account_token",
        "cloudflare_key",
        'cf = Cloudflare(api_token="{v}")',
        "cfat_[A-Za-z0-9]{40}[0-9a-f]{8}",
        _CF,
    ),
    (
        "cloudflare_global_key",
        "cloudflare_key",
        '"globalApiKey": "{v}",',
        "cfk_[A-Za-z0-9]{40}[0-9a-f]{8}",
        _CF,
    ),
]

ISSUE25_LOOKALIKES = [
    # Long runs next to a secret-ish word that are no secret: digests, ids, payloads, names, paths.
    "token rotation landed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    'api_key_id = "3f2b8c1e-9d4a-4e7b-8a6f-1c2d3e4f5a6b"',
    '"integrity": "sha512-Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznBq4bI5sKqzLq0iWq0hGk1xYv3Pz8u9T1cZ2wDnA==",',
    "golang.org/x/oauth2 v0.21.0 h1:tsimM75w1tF/uws5rbeHzIWxEqElMehnc+iW793zsZs=",
    '<img alt="auth" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==">',
    "secret = workInProgress2.memoizedState || fallbackState2",
    'token_path = "src/auth/providers/oauth2_token_store_v2.py"',
    "    const credentials = getCredentialsFromEnvironmentV2(config);",
    "# see https://docs.example.test/en/authentication/creating-a-personal-access-token-v2",
    'key: "user:42:profile:settings:notifications:email"',
    "password reset links now expire after 24 hours (was 48)",
    "sha256 of the token file: 8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92",
    # second round: selectors, stand-ins, notes, and flags that are no password
    'this.addPassword = "#add-password"',
    "const secretInput = document.querySelector('.secret-field-input');",
    "Endpoint=sb://bus.example.test/;SharedAccessKeyName=Root;SharedAccessKey=[Shared Access key goes here]",
    'password = "not set"',
    "secret: 'see below'",
    "mkdir -p build/output && ssh -u deploy -p 2222 host",
    "docker run -u 1000 -p 8080:80 registry.example.test/app",
    "Set-Credential -User ops -Password $securePassword",
    "msbuild /u:ci /p:Configuration=Release",
    "password policy:\n  password requirements are strict",
    "the password is 'required' on first login",
    "see odt_configuration_and_settings_for_the_server in the docs",
    # third round: stand-ins typed in order or of one repeated character, documentation's
    # instructions in place of a password
    'ORDER_REF = "ord_aBcDeFgHiJkLmNoPqRsT0123456789abcdef"',
    "STRIPE_SECRET_KEY=sk_test_000000000000000000000000",
    "DATABASE_URL=postgres://app:REPLACE_WITH_DB_PASSWORD@db.example.test/app",
    # fifth round: a short unit repeated, camel-case words after a class name, Stripe's
    # publishable keys (public by design: its documentation puts them in client code)
    'api_key = "abcd1234abcd1234abcd1234ABCD1234--"',
    'secret: "deadbeefdeadbeefdeadbeefdeadbeef"',
    "label = MyWidget.atMost32CharactersLabel",
    'const stripe = Stripe("pk_live_Qm3Vx8Tz1Lr6Nc9Hb4Kp2Wd7");',
    "STRIPE_PUBLISHABLE_KEY=pk_test_Hs5Jq1Xn8Vb3Mt6Lc9Rz2Fw4",
]


# The fourth round's entries, written by hand (values made up, not drawn): whispers' misses by
# cause, each in a syntax of ours.
ISSUE25_FOURTH_ROUND: list[dict[str, object]] = [
    {
        "line": "ENV RELEASE_TOKEN=QkRvTmFpZWxXbGVy_build",
        "secret": "QkRvTmFpZWxXbGVy_build",
        "type": "random_case_letters",
        "kind": "assignment",
        "source": "issue 25 (whispers' misses by cause, fourth round: random-case letters taken for a name; value made up here)",
        "fictional": True,
    },
    {
        "line": "  <uploadToken>HrTbWmYcQvLpXs_prod</uploadToken>",
        "secret": "HrTbWmYcQvLpXs_prod",
        "type": "random_case_letters",
        "kind": "assignment",
        "source": "issue 25 (whispers' misses by cause, fourth round: random-case letters taken for a name; value made up here)",
        "fictional": True,
    },
    {
        "line": "<entry>\n  <key>smtp_password</key>\n  <value>Rk8vTq2mXzW</value>\n</entry>",
        "secret": "Rk8vTq2mXzW",
        "type": "xml_key_value_elements",
        "kind": "assignment",
        "source": "issue 25 (whispers' misses by cause, fourth round: a value element after a secret-named key element; value made up here)",
        "fictional": True,
    },
    {
        "line": 'SMTP_PASSWORD = os.getenv("SMTP_PASSWORD", "mk4Tr9vQx")',
        "secret": "mk4Tr9vQx",
        "type": "env_lookup_default",
        "kind": "assignment",
        "source": "issue 25 (whispers' misses by cause, fourth round: a default passed to an environment look-up; value made up here)",
        "fictional": True,
    },
    {
        "line": "define('DB_PASSWORD', 'Gq7!vR2#mXp9');",
        "secret": "Gq7!vR2#mXp9",
        "type": "php_define",
        "kind": "assignment",
        "source": "issue 25 (whispers' misses by cause, fourth round: a definition through a call; value made up here)",
        "fictional": True,
    },
    {
        "line": '  signing_secret: "Hx4mQ9rTzFAKEv2LpW7nB3cJ8kRs"',
        "secret": "Hx4mQ9rTzFAKEv2LpW7nB3cJ8kRs",
        "type": "random_with_mark_word",
        "kind": "assignment",
        "source": "issue 25 (whispers' misses by cause, fourth round: a random value with `fake` inside taken for a stand-in; value made up here)",
        "fictional": True,
    },
    {
        "line": "curl -sS --proxy-user build:Tq6vNx2mRk https://artifacts.example.test/pkg.tgz",
        "secret": "Tq6vNx2mRk",
        "type": "curl_proxy_user",
        "kind": "basic_auth",
        "source": "issue 25 (whispers' misses by cause, fourth round: curl's --proxy-user credentials; value made up here)",
        "fictional": True,
    },
]

# fifth round: Aiven's service passwords (the shape detect-secrets' plugin documents), and `iam` /
# `cloud` as words before `key`; drawn after the entries above, so their values stay as they were.
_NP_CRATES = "Nosey Parker (Apache-2.0) crates.io.yml: `cio` and 32 letters and digits"
FIFTH_ROUND_FORMATS: list[tuple[str, str, str, str, str]] = [
    (
        "aiven_service_password",
        "aiven_token",
        'AIVEN_PASSWORD="{v}"',
        "AVNS_[A-Za-z0-9_]{19}",
        DS + "aiven_token.py",
    ),
    (
        "aiven_service_password",
        "aiven_token",
        "export PGPASSWORD={v}",
        "AVNS_[A-Za-z0-9_]{19}",
        DS + "aiven_token.py",
    ),
    (
        "aiven_service_password",
        "aiven_token",
        "  service_password: {v}",
        "AVNS_[A-Za-z0-9_]{19}",
        DS + "aiven_token.py",
    ),
    ("generic_assignment", "assignment", 'iam_key = "{v}"', "[A-Za-z0-9_-]{44}", "issue 25, fifth round"),
    ("generic_assignment", "assignment", "CLOUD_KEY: {v}", "[A-Za-z0-9_-]{44}", "issue 25, fifth round"),
    ("provider_key_name", "assignment", '"slackKey": "{v}",', "[A-Za-z0-9]{32}", "issue 25, fifth round"),
    ("provider_key_name", "assignment", "SENDGRID_KEY={v}", "[A-Za-z0-9_-]{40}", "issue 25, fifth round"),
    (
        "provider_key_name",
        "assignment",
        "  <mapboxKey>{v}</mapboxKey>",
        "[A-Za-z0-9]{36}",
        "issue 25, fifth round",
    ),
    ("cratesio_token", "cratesio_token", "CARGO_REGISTRY_TOKEN={v}", "cio[A-Za-z0-9]{32}", _NP_CRATES),
    ("cratesio_token", "cratesio_token", 'token = "{v}"', "cio[A-Za-z0-9]{32}", _NP_CRATES),
]


def issue25_entries(
    formats: list[tuple[str, str, str, str, str]] = ISSUE25_FORMATS,
) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for type_, kind, template, spec, source in formats:
        value = gen(spec)
        while not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            value = gen(spec)
        out.append(_tp(template.replace("{v}", value), value, type_, kind, source))
    return out


def issue25_lookalikes() -> list[dict[str, str]]:
    source = "issue 25 (look-alikes next to a secret-ish word: digests, ids, image data, names, paths)"
    return [{"line": line, "type": "near_keyword_lookalike", "source": source} for line in ISSUE25_LOOKALIKES]


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


_SIXTH = "issue 25, sixth round (ripsecrets' and security-utilities' misses by cause; values made up here)"
_JOSE = "https://datatracker.ietf.org/doc/html/rfc7516#section-3.1"
_MAVEN = "https://maven.apache.org/guides/mini/guide-encryption.html"


def sixth_round_entries() -> list[dict[str, object]]:
    """The kinds of the sixth round's fixes, drawn after every entry above.

    JOSE tokens of any header spacing and JWE's five parts, Maven's encrypted passwords, a
    credential after a named `Authorization` scheme whatever its shape (spaces URL-encoded too), a
    URL password with RFC 3986's sub-delimiters.
    """
    jwe_head = _b64url(b'{"alg":"RSA-OAEP-256","enc":"A256GCM"}')
    jwe = ".".join([jwe_head, *(_b64url(rng.randbytes(n)) for n in (256, 12, 40, 16))])
    spaced = _b64url(b'{ "typ" : "JWT", "alg" : "HS256" }')
    claims = _b64url(json.dumps({"sub": "svc-" + hexs(6), "iat": 1760000000}).encode())
    spaced_jwt = f"{spaced}.{claims}.{_b64url(rng.randbytes(32))}"
    pretty = _b64url(b'{\n  "alg": "ES256",\n  "kid": "k-' + hexs(4).encode() + b'"\n}')
    pretty_jwt = f"{pretty}.{claims}.{_b64url(rng.randbytes(64))}"
    maven = "{" + base64.b64encode(rng.randbytes(33)).decode() + "}"
    master = "{" + base64.b64encode(rng.randbytes(48)).decode() + "}"
    bearer_word = "releasebot-staging"
    encoded_word = "ciservicecredential" + str(rng.randint(10, 99))
    url_pw = "rT9" + "';!*(),$" + hexs(4)
    formats = [
        (jwe, "jwe_compact", "jwt", _JOSE),
        (spaced_jwt, "jwt_spaced_header", "jwt", _JOSE),
        (pretty_jwt, "jwt_pretty_header", "jwt", _JOSE),
        (maven, "maven_encrypted_password", "maven_password", _MAVEN),
        (master, "maven_encrypted_password", "maven_password", _MAVEN),
    ]
    # The formats in the contexts every catalogue format has (`token_entries`), so that the
    # leave-one-provider-out figure weighs them as it weighs the others.
    rows = []
    for index, (value, type_, kind, source) in enumerate(formats):
        name, upper = _names(kind)
        context = TOKEN_CONTEXTS[index % len(TOKEN_CONTEXTS)]
        rows.append(
            (
                context.replace("{NAME}", upper).replace("{name}", name).replace("{v}", value),
                value,
                type_,
                kind,
                source,
            )
        )
    rows += [
        (f"Authorization: Bearer {bearer_word}", bearer_word, "auth_header_any_shape", "auth_header", _SIXTH),
        (
            f"GET /hook?h=authorization:%20bearer%20{encoded_word}",
            encoded_word,
            "auth_header_encoded",
            "auth_header",
            _SIXTH,
        ),
        (
            f"DATABASE_URL=postgres://app:{url_pw}@db.internal.test/app",
            url_pw,
            "url_password_subdelims",
            "url_password",
            _SIXTH,
        ),
    ]
    return [_tp(line, secret, type_, kind, source) for line, secret, type_, kind, source in rows]


SIXTH_ROUND_LOOKALIKES = [
    # What the sixth round's rules must leave: names in braces, templates, variables after a
    # scheme, base64 of JSON that is no JOSE header.
    "      return html`<${TranscriptVirtualListComponent} .items=${items}>`;",
    "  const label = `{capitalizedDimension}`;",
    "headers: { Authorization: Bearer accessToken }",
    "Authorization: Bearer ACCESS_TOKEN",
    "cache key eyJuYW1lIjoiYm9iIiwiYWdlIjozfQ.alpha1.bravo22.charlie33.delta44",
]


_SEVENTH = "issue 25, seventh round (EarlyBird's misses and look-alikes by cause; values made up here)"


def seventh_round_entries() -> list[dict[str, object]]:
    """The kinds of the seventh round's fixes, drawn after every entry above.

    A value after a type annotation that ends in `!` (Swift), a key block whose body is no base64
    between its BEGIN and END lines.
    """
    swift = "Tr0ub" + hexs(6) + "&x"
    body = "sealed by the vault agent " + hexs(8)
    block = f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{body}\n-----END ENCRYPTED PRIVATE KEY-----"
    return [
        _tp(f'    let password: String! = "{swift}"', swift, "typed_assignment", "assignment", _SEVENTH),
        _tp(
            block, body, "key_block_any_body", "private_key", "https://datatracker.ietf.org/doc/html/rfc7468"
        ),
    ]


SEVENTH_ROUND_LOOKALIKES = [
    # Under a secret's name but no value: a type then `nil`, a SQL parameter, a label translated.
    "    var txtFieldPassword: UITextField! = nil",
    '"connectionString": "Server=db;User Id=app;Password=@password;"',
    '  "Password": "Lösenord",',
    '  "password": "Contraseña",',
    '  "secret": "&#12497;&#12473;&#12527;&#12540;&#12489;",',
]


_EIGHTH = "issue 25, eighth round (real diffs' and Nosey Parker's look-alikes by cause; values made up here)"


def eighth_round_entries() -> list[dict[str, object]]:
    """What the eighth round's exclusions must still find, drawn after every entry above.

    A token of small letters and digits unquoted, a password that is one lower-case word, a value
    in parentheses and quotes, an `Authorization` value without a scheme, an f-string and a
    backtick string that hold a value rather than fields or a pattern.
    """
    unquoted = "".join(rng.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(10)) + hexs(4)
    word = "marigoldlantern"
    rows = [
        (f"    token = {unquoted}", unquoted, "unquoted_lower_token", "assignment"),
        (f"db_password = {word}", word, "password_word", "assignment"),
        (f'std::string secret("{(v := b62(14) + "=" + b62(6))}");', v, "call_argument_value", "assignment"),
        (f"Authorization: {(v := b62(32))}", v, "auth_header_no_scheme", "auth_header"),
        (f'        session_key = f"{(v := b62(30))}"', v, "f_string_value", "assignment"),
        (f"\tfixture := secrets.NewSecret(`{(v := b62(28))}`)", v, "backtick_argument_value", "assignment"),
    ]
    return [_tp(line, secret, type_, kind, _EIGHTH) for line, secret, type_, kind in rows]


EIGHTH_ROUND_LOOKALIKES = [
    # Code and names under a secret's name, no value: a format string of fields, a regular
    # expression a test generates values from, a call, keyword arguments, a model's name, a
    # template's subscript, a file's name after a path, a migration's name, a plain word, an HTML
    # attribute's name before another attribute, a documentation path, a route.
    '        session_key = f"{tenant_id}_{self._scope}"',
    '\tcases := fixtures.Samples("acme", secrets.NewSecret(`[a-zA-Z0-9]{48}`))',
    "        req.headers['Authorization'] = self.sign_request(req.method, req.url)",
    "        super(ApiToken, self).__init__(*args, **kwargs)",
    '    await verify_api_key("acme/model-7", "ACME_API_KEY")',
    " - Pass `cache_warm_start=False` to restore it.",
    '                "token", value=self.token_count, limit=self.token_cap',
    "    Choice(token=c.token, weight=c.log_weight_value)",
    "<a href=\"{% url 'vault:secret' pk=item.pk %}\">Back</a>",
    "Hook(name='Nightly', secret=HOOK_SECRET, additional_headers={'X-Trace': 'on'}),",
    "    secret_key = forms.CharField(label='Your private key', widget=forms.Textarea(attrs={'class': 'wide'}))",
    '  "aria-label": ` (access key "${keys[i2]})"`',
    "cat: /etc/passwd: permission denied",
    "        ('auth', '0042_alter_group_members'),",
    "    api_key = fallback",
    'name="acme_amazon_s3_files_access_key" id="acme-amazon-s3-files-access-key"',
    '  "/docs/3.1/account/keeping-your-data-safe/choosing-a-strong-password":"/docs/server@3.1/account"',
    "  get '/users/password' => 'app/users#password', as: 'app_user_password'",
]


_NINTH = "issue 25, ninth round (a JSON Web Key's members, RFC 7517/7518; values made up here)"
_JWK = "https://datatracker.ietf.org/doc/html/rfc7518#section-6"


def ninth_round_entries() -> list[dict[str, object]]:
    """A JSON Web Key's private members, drawn after every entry above.

    An EC key's `d` beside its public `x` and `y`, on one line, escaped in a string and
    pretty-printed over lines; a symmetric key's `k`.
    """
    x, y, d = _b64url(rng.randbytes(32)), _b64url(rng.randbytes(32)), _b64url(rng.randbytes(32))
    k = _b64url(rng.randbytes(32))
    escaped_d = _b64url(rng.randbytes(32))
    pretty_d = _b64url(rng.randbytes(32))
    one_line = f'{{"kty":"EC","crv":"P-256","d":"{d}","x":"{x}","y":"{y}"}}'
    escaped = f'const key = "{{\\"kty\\":\\"EC\\",\\"d\\":\\"{escaped_d}\\"}}";'
    pretty = f'{{\n  "kty": "EC",\n  "crv": "P-256",\n  "d": "{pretty_d}"\n}}'
    return [
        _tp(one_line, d, "jwk_private_member", "private_key", _JWK),
        _tp(f'  "signing_jwk": {{"kty": "oct", "k": "{k}"}},', k, "jwk_symmetric_key", "private_key", _JWK),
        _tp(escaped, escaped_d, "jwk_private_member_escaped", "private_key", _JWK),
        _tp(pretty, pretty_d, "jwk_private_member_lines", "private_key", _JWK),
    ]


NINTH_ROUND_LOOKALIKES = [
    # A JSON Web Key's public members: an EC point whose coordinate looks like a prefixed token,
    # an RSA modulus and exponent.
    '{"kty":"EC","crv":"P-256","kid":"k1","x":"mz4-Yq81JtXw0cNvLr5aB7sDf3GhK9pUeIo2ZxVnRl",'
    '"y":"Qa8bTc3dVe5fWg7hXi9jYk1lZm3nAo5pBq7rCs9tDu"}',
    '{"kty":"RSA","kid":"k2","n":"vQx7-Rk2mP9sLc4TzWb8Ny1Ue6Ja3Hf5Gd0Ko7Ip2Xs4Vq9Mt1Bz6Lw3Cr8Ey5Nu","e":"AQAB"}',
]


_TENTH = "issue 25, tenth round (Trivy's misses by cause; values made up here)"
_ANNOTATED = "https://github.com/microsoft/security-utilities (SEC101/200, common annotated security keys)"
_K8S_DOCKER = "https://kubernetes.io/docs/concepts/configuration/secret/#docker-config-secrets"
_TRIVY_RULES = "https://github.com/aquasecurity/trivy/blob/main/pkg/fanal/secret/builtin-rules.go"


def tenth_round_entries() -> list[dict[str, object]]:
    """The kinds of the tenth round's fixes, drawn after every entry above.

    Microsoft's common annotated security keys (84 characters, `JQQJ9` at 52), an OpenAI key with
    a service account's name before its watermark, a Kubernetes Secret's Docker config, each format
    in two of the contexts every catalogue format has (`token_entries`).
    """
    alnum = string.ascii_letters + string.digits
    formats = []
    for _ in range(2):
        annotated = (
            b62(52)
            + "JQQJ9"
            + rng.choice("9DH")
            + b62(1)
            + rng.choice("ABCDEFGHIJKL")
            + b62(16)
            + rng.choice(string.ascii_letters)
            + b62(7)
        )
        formats.append((annotated, "azure_common_annotated_key", "azure_key", _ANNOTATED))
    for name in ("deploy-bot", "ci"):
        named = f"sk-{name}-" + "".join(rng.choice(alnum) for _ in range(20)) + "T3BlbkFJ" + b62(20)
        formats.append((named, "openai_named_key", "openai_key", _TRIVY_RULES))
    rows = []
    for index, (value, type_, kind, source) in enumerate(formats):
        name, upper = _names(kind)
        context = TOKEN_CONTEXTS[(index * 3 + 1) % len(TOKEN_CONTEXTS)]
        line = context.replace("{NAME}", upper).replace("{name}", name).replace("{v}", value)
        rows.append(_tp(line, value, type_, kind, source))
    config = json.dumps(
        {"auths": {"registry.example.test": {"auth": base64.b64encode(b"ci:" + hexs(12).encode()).decode()}}}
    )
    encoded = base64.b64encode(config.encode()).decode()
    rows.append(
        _tp(f"  .dockerconfigjson: {encoded}", encoded, "k8s_docker_config", "basic_auth", _K8S_DOCKER)
    )
    old = base64.b64encode(b'{"registry.example.test":{"auth":"' + b62(16).encode() + b'"}}').decode()
    rows.append(_tp(f'    ".dockercfg": "{old}",', old, "k8s_docker_config", "basic_auth", _K8S_DOCKER))
    return rows


TENTH_ROUND_LOOKALIKES = [
    # A Docker config that a template or a variable fills, not the value itself.
    "  .dockerconfigjson: {{ .Values.imagePullSecret | b64enc }}",
    "  .dockerconfigjson: ${REGISTRY_CONFIG_B64}",
]


_ELEVENTH = "issue 25, eleventh round (KICS' look-alikes by cause; values made up here)"

ELEVENTH_ROUND_LOOKALIKES = [
    # CloudFormation's dynamic references: the template names where the secret is, not the secret,
    # also where a key path inside one names a password.
    "      MasterUserPassword: '{{resolve:secretsmanager:staging/app/db:SecretString:password}}'",
    "        API_TOKEN: '{{resolve:ssm-secure:/staging/api/token:3}}'",
    "      DbPassword: '{{resolve:secretsmanager:app-db:SecretString:password:AWSCURRENT}}'",
]


_TWELFTH = "issue 25, twelfth round (IBM detect-secrets' misses by cause; values made up here)"
_GIT_URL = "https://git-scm.com/docs/git-credential#_storage_format"


def twelfth_round_entries() -> list[dict[str, object]]:
    """A token as a URL's whole user part, drawn after every entry above (git passes one so)."""
    hex_token, token = hexs(40), b62(28)
    return [
        _tp(
            f"git+https://{hex_token}@github.example.test/org/tool.git",
            hex_token,
            "url_token",
            "url_password",
            _GIT_URL,
        ),
        _tp(
            f'  url = "https://{token}@gitlab.example.test/group/app.git"',
            token,
            "url_token",
            "url_password",
            _GIT_URL,
        ),
    ]


TWELFTH_ROUND_LOOKALIKES = [
    # A user name, not a token, as a URL's user part.
    "git clone https://release-automation-bot@github.example.test/org/tool.git",
    "  remote = https://x-oauth-basic@github.example.test/org/app",
]


_THIRTEENTH = "issue 25, thirteenth round (gosec's and bandit's misses by cause; values made up here)"
_GOSEC_G101 = "https://github.com/securego/gosec/blob/master/testutils/g101_samples.go"
_BANDIT_B105 = "https://bandit.readthedocs.io/en/latest/plugins/b105_hardcoded_password_string.html"


def thirteenth_round_entries() -> list[dict[str, object]]:
    """A literal compared with a secret's name, `pw`/`cred`, quoted one-word passwords: drawn last."""
    first, second, third, fourth = b62(20), b62(24), b62(22), b62(32)
    return [
        _tp(f'\tif "{first}" == password {{', first, "compared_literal", "assignment", _GOSEC_G101),
        _tp(
            f"  if ('{second}' !== config.apiToken) {{", second, "compared_literal", "assignment", _GOSEC_G101
        ),
        _tp(f'\tpw = "{third}"', third, "pw_name", "assignment", _GOSEC_G101),
        _tp(f'  cred: "{fourth}"', fourth, "pw_name", "assignment", _GOSEC_G101),
        _tp('smtp_password = "quokka"', "quokka", "password_word", "assignment", _BANDIT_B105),
        _tp('    connect(host, password="wombat")', "wombat", "password_word", "assignment", _BANDIT_B105),
    ]


THIRTEENTH_ROUND_LOOKALIKES = [
    # A stand-in word under a password's name, `pw` inside a word, a cursor compared with a literal.
    '    password = "changeme"',
    '  f.Secret = "REDACT"',
    "  PrintWriter pw = new PrintWriter(out);",
    '  if "c2FtcGxlLWN1cnNvci0x" == next_token {',
]


_FOURTEENTH = "issue 25, fourteenth round (Kingfisher's misses by cause; values made up here)"
_ATLASSIAN_PAT = "https://confluence.atlassian.com/enterprise/using-personal-access-tokens-1026032365.html"
_CISCO_PASSWORDS = "https://www.cisco.com/c/en/us/support/docs/security-vpn/remote-authentication-dial-user-service-radius/107614-64.html"


def fourteenth_round_entries() -> list[dict[str, object]]:
    """`pat`, a provider's `_key` with a random value, a network device's config: drawn last."""
    pat, key, hex_key, enable, community = b62(44), b62(40), hexs(32), b62(10), b62(9)
    return [
        _tp(f'CONFLUENCE_PAT="{pat}"', pat, "pat_name", "assignment", _ATLASSIAN_PAT),
        _tp(f"  acme_merchant_key: {key}", key, "provider_key", "assignment", _FOURTEENTH),
        _tp(f'WIDGETCO_KEY="wk-{hex_key}"', f"wk-{hex_key}", "provider_key", "assignment", _FOURTEENTH),
        _tp(f"enable secret 0 {enable}", enable, "device_config", "device_config", _CISCO_PASSWORDS),
        _tp(
            f"snmp-server community {community} RW",
            community,
            "device_config",
            "device_config",
            _CISCO_PASSWORDS,
        ),
    ]


FOURTEENTH_ROUND_LOOKALIKES = [
    # A table's or a cache's key, a public key's fingerprint, SNMP's default community, a stand-in's
    # base64 ("dummy value for the docs").
    '  sort_key = "Zq8Kd2Lw9Xv4Nb7Rt1Yh6Pm3Cs5Fg0Jx"',
    '  gpg_key: "3AA5C34371567BD2A5C34371567BD2AA5C343715"',
    "snmp-server community public RO",
    "SERVICE_KEY=ZHVtbXkgdmFsdWUgZm9yIHRoZSBkb2Nz",
]


_FIFTEENTH = "issue 25, fifteenth round (Kingfisher's second slice's misses by cause; values made up here)"
_DOT64 = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_BCRYPT = "https://passlib.readthedocs.io/en/stable/lib/passlib.hash.bcrypt.html"
_SHA512_CRYPT = "https://passlib.readthedocs.io/en/stable/lib/passlib.hash.sha512_crypt.html"
_INPUT_VALUE = "https://developer.mozilla.org/en-US/docs/Web/HTML/Element/input/password#value"


def _dot64(n: int) -> str:
    return "".join(rng.choice(_DOT64) for _ in range(n))


def fifteenth_round_entries() -> list[dict[str, object]]:
    """Password hashes, a pre-filled password field, a provider's scheme, an id with its secret."""
    bcrypt = f"$2b$12${_dot64(53)}"
    sha512 = f"$6${_dot64(16)}${_dot64(86)}"
    field, scheme, key_id, key_secret = b62(12), b62(40), hexs(24), hexs(32)
    return [
        _tp(f"deploy:{bcrypt}", bcrypt, "password_hash", "password_hash", _BCRYPT),
        _tp(f"ops:{sha512}:19700:0:99999:7:::", sha512, "password_hash", "password_hash", _SHA512_CRYPT),
        _tp(
            f'  <input type="password" name="pw" value="{field}">',
            field,
            "password_input",
            "assignment",
            _INPUT_VALUE,
        ),
        _tp(f"Authorization: sso-key {scheme}", scheme, "provider_scheme", "auth_header", _FIFTEENTH),
        _tp(
            f"ACME_KEY={key_id}:{key_secret}",
            f"{key_id}:{key_secret}",
            "provider_key",
            "assignment",
            _FIFTEENTH,
        ),
    ]


FIFTEENTH_ROUND_LOOKALIKES = [
    # A template's reference in a password field, prose after the header's name, a cache's key.
    '  <input type="password" name="pw" value="{{ form.password }}">',
    "Authorization: required for every endpoint below",
    '  cache_key = "user:8f14e45fceea167a5a36dedd4bea2543"',
]


_ROUNDS: tuple[tuple[Callable[[], list[dict[str, object]]] | None, str, list[str], str], ...] = (
    # issue 25's later rounds, in the order they draw: (entries, round, look-alikes, source)
    (sixth_round_entries, "sixth", SIXTH_ROUND_LOOKALIKES, _SIXTH),
    (seventh_round_entries, "seventh", SEVENTH_ROUND_LOOKALIKES, _SEVENTH),
    (eighth_round_entries, "eighth", EIGHTH_ROUND_LOOKALIKES, _EIGHTH),
    (ninth_round_entries, "ninth", NINTH_ROUND_LOOKALIKES, _NINTH),
    (tenth_round_entries, "tenth", TENTH_ROUND_LOOKALIKES, _TENTH),
    (None, "eleventh", ELEVENTH_ROUND_LOOKALIKES, _ELEVENTH),
    (twelfth_round_entries, "twelfth", TWELFTH_ROUND_LOOKALIKES, _TWELFTH),
    (thirteenth_round_entries, "thirteenth", THIRTEENTH_ROUND_LOOKALIKES, _THIRTEENTH),
    (fourteenth_round_entries, "fourteenth", FOURTEENTH_ROUND_LOOKALIKES, _FOURTEENTH),
    (fifteenth_round_entries, "fifteenth", FIFTEENTH_ROUND_LOOKALIKES, _FIFTEENTH),
)


def build() -> tuple[list[dict[str, object]], list[dict[str, str]]]:
    """(true positives, look-alikes), from the fixed seed: the same at every call."""
    rng.seed(SEED)
    tps = token_entries() + structured_entries() + assignment_entries()
    tps += gitleaks_syntax_entries() + detect_secrets_keyword_entries()
    looks = lookalikes()
    tps += issue25_entries() + ISSUE25_FOURTH_ROUND + issue25_entries(FIFTH_ROUND_FORMATS)
    looks += issue25_lookalikes()
    for entries, name, lines, source in _ROUNDS:
        tps += entries() if entries is not None else []
        looks += [{"line": line, "type": f"{name}_round_lookalike", "source": source} for line in lines]
    return tps, looks


def main() -> None:
    tps, looks = build()
    (HERE / "true_positives.jsonl").write_text("".join(json.dumps(e) + "\n" for e in tps))
    (HERE / "lookalikes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in looks))
    types = {e["type"] for e in tps}
    print(f"{len(tps)} true positives of {len(types)} types, {len(looks)} look-alikes")


if __name__ == "__main__":
    main()
