"""The token catalogue: one entry per provider token format that is recognisable on its own.

Why a table: a format is data (a literal prefix, a body charset and length, sometimes a
checksum), so adding a provider is one line, the corpus test can check every entry, and the
scanner (`scan.py`) builds one combined prefilter from the same rows instead of running
150 patterns one after the other. Each row names its source: the provider's documentation or
the public scanner rule it was taken from (gitleaks, MIT; detect-secrets, Apache-2.0).

A row's `body` uses only syntax that both `re` and RE2 accept (classes, groups, counted
repeats), because the prefilter runs it in RE2 and the validator in `re`. The kind goes into the
redaction counts; several formats of one provider share a kind.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass

_GL = "https://github.com/gitleaks/gitleaks/blob/master/cmd/generate/config/rules/"  # MIT
_DS = "https://github.com/Yelp/detect-secrets/blob/master/detect_secrets/plugins/"  # Apache-2.0

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def crc32_base62_tail(token: str, prefix_len: int) -> bool:
    """GitHub and npm tokens end in the CRC32 of their random part, base62 (0-9A-Za-z), 6 characters."""
    body = token[prefix_len:]
    if len(body) < 7:
        return False
    payload, tail = body[:-6], body[-6:]
    crc = zlib.crc32(payload.encode())
    digits = ""
    while crc:
        crc, rem = divmod(crc, 62)
        digits = _B62[rem] + digits
    return digits.rjust(6, "0") == tail


def _basic_has_colon(value: str) -> bool:
    """`Authorization: Basic` carries base64 of `user:password`."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _mixed(value: str) -> bool:
    """At least one digit and both letter cases: random, not a word or an identifier."""
    return (
        any(c.isdigit() for c in value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
    )


def _b64_pem_private(value: str) -> bool:
    """Base64 of a PEM block (Kubernetes `tls.key`): only private keys, not certificates."""
    head = value[:64]
    try:
        decoded = base64.b64decode(head[: len(head) - len(head) % 4])
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in decoded


def _b64_jwt(value: str) -> bool:
    """Base64 of a JWT (`ZXlK` is base64 of `eyJ`): decodes to `eyJ….ey…`."""
    head = value[:120]
    try:
        decoded = base64.b64decode(head[: len(head) - len(head) % 4])
    except (binascii.Error, ValueError):
        return False
    return re.match(rb"eyJ[A-Za-z0-9_-]{5,}\.ey", decoded) is not None


def _random_in_braces(token: str) -> bool:
    """`{…}` around a random run (`is_high_entropy_token`), not a name in braces (`{someName2}`)."""
    from graft_eval_pipeline.secrets.entropy import is_high_entropy_token  # entropy reads this table

    return is_high_entropy_token(token[2:].rstrip("}\\="))


_JOSE_KEY = re.compile(rb'"(?:alg|enc|typ)"')


def _jose(value: str) -> bool:
    """A JOSE token: its header decodes to a JSON object naming `alg`, `enc` or `typ`.

    Leniently: a header cut short in a copy still shows its first keys (`{"alg":"HS256","typ":"JW`);
    one with letters typed into it (`eyJhbasdGci…`) decodes to no such object and is no token.
    """
    header = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(header + "=" * (-len(header) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.lstrip().startswith(b"{") and _JOSE_KEY.search(decoded) is not None


@dataclass(frozen=True)
class Token:
    """One provider format.

    `body` follows one of `prefixes`; `back` > 0 means the anchor (the distinctive literal) sits
    inside the token and `pattern` is the whole token.
    """

    name: str
    kind: str
    prefixes: tuple[str, ...]
    body: str
    source: str
    checksum: Callable[[str], bool] | None = None
    # Everything below is for the few formats whose distinctive part is not at the start.
    anchor: str | None = None
    pattern: str | None = None
    back: int = 0
    validate: Callable[[str], bool] | None = None
    # The prefix is a label that stays readable (`AccountKey=`, a webhook host); only the rest goes.
    keep_prefix: bool = False


def _t(
    name: str,
    kind: str,
    prefixes: str | tuple[str, ...],
    body: str,
    source: str,
    **extra: object,
) -> Token:
    return Token(name, kind, (prefixes,) if isinstance(prefixes, str) else prefixes, body, source, **extra)  # type: ignore[arg-type]


def _not_another_providers(token: str) -> bool:
    """A service account's name before OpenAI's watermark (`sk-<name>-…T3BlbkFJ…`).

    Not Anthropic's or OpenRouter's prefix (`sk-ant-`, `sk-or-`), whose formats are their own.
    """
    return not token.startswith(("sk-ant-", "sk-or-"))


_AN = "[A-Za-z0-9]"
_HEX = "[a-f0-9]"
_URLB64 = "[A-Za-z0-9_-]"

TOKENS: tuple[Token, ...] = (
    # --- cloud providers ---------------------------------------------------------------------
    _t(
        "aws_access_key_id",
        "aws_key",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        "[0-9A-Z]{16}",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids",
    ),
    _t("aws_access_key_id_a3t", "aws_key", "A3T", "[A-Z0-9][0-9A-Z]{16}", _GL + "aws.go"),
    _t(
        "aws_session_token",
        "aws_session_token",
        ("FwoGZXIvYXdzE", "IQoJb3JpZ2luX2Vj", "IQoJb3JpZ2lu"),
        "[A-Za-z0-9/+=]{100,}",
        "https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html",
    ),
    _t(
        "aws_bedrock_api_key",
        "aws_bedrock_key",
        "ABSK",
        "[A-Za-z0-9+/]{100,}={0,2}",
        _DS + "amazon_bedrock.py",
    ),
    _t(
        "amazon_mws_token",
        "amazon_mws_token",
        "amzn.mws.",
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        _GL + "aws.go",
    ),
    _t(
        "gcp_api_key",
        "gcp_api_key",
        "AIza",
        "[A-Za-z0-9_-]{35}",
        "https://cloud.google.com/docs/authentication/api-keys",
    ),
    _t(
        "gcp_oauth_client_secret",
        "gcp_oauth_secret",
        "GOCSPX-",
        "[A-Za-z0-9_-]{28}",
        "https://developers.google.com/identity/protocols/oauth2",
    ),
    _t(
        "gcp_oauth_access_token",
        "gcp_oauth_token",
        "ya29.",
        "[A-Za-z0-9_-]{30,}",
        "https://developers.google.com/identity/protocols/oauth2",
    ),
    _t(
        "gcp_oauth_refresh_token",
        "gcp_oauth_token",
        "1//0",
        "[A-Za-z0-9_-]{35,}",
        "https://developers.google.com/identity/protocols/oauth2",
    ),
    _t(
        "azure_ad_client_secret",
        "azure_client_secret",
        (),
        "",
        _GL + "azure.go",
        anchor="[0-9]Q~[A-Za-z0-9_~.-]{12}",
        pattern=r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        back=4,
    ),
    _t(
        "azure_common_annotated_key",
        "azure_key",
        (),
        "",
        "https://github.com/microsoft/security-utilities (SEC101/200, common annotated security keys)",
        anchor="JQQJ9[9DH][A-Za-z0-9][A-L]",
        pattern=(
            r"(?<![A-Za-z0-9])[A-Za-z0-9]{52}JQQJ9[9DH][A-Za-z0-9][A-L][A-Za-z0-9]{16}[A-Za-z]"
            r"[A-Za-z0-9]{7}(?:[A-Za-z0-9]{2}==)?(?![A-Za-z0-9])"
        ),
        back=52,
    ),
    _t(
        "azure_storage_account_key",
        "connection_string",
        ("AccountKey=",),
        "[A-Za-z0-9+/]{86}==",
        "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string",
        keep_prefix=True,
    ),
    _t("alibaba_access_key_id", "alibaba_key", "LTAI", "[A-Za-z0-9]{12,20}", _GL + "alibaba.go"),
    _t("digitalocean_pat", "digitalocean_token", "dop_v1_", _HEX + "{64}", _GL + "digitalocean.go"),
    _t("digitalocean_oauth", "digitalocean_token", "doo_v1_", _HEX + "{64}", _GL + "digitalocean.go"),
    _t("digitalocean_refresh", "digitalocean_token", "dor_v1_", _HEX + "{64}", _GL + "digitalocean.go"),
    _t("heroku_api_key_v2", "heroku_key", "HRKU-AA", "[0-9a-zA-Z_-]{58}", _GL + "heroku.go"),
    _t("flyio_token", "flyio_token", "fo1_", "[A-Za-z0-9_-]{43}", _GL + "flyio.go"),
    _t(
        "flyio_macaroon",
        "flyio_token",
        ("fm1r_", "fm1a_", "fm2_"),
        "[A-Za-z0-9+/]{100,}={0,3}",
        _GL + "flyio.go",
    ),
    _t("scalingo_token", "scalingo_token", "tk-us-", "[A-Za-z0-9_-]{48}", _GL + "scalingo.go"),
    _t("openshift_user_token", "openshift_token", "sha256~", "[A-Za-z0-9_-]{43}", _GL + "openshift.go"),
    _t(
        "cloudflare_origin_ca_key",
        "cloudflare_key",
        "v1.0-",
        "[a-f0-9]{24}-[a-f0-9]{146}",
        _GL + "cloudflare.go",
    ),
    _t(
        "ibm_softlayer_api",
        "ibm_key",
        "api.softlayer.com/soap/v3",
        "(?:\\.1)?/[a-z0-9]{64}",
        _DS + "softlayer.py",
        keep_prefix=True,
    ),
    # --- source hosting, CI and package registries --------------------------------------------
    # crates.io API tokens: `cio` and 32 letters and digits (Nosey Parker's rule, Apache-2.0).
    _t(
        "cratesio_token",
        "cratesio_token",
        "cio",
        "[A-Za-z0-9]{32}",
        "https://github.com/praetorian-inc/noseyparker/blob/main/crates/noseyparker/data/default/builtin/rules/crates.io.yml",
        validate=_mixed,
    ),
    _t(
        "github_classic_token",
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        _AN + "{36}",
        "https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/",
        checksum=lambda tok: crc32_base62_tail(tok, 4),
    ),
    _t(
        "github_fine_grained_pat",
        "github_token",
        "github_pat_",
        "[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
        "https://github.blog/changelog/2022-10-18-introducing-fine-grained-personal-access-tokens/",
    ),
    _t("github_pat_loose", "github_token", "github_pat_", "[A-Za-z0-9_]{60,}", _GL + "github.go"),
    _t(
        "gitlab_pat",
        "gitlab_token",
        "glpat-",
        "[A-Za-z0-9_-]{20,300}(?:\\.[0-9a-z]{2}[0-9a-z]{7})?",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    _t(
        "gitlab_other_token",
        "gitlab_token",
        (
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "glffct-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
            "glcbt-",
            "glwt-",
        ),
        "[A-Za-z0-9_-]{20,300}(?:\\.[0-9a-z]{9})?",
        "https://docs.gitlab.com/ee/security/token_overview.html#token-prefixes",
    ),
    _t("gitlab_runner_registration", "gitlab_token", "GR1348941", "[A-Za-z0-9_-]{20,50}", _GL + "gitlab.go"),
    _t(
        "gitlab_session_cookie",
        "gitlab_token",
        "_gitlab_session=",
        "[0-9a-z]{32}",
        _GL + "gitlab.go",
        keep_prefix=True,
    ),
    _t(
        "bitbucket_app_password",
        "atlassian_token",
        "ATBB",
        "[A-Za-z0-9_=.-]{28,}",
        "https://support.atlassian.com/bitbucket-cloud/docs/app-passwords/",
    ),
    _t(
        "atlassian_api_token",
        "atlassian_token",
        ("ATATT3", "ATCTT3", "ATOAT3"),
        "[A-Za-z0-9_=-]{100,}",
        "https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/",
    ),
    _t(
        "npm_access_token",
        "npm_token",
        "npm_",
        _AN + "{36}",
        "https://github.blog/2021-09-23-announcing-npms-new-access-token-format/",
        checksum=lambda tok: crc32_base62_tail(tok, 4),
    ),
    _t(
        "pypi_upload_token",
        "pypi_token",
        ("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"),
        "[A-Za-z0-9_-]{50,}",
        "https://pypi.org/help/#apitoken",
    ),
    _t("rubygems_api_key", "rubygems_token", "rubygems_", _HEX + "{48}", _GL + "rubygems.go"),
    _t("clojars_token", "clojars_token", "CLOJARS_", "[a-z0-9]{60}", _GL + "clojars.go"),
    _t(
        "docker_hub_pat",
        "docker_token",
        ("dckr_pat_", "dckr_oat_"),
        "[A-Za-z0-9_-]{27,}",
        "https://docs.docker.com/security/for-developers/access-tokens/",
    ),
    _t("artifactory_api_key", "artifactory_token", "AKCp", "[A-Za-z0-9]{69}", _GL + "artifactory.go"),
    _t(
        "artifactory_reference_token", "artifactory_token", "cmVmd", "[A-Za-z0-9]{59}", _GL + "artifactory.go"
    ),
    _t(
        "nuget_api_key",
        "nuget_key",
        "oy2",
        "[a-z0-9]{43}",
        "https://learn.microsoft.com/en-us/nuget/nuget-org/scoped-api-keys",
    ),
    _t("octopus_deploy_api_key", "octopus_key", "API-", "[A-Z0-9]{26}", _GL + "octopus.go"),
    _t("pulumi_token", "pulumi_token", "pul-", _HEX + "{40}", _GL + "pulumi.go"),
    _t("prefect_token", "prefect_token", ("pnu_", "pnb_"), _AN + "{36}", _GL + "prefect.go"),
    _t(
        "terraform_cloud_token",
        "terraform_token",
        (),
        "",
        _GL + "hashicorp.go",
        anchor=r"\.atlasv1\.[A-Za-z0-9_=-]{12}",
        pattern=r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])",
        back=14,
    ),
    _t(
        "vault_service_token",
        "vault_token",
        ("hvs.", "hvb.", "hvr."),
        "[A-Za-z0-9_-]{24,}",
        "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes",
    ),
    _t(
        "vault_legacy_token",
        "vault_token",
        "s.",
        "[A-Za-z0-9]{24}",
        _GL + "hashicorp_vault.go",
        validate=_mixed,
    ),
    _t(
        "doppler_token",
        "doppler_token",
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
        "(?:[a-z0-9_-]{1,40}\\.)?[A-Za-z0-9]{40,44}",
        _GL + "doppler.go",
    ),
    _t("infracost_token", "infracost_token", "ico-", _AN + "{32}", _GL + "infracost.go"),
    _t(
        "sourcegraph_token",
        "sourcegraph_token",
        "sgp_",
        "(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}",
        _GL + "sourcegraph.go",
    ),
    _t(
        "buildkite_token",
        "buildkite_token",
        "bkua_",
        "[a-f0-9]{40}",
        "https://buildkite.com/docs/apis/managing-api-tokens",
    ),
    _t(
        "circleci_token",
        "circleci_token",
        ("CCIPAT_", "CCIPRJ_"),
        "[A-Za-z0-9]{22}_[a-f0-9]{40}",
        "https://circleci.com/docs/managing-api-tokens/",
    ),
    _t("netlify_token", "netlify_token", "nfp_", "[A-Za-z0-9]{36,}", _GL + "netlify.go"),
    # Cloudflare's scannable credentials (every token created or rolled since 2025): a prefix per
    # type, 40 letters and digits, then a checksum (8 hex digits; its construction is not
    # published, so it is not checked).
    _t(
        "cloudflare_api_token",
        "cloudflare_key",
        ("cfk_", "cfut_", "cfat_"),
        "[A-Za-z0-9]{40}[0-9a-f]{8}",
        "https://developers.cloudflare.com/fundamentals/api/get-started/token-formats/",
    ),
    # Dependency-Track API keys carry `odt_` since 4.9 (32 alphanumerics; 4.13 puts a public id
    # and `_` before them).
    _t(
        "dependency_track_key",
        "dependency_track_key",
        "odt_",
        "[A-Za-z0-9_]{32,80}",
        "https://docs.dependencytrack.org/integrations/rest-api/",
        validate=_mixed,  # random, not `odt_configuration_and_settings_…`
    ),
    _t(
        "render_api_key",
        "render_key",
        "rnd_",
        "[A-Za-z0-9]{28,}",
        "https://render.com/docs/api#authentication",
    ),
    # --- AI providers ---------------------------------------------------------------------------
    _t(
        "anthropic_api_key",
        "anthropic_key",
        "sk-ant-",
        "[A-Za-z0-9_-]{20,}",
        "https://docs.anthropic.com/en/api/overview#authentication",
    ),
    _t(
        "openai_project_key",
        "openai_key",
        ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"),
        "[A-Za-z0-9_-]{40,}",
        "https://platform.openai.com/docs/api-reference/authentication",
    ),
    _t(
        "openai_legacy_key",
        "openai_key",
        "sk-",
        "[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
        _DS + "openai.py",
    ),
    _t(
        "openai_named_key",
        "openai_key",
        "sk-",
        "[A-Za-z0-9]+(?:-[A-Za-z0-9]+){0,7}-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
        "https://github.com/aquasecurity/trivy/blob/main/pkg/fanal/secret/builtin-rules.go",
        validate=_not_another_providers,
    ),
    _t("openai_user_key", "openai_key", "sk-", "[A-Za-z0-9]{48}", _GL + "openai.go"),
    _t(
        "openrouter_key",
        "openrouter_key",
        "sk-or-v1-",
        _HEX + "{64}",
        "https://openrouter.ai/docs/api-reference/authentication",
    ),
    _t("deepseek_key", "deepseek_key", "sk-", _HEX + "{32}", "https://api-docs.deepseek.com/"),
    _t("groq_key", "groq_key", "gsk_", _AN + "{52}", _GL + "groq.go"),
    _t("xai_key", "xai_key", "xai-", _AN + "{80}", "https://docs.x.ai/docs/api-reference#authentication"),
    _t("perplexity_key", "perplexity_key", "pplx-", _AN + "{48}", _GL + "perplexity.go"),
    _t(
        "replicate_token",
        "replicate_token",
        "r8_",
        _AN + "{37}",
        "https://replicate.com/docs/reference/http#authentication",
    ),
    _t(
        "huggingface_token",
        "huggingface_token",
        "hf_",
        "[A-Za-z0-9]{34}",
        "https://huggingface.co/docs/hub/security-tokens",
    ),
    _t("huggingface_org_token", "huggingface_token", "api_org_", "[A-Za-z0-9]{34}", _GL + "huggingface.go"),
    _t(
        "langsmith_key",
        "langsmith_key",
        ("lsv2_pt_", "lsv2_sk_"),
        "[a-f0-9]{32}_[a-f0-9]{10}",
        _GL + "langsmith.go",
    ),
    _t(
        "nvidia_key",
        "nvidia_key",
        "nvapi-",
        "[A-Za-z0-9_-]{64}",
        "https://docs.api.nvidia.com/nim/reference/authentication",
    ),
    _t(
        "tavily_key",
        "tavily_key",
        "tvly-",
        "[A-Za-z0-9-]{32,}",
        "https://docs.tavily.com/documentation/api-reference/introduction",
    ),
    _t(
        "pinecone_key",
        "pinecone_key",
        "pcsk_",
        "[A-Za-z0-9_]{60,}",
        "https://docs.pinecone.io/guides/projects/manage-api-keys",
    ),
    _t(
        "fireworks_key",
        "fireworks_key",
        "fw_",
        "[A-Za-z0-9]{24,}",
        "https://docs.fireworks.ai/api-reference/introduction",
    ),
    _t(
        "elevenlabs_key",
        "elevenlabs_key",
        "sk_",
        _HEX + "{48}",
        "https://elevenlabs.io/docs/api-reference/authentication",
    ),
    # --- messaging, mail, collaboration --------------------------------------------------------
    _t(
        "slack_token",
        "slack_token",
        ("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xoxe.xoxp-", "xoxe.xoxb-"),
        "[A-Za-z0-9-]{10,}",
        "https://api.slack.com/authentication/token-types",
    ),
    _t(
        "slack_app_token",
        "slack_token",
        "xapp-",
        "[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]{10,}",
        "https://api.slack.com/authentication/token-types#app-level",
    ),
    _t(
        "slack_webhook",
        "slack_webhook",
        ("hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"),
        "[A-Za-z0-9_]{6,}/[A-Za-z0-9_]{6,}/[A-Za-z0-9_/]{12,}",
        "https://api.slack.com/messaging/webhooks",
        keep_prefix=True,
    ),
    _t(
        "discord_webhook",
        "discord_webhook",
        ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
        "[0-9]{17,20}/[A-Za-z0-9_-]{60,68}",
        "https://discord.com/developers/docs/resources/webhook",
        keep_prefix=True,
    ),
    _t(
        "discord_bot_token",
        "discord_token",
        (),
        "",
        _DS + "discord.py",
        anchor=r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.",
        pattern=r"(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])",
    ),
    _t(
        "teams_webhook",
        "teams_webhook",
        # The legacy Office 365 connector host (`outlook.office.com/webhook/`) takes the same path.
        ("webhook.office.com/webhookb2/", "outlook.office.com/webhook/"),
        "[a-z0-9-]{36}@[a-z0-9-]{36}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36}",
        _GL
        + "microsoft.go; https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/"
        "how-to/add-incoming-webhook",
        keep_prefix=True,
    ),
    _t(
        "telegram_bot_token",
        "telegram_token",
        (),
        "",
        "https://core.telegram.org/bots/api#authorizing-your-bot",
        anchor=r"[0-9]{5}:A[A-Za-z0-9_-]{12}",
        # The part after the colon is 35 characters in Telegram's examples; 33 and 34 occur too.
        pattern=r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_-]{32,34}(?![A-Za-z0-9_-])",
        back=16,
    ),
    _t(
        "twilio_api_key",
        "twilio_key",
        "SK",
        "[0-9a-fA-F]{32}",
        "https://www.twilio.com/docs/iam/api-keys",
    ),
    _t("twilio_account_sid", "twilio_key", "AC", "[0-9a-f]{32}", _DS + "twilio.py"),
    _t(
        "sendgrid_api_key",
        "sendgrid_key",
        "SG.",
        "[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}",
        "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys",
    ),
    _t("mailgun_api_key", "mailgun_key", "key-", _HEX + "{32}", _GL + "mailgun.go"),
    _t(
        "mailchimp_api_key",
        "mailchimp_key",
        (),
        "",
        _DS + "mailchimp.py",
        anchor=r"[0-9a-f]{8}-us[0-9]",
        pattern=r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])",
        back=32,
    ),
    _t(
        "brevo_api_key",
        "brevo_key",
        ("xkeysib-", "xsmtpsib-"),
        _HEX + "{64}-[A-Za-z0-9]{16}",
        _GL + "sendinblue.go",
    ),
    _t("linear_api_key", "linear_key", "lin_api_", _AN + "{40}", _GL + "linear.go"),
    _t(
        "linear_oauth_token",
        "linear_key",
        "lin_oauth_",
        "[a-f0-9]{64}",
        "https://developers.linear.app/docs/oauth/authentication",
    ),
    _t("notion_token", "notion_token", "ntn_", "[0-9]{11}[A-Za-z0-9]{35}", _GL + "notion.go"),
    _t(
        "notion_internal_secret",
        "notion_token",
        "secret_",
        "[A-Za-z0-9]{43}",
        "https://developers.notion.com/docs/authorization",
        validate=_mixed,
    ),
    _t(
        "asana_pat",
        "asana_token",
        ("1/", "2/"),
        "[0-9]{10,20}(?:/[0-9]{10,20})?:[a-f0-9]{32}",
        "https://developers.asana.com/docs/personal-access-token",
    ),
    _t(
        "figma_pat",
        "figma_token",
        "figd_",
        "[A-Za-z0-9_-]{40,}",
        "https://www.figma.com/developers/api#access-tokens",
    ),
    _t(
        "airtable_pat",
        "airtable_token",
        "pat",
        "[A-Za-z0-9]{14}\\.[a-f0-9]{64}",
        "https://airtable.com/developers/web/guides/personal-access-tokens",
    ),
    _t("typeform_token", "typeform_token", "tfp_", "[A-Za-z0-9_.=-]{59}", _GL + "typeform.go"),
    _t("frameio_token", "frameio_token", "fio-u-", "[A-Za-z0-9_=-]{64}", _GL + "frameio.go"),
    _t("readme_api_key", "readme_key", "rdme_", "[a-z0-9]{70}", _GL + "readme.go"),
    _t("postman_api_key", "postman_key", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}", _GL + "postman.go"),
    _t("dropbox_short_lived", "dropbox_token", "sl.", "[A-Za-z0-9_=-]{130,}", _GL + "dropbox.go"),
    _t("intercom_token", "intercom_token", "dG9rOm", "[A-Za-z0-9+/]{40,}={0,2}", _GL + "intercom.go"),
    _t(
        "mapbox_secret_token",
        "mapbox_token",
        "sk.eyJ",
        "[A-Za-z0-9_-]{50,}\\.[A-Za-z0-9_-]{20,}",
        "https://docs.mapbox.com/help/glossary/access-token/",
    ),
    # --- payments and commerce -----------------------------------------------------------------
    _t(
        "stripe_secret_key",
        "stripe_key",
        ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
        "[A-Za-z0-9]{10,99}",
        "https://docs.stripe.com/keys",
    ),
    _t(
        "stripe_webhook_secret",
        "stripe_key",
        "whsec_",
        "[A-Za-z0-9+/=]{24,}",
        "https://docs.stripe.com/webhooks#verify-events",
    ),
    _t("square_access_token", "square_token", ("sq0atp-", "EAAA"), "[A-Za-z0-9_-]{22,60}", _GL + "square.go"),
    _t("square_oauth_secret", "square_token", "sq0csp-", "[A-Za-z0-9_-]{43}", _DS + "square_oauth.py"),
    _t(
        "shopify_token",
        "shopify_token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        "[a-fA-F0-9]{32}",
        "https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens",
    ),
    _t(
        "facebook_access_token",
        "facebook_token",
        ("EAAB", "EAAC", "EAAG", "EAAM", "EAAI"),
        "[A-Za-z0-9]{90,}",
        _GL + "facebook.go",
    ),
    _t(
        "flutterwave_secret_key",
        "flutterwave_key",
        ("FLWSECK_TEST-", "FLWSECK-"),
        "[a-hA-H0-9]{12,32}(?:-X)?",
        _GL + "flutterwave.go",
    ),
    _t(
        "flutterwave_encryption_key",
        "flutterwave_key",
        ("FLWSECK_TEST", "FLWSECK"),
        "[a-hA-H0-9]{12}",
        _GL + "flutterwave.go",
    ),
    _t("easypost_api_key", "easypost_key", ("EZAK", "EZTK"), "[A-Za-z0-9]{54}", _GL + "easypost.go"),
    _t(
        "duffel_token",
        "duffel_token",
        ("duffel_test_", "duffel_live_"),
        "[A-Za-z0-9_=-]{43}",
        _GL + "duffel.go",
    ),
    _t(
        "shippo_token", "shippo_token", ("shippo_live_", "shippo_test_"), "[a-fA-F0-9]{40}", _GL + "shippo.go"
    ),
    _t(
        "paypal_braintree_token",
        "braintree_token",
        "access_token$production$",
        "[0-9a-z]{16}\\$[0-9a-f]{32}",
        _GL + "braintree.go",
    ),
    _t(
        "paypal_braintree_sandbox",
        "braintree_token",
        "access_token$sandbox$",
        "[0-9a-z]{16}\\$[0-9a-f]{32}",
        _GL + "braintree.go",
    ),
    _t("adyen_api_key", "adyen_key", "AQE", "[A-Za-z0-9]{1,5}[+/A-Za-z0-9]{50,}={0,2}", _GL + "adyen.go"),
    _t(
        "coinbase_key",
        "coinbase_key",
        "organizations/",
        "[0-9a-f-]{36}/apiKeys/[0-9a-f-]{36}",
        _GL + "coinbase.go",
    ),
    _t(
        "plaid_access_token",
        "plaid_token",
        ("access-sandbox-", "access-development-", "access-production-"),
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        _GL + "plaid.go",
    ),
    # --- observability, data, infrastructure ---------------------------------------------------
    # Aiven's service passwords (`AVNS_` and at least eight letters, digits or underscores).
    _t("aiven_service_password", "aiven_token", "AVNS_", "[A-Za-z0-9_]{8,}", _DS + "aiven_token.py"),
    _t("databricks_token", "databricks_token", "dapi", _HEX + "{32}(?:-[0-9])?", _GL + "databricks.go"),
    _t(
        "dynatrace_token",
        "dynatrace_token",
        "dt0c01.",
        "[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}",
        _GL + "dynatrace.go",
    ),
    _t("grafana_cloud_token", "grafana_token", "glc_", "[A-Za-z0-9+/]{32,400}={0,3}", _GL + "grafana.go"),
    _t(
        "grafana_service_account",
        "grafana_token",
        "glsa_",
        "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
        _GL + "grafana.go",
    ),
    _t("grafana_api_key", "grafana_token", "eyJrIjoi", "[A-Za-z0-9]{60,400}={0,3}", _GL + "grafana.go"),
    _t("newrelic_user_key", "newrelic_key", "NRAK-", "[A-Z0-9]{27}", _GL + "newrelic.go"),
    _t("newrelic_insert_key", "newrelic_key", "NRII-", "[A-Za-z0-9_-]{32}", _GL + "newrelic.go"),
    _t("newrelic_browser_key", "newrelic_key", "NRJS-", "[a-f0-9]{19}", _GL + "newrelic.go"),
    # Legacy REST API admin keys (`NRAA-`), 27 characters after the prefix as the user keys.
    _t(
        "newrelic_admin_key",
        "newrelic_key",
        "NRAA-",
        "[A-Za-z0-9]{27}",
        "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/",
    ),
    _t(
        "newrelic_license_key",
        "newrelic_key",
        (),
        "",
        "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/",
        anchor=r"[a-f0-9]{8}NRAL",
        # 40 characters ending in `NRAL`; an EU-region account's start with `eu01xx`.
        pattern=r"(?<![A-Za-z0-9])(?:[a-f0-9]{36}|eu01xx[a-f0-9]{30})NRAL(?![A-Za-z0-9])",
        back=36,
    ),
    _t("sentry_user_token", "sentry_token", "sntryu_", _HEX + "{64}", _GL + "sentry.go"),
    _t("sentry_org_token", "sentry_token", "sntrys_", "eyJ[A-Za-z0-9+/=_]{60,}", _GL + "sentry.go"),
    _t(
        "honeycomb_key",
        "honeycomb_key",
        ("hcaik_", "hcxik_"),
        "[a-z0-9]{50,}",
        "https://docs.honeycomb.io/get-started/configure/environments/manage-api-keys/",
    ),
    _t("posthog_personal_key", "posthog_key", "phx_", "[A-Za-z0-9]{40,}", "https://posthog.com/docs/api"),
    _t(
        "planetscale_token",
        "planetscale_token",
        ("pscale_tkn_", "pscale_oauth_", "pscale_pw_"),
        "[A-Za-z0-9_=.-]{32,64}",
        _GL + "planetscale.go",
    ),
    _t(
        "supabase_service_key",
        "supabase_key",
        ("sbp_", "sb_secret_"),
        "[A-Za-z0-9_-]{32,}",
        "https://supabase.com/docs/guides/api/api-keys",
    ),
    _t("clickhouse_cloud_secret", "clickhouse_key", "4b1d", "[A-Za-z0-9]{38}", _GL + "clickhouse.go"),
    _t(
        "astra_token",
        "astra_token",
        "AstraCS:",
        "[A-Za-z]{24}:[a-f0-9]{64}",
        "https://docs.datastax.com/en/astra-db-serverless/administration/manage-application-tokens.html",
    ),
    _t(
        "mongodb_atlas_key",
        "mongodb_key",
        "mdb_sa_sk_",
        "[A-Za-z0-9_-]{32,}",
        "https://www.mongodb.com/docs/atlas/configure-api-access/",
    ),
    _t(
        "harness_token",
        "harness_token",
        ("pat.", "sat."),
        "[A-Za-z0-9_-]{22}\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{20}",
        _GL + "harness.go",
    ),
    _t(
        "launchdarkly_key",
        "launchdarkly_key",
        ("api-", "sdk-", "mob-"),
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        _GL + "launchdarkly.go",
    ),
    _t(
        "settlemint_token",
        "settlemint_token",
        ("sm_pat_", "sm_aat_", "sm_sat_"),
        _AN + "{16}",
        _GL + "settlemint.go",
    ),
    _t(
        "maxmind_license_key",
        "maxmind_key",
        (),
        "",
        _GL + "maxmind.go",
        anchor="_[A-Za-z0-9]{29}_mmk",
        pattern=r"(?<![A-Za-z0-9_])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9_])",
        back=7,
    ),
    # --- identity, secrets managers, crypto ----------------------------------------------------
    _t(
        "onepassword_secret_key",
        "onepassword_key",
        "A3-",
        "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        _GL + "1password.go",
    ),
    _t(
        "onepassword_service_token",
        "onepassword_key",
        "ops_eyJ",
        "[A-Za-z0-9+/]{200,}={0,3}",
        _GL + "1password.go",
    ),
    _t(
        "age_secret_key",
        "age_key",
        "AGE-SECRET-KEY-1",
        "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "https://age-encryption.org/v1",
    ),
    _t(
        "authress_key",
        "authress_key",
        ("sc_", "ext_", "scauth_", "authress_"),
        "[A-Za-z0-9]{5,30}\\.[A-Za-z0-9]{4,6}\\.acc[_-][A-Za-z0-9-]{10,32}\\.[A-Za-z0-9+/_=-]{30,120}",
        _GL + "authress.go",
    ),
    _t("okta_api_token", "okta_token", "00", "[A-Za-z0-9_-]{40}", _GL + "okta.go", validate=_mixed),
    _t("adobe_client_secret", "adobe_secret", "p8e-", "[A-Za-z0-9]{32}", _GL + "adobe.go"),
    _t("intra42_secret", "intra42_secret", ("s-s4t2ud-", "s-s4t2af-"), "[a-f0-9]{64}", _GL + "intra42.go"),
    _t(
        "django_insecure_key",
        "django_secret_key",
        "django-insecure-",
        "[A-Za-z0-9!@#$%^&*(=+_-]{30,}",
        "https://docs.djangoproject.com/en/stable/ref/settings/#secret-key",
    ),
    _t("yandex_api_key", "yandex_key", "AQVN", "[A-Za-z0-9_-]{35,38}", _GL + "yandex.go"),
    _t("yandex_aws_key", "yandex_key", "YCAJ", "[A-Za-z0-9_-]{35,38}", _GL + "yandex.go"),
    _t(
        "yandex_oauth_token",
        "yandex_key",
        "y0_",
        "[A-Za-z0-9_-]{55,}",
        "https://yandex.cloud/en/docs/iam/concepts/authorization/oauth-token",
    ),
    _t(
        "tencent_secret_id",
        "tencent_key",
        "AKID",
        "[A-Za-z0-9]{32}",
        "https://www.tencentcloud.com/document/product/598/37140",
    ),
    _t(
        "google_hmac_key",
        "gcp_hmac_key",
        "GOOG1",
        "[A-Z0-9]{56}",
        "https://cloud.google.com/storage/docs/authentication/hmackeys",
    ),
    _t("contentful_pat", "contentful_token", "CFPAT-", "[A-Za-z0-9_-]{43}", _GL + "contentful.go"),
    _t("lob_api_key", "lob_key", ("live_pub_", "test_pub_"), "[a-f0-9]{31}", _GL + "lob.go"),
    _t(
        "cloudinary_url",
        "cloudinary_key",
        "cloudinary://",
        "[0-9]{15}:[A-Za-z0-9_-]{27}@",
        "https://cloudinary.com/documentation/how_to_integrate_cloudinary",
        keep_prefix=True,
    ),
    _t(
        "firebase_fcm_server_key",
        "firebase_key",
        "AAAA",
        "[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{134}",
        "https://firebase.google.com/docs/cloud-messaging/auth-server",
    ),
    _t(
        "twitter_bearer_token",
        "twitter_token",
        "AAAAAAAAAAAAAAAAAAAAA",
        "[A-Za-z0-9%]{60,}",
        _GL + "twitter.go",
    ),
    _t(
        "jwt",
        "jwt",
        # The header is base64url of a JSON object: `{"` (`eyJ`), `{ "` (`eyA`), `{` and a newline
        # (`ewo`, `ew0K` for CRLF) or a tab (`ewk`).
        ("eyJ", "eyA", "ewo", "ew0K", "ewk"),
        # A signed or unsigned token (`header.claims[.signature]`: the claims are the payload), or
        # JWE's five parts (`header.key.iv.ciphertext.tag`, the key empty for direct encryption).
        "[A-Za-z0-9_-]{5,}\\.(?:ey[A-Za-z0-9_-]{5,}(?:\\.[A-Za-z0-9_-]*)?|[A-Za-z0-9_-]*(?:\\.[A-Za-z0-9_-]{5,}){3})",
        "https://datatracker.ietf.org/doc/html/rfc7519",
        validate=_jose,
    ),
    _t(
        "jwt_base64",
        "jwt",
        "ZXlK",
        "[A-Za-z0-9+/]{60,}={0,2}",
        _GL + "jwt.go",
        validate=_b64_jwt,
    ),
    _t(
        "maven_encrypted_password",
        "maven_password",
        # `{base64}` as an element's text or a string's value: `{` alone starts a run every 125
        # bytes of code (the pre-send pass about 7 % slower); with the character before it, few.
        (">{", '"{', "'{", "`{", "={"),
        # The closing brace escaped in some copies (`…\}`).
        "[A-Za-z0-9+/]{20,}={0,2}\\\\?\\}",
        "https://maven.apache.org/guides/mini/guide-encryption.html",
        validate=_random_in_braces,
        keep_prefix=True,
    ),
    _t(
        "k8s_secret_pem",
        "private_key",
        "LS0tLS1CRUdJTi",
        "[A-Za-z0-9+/]{20,}={0,2}",
        "https://kubernetes.io/docs/concepts/configuration/secret/#tls-secrets",
        validate=lambda tok: _b64_pem_private(tok),
    ),
    # --- password hashes: cracked offline, so redacted like a password (crypt(3), Kerberos) ------
    _t(
        "md5_crypt",
        "password_hash",
        "$1$",
        "[./A-Za-z0-9]{1,8}\\$[./A-Za-z0-9]{22}",
        "https://passlib.readthedocs.io/en/stable/lib/passlib.hash.md5_crypt.html",
    ),
    _t(
        "bcrypt",
        "password_hash",
        ("$2a$", "$2b$", "$2x$", "$2y$"),
        "[0-9]{2}\\$[./A-Za-z0-9]{53}",
        "https://passlib.readthedocs.io/en/stable/lib/passlib.hash.bcrypt.html",
    ),
    _t(
        "sha256_crypt",
        "password_hash",
        "$5$",
        "(?:rounds=[0-9]{1,9}\\$)?[./A-Za-z0-9]{1,16}\\$[./A-Za-z0-9]{43}",
        "https://passlib.readthedocs.io/en/stable/lib/passlib.hash.sha256_crypt.html",
    ),
    _t(
        "sha512_crypt",
        "password_hash",
        "$6$",
        "(?:rounds=[0-9]{1,9}\\$)?[./A-Za-z0-9]{1,16}\\$[./A-Za-z0-9]{86}",
        "https://passlib.readthedocs.io/en/stable/lib/passlib.hash.sha512_crypt.html",
    ),
    _t(
        "cisco_type8",
        "password_hash",
        "$8$",
        "[./A-Za-z0-9]{14}\\$[./A-Za-z0-9]{43}",
        "https://hashcat.net/wiki/doku.php?id=example_hashes",
    ),
    _t(
        "kerberos_asrep",
        "password_hash",
        "$krb5asrep$",
        "[0-9]{2}\\$(?:[^\\s:$]{1,128}:)?[0-9a-f]{32}\\$[0-9a-f]{64,}",
        "https://hashcat.net/wiki/doku.php?id=example_hashes",
    ),
)

BASIC_AUTH_OK = _basic_has_colon
