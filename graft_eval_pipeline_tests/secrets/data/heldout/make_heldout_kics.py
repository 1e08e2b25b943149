"""Writes the tenth held-out secret corpus (kics.jsonl, kics_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kics.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kics.py --clone KICS_CLONE

The source is the test data of the "Passwords And Secrets" query of KICS (Checkmarx/kics,
Apache-2.0; its LICENSE adds that the licence does not cover content marked "Proprietary to CIS",
which these test files are not), Checkmarx's scanner of infrastructure-as-code, whose secrets
engine (`pkg/engine/secrets`, rules in `regex_rules.json`: "Generic Password", "AWS Access Key",
"Slack Webhook", "Asymmetric private key", …) looks for keys, tokens and passwords in Terraform,
CloudFormation, Kubernetes, Ansible, Dockerfile, JSON and other files. COPY is a folder laid out as
the repository holding the files `FILES` names (each at its commit) and, under
`_at/<commit>/<path>`, the versions of the expected results `PAIRED` names; with `--clone` they are
read out of a local git clone with `git show COMMIT:PATH`. Nothing is fetched from the network.

Labels, as the source gives them (`test/secrets_test.go`, `TestSecretsQuery`): the secrets
inspector runs over every `test/positive*.*` file and the test asserts, with
`requireEqualVulnerabilities`, that its findings are exactly those listed in
`test/positive_expected_result.json` (query name, line, file name); it runs over every
`test/negative*.*` file and asserts no finding at all.

- Positives: each finding of the expected results read as the reference (`REFERENCE`, 84
  findings over 56 files), or, for a test file stored at a commit where another version of the
  expected results was read (`PAIRED`), each finding of that version. A file version and the
  labels it is given must belong together, since the files were renumbered and reworded over
  time: a file is used if it was stored at the reference commit itself, or at a paired commit, or
  if it carries the descriptive header the reference's era added (a first comment or `metadata`
  field naming the query and `positive-test`) and every labelled line is marked in the file (a
  `# positive<n>`, `#<n>` or `//#<n>` comment on the line or alone on the line above, or
  `(line <n>)` in the header) or is the only line of the file outside comments that gives a
  value. Other file versions are left out, counted. The text is the labelled line, or for a key
  over several lines the block (a PEM block from BEGIN to END, a PuTTY key file from its first
  line to `Private-MAC`). KICS says only "this line holds a secret", so the secret is the value a
  scanner would capture, by the first rule that applies (`secret_of`, written before the builder
  was first run): the body of a PEM block (its lines between BEGIN and END less the RFC 1421
  header lines and blank lines, joined by a newline); the private lines of a PuTTY key file; the
  password of a URL's `user:password@`; the value of a `password=` field; the value of an
  assignment (`NAME = value`, `NAME: value`, `"NAME": "value"`, `- NAME=value`, `ARG`, `ENV` or
  `export NAME=value`, `NAME := value`): its quoted literal if it starts with a quote, else the
  first quoted literal in it, else the bare value up to white space, a trailing comment removed.
  A labelled line that gives none is left out, counted.
- Negatives: the lines of the negative files, each version labelled "no finding" by the test of
  its own commit. Kept only lines that are look-alikes: not a comment, and either an assignment
  with a value whose name holds a credential word (`pass`, `pwd`, `secret`, `token`,
  `credential`, `private`, `auth`, or ends in `key`) or a run of at least 20 letters, digits or
  `+=_-` holding at least four letters and four digits (a token-like value). The rule was
  tightened once, after the first build kept lines such as `apiVersion: v1`, `KeyName: mykey` and
  `compute_type: BUILD_GENERAL1_SMALL` (a credential word anywhere in the name or the value, `api`
  and `key` included, one letter and one digit); it looks at the texts only. Rule
  `kc.unreported.<file>.<line>`.

Left out as well: files `NOT_COPIED` names, the one finding `LEFT_OUT_FINDINGS` names (a
template of a generated secret, not a value), a text labelled both ways, repeated texts (the first
kept), and secrets that are placeholders by our policy's shape (`placeholder_shape`). Nothing is
filtered by whether our redactor finds them.
"""

# ruff: noqa: E501  (FILES, NOT_COPIED, LEFT_OUT: one repository path and commit a line)
from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "Checkmarx/kics"
LICENCE = "Apache-2.0"

TEST = "assets/queries/common/passwords_and_secrets/test"
EXPECTED = f"{TEST}/positive_expected_result.json"
REFERENCE = "a0ea7c795e854d73a324093d5188e97cccc772e3"
QUERY_PREFIX = "Passwords And Secrets - "

_F = {
    # Each test file as copied (file name in TEST -> commit it was stored under).
    "positive1.yaml": REFERENCE,
    "positive2.yaml": REFERENCE,
    "positive3.yaml": "5259efa1b01c1633342ea1c38fd15faefa891197",
    "positive4.tf": "2bf8de135856ef6f7af5440f66e9b64bbcbc5b98",
    "positive5.tf": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "positive6.dockerfile": "54347f11e14b2a4728a56fc132a706b72d7716c0",
    "positive7.tf": "0debdd0a84ff399d9c779735b44de6b517342ea3",
    "positive8.json": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "positive9.tf": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "positive10.json": "5259efa1b01c1633342ea1c38fd15faefa891197",
    "positive11.yaml": "578c73974bb359847d1847aacfcc31bdbe4dc757",
    "positive12.json": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "positive13.tf": REFERENCE,
    "positive14.tf": "5259efa1b01c1633342ea1c38fd15faefa891197",
    "positive15.tf": REFERENCE,
    "positive16.yaml": "712f56583945bcfabe0d4f3527fbf0ad15b1daea",
    "positive17.tf": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "positive18.tf": REFERENCE,
    "positive19.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive20.tf": REFERENCE,
    "positive21.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive22.tf": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "positive23.tf": REFERENCE,
    "positive24.tf": "b0cf8040c4b745d026e562f74624e3d525262501",
    "positive25.dockerfile": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive26.yaml": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "positive27.yaml": "e6f0663baf6e2c19b1879d106b75e9b2469e184e",
    "positive28.yaml": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive29.tf": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "positive30.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive31.yaml": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive32.yaml": REFERENCE,
    "positive33.yaml": "9781f5ef7815e6da7c95462d4fd225469817fc68",
    "positive34.yaml": "712f56583945bcfabe0d4f3527fbf0ad15b1daea",
    "positive35.yaml": "578c73974bb359847d1847aacfcc31bdbe4dc757",
    "positive36.tf": REFERENCE,
    "positive37.tf": "bd52af4da375d043dc3d065d56940949726e4582",
    "positive38.yaml": "578c73974bb359847d1847aacfcc31bdbe4dc757",
    "positive39.tf": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "positive40.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive41.tf": REFERENCE,
    "positive42.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive43.yaml": REFERENCE,
    "positive44.yaml": "1321068a54ef8d4262296be4ef63acdcea108603",
    "positive45.tf": "0debdd0a84ff399d9c779735b44de6b517342ea3",
    "positive46.yaml": "47cc7efd8b8051a44678342642d6adf7ca168977",
    "positive47.tf": "0debdd0a84ff399d9c779735b44de6b517342ea3",
    "positive48.tf": "039224446d506e755d4636d7a02337e7537e3659",
    "positive49.yml": REFERENCE,
    "positive50.yaml": REFERENCE,
    "positive51.dockerfile": "430c4440f49c159d82441e4d8e6ef2f34a40cae8",
    "positive52.dockerfile": REFERENCE,
    "positive53.json": "26a8f3012dad1347b4f91cbcf372989a418652ce",
    "positive54.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "positive55.json": "54347f11e14b2a4728a56fc132a706b72d7716c0",
    "negative1.yaml": "4f253e452c847b869da1e76f8304ab156296fb03",
    "negative2.yaml": "578c73974bb359847d1847aacfcc31bdbe4dc757",
    "negative3.yaml": REFERENCE,
    "negative4.tf": "4c4d48112e794816fd19f318dcd68b41a22e4479",
    "negative5.dockerfile": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative6.json": "c0851e44ab941c782206282a0edbb161354c8ec3",
    "negative7.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "negative8.tf": "9cb954cb9fc0ce4c51a8a4e1b0780b886f44c481",
    "negative9.tf": "80412ee31548755ae5aa610ddf737e980f09545a",
    "negative10.tf": "0923bdf3ebfcc148b1d61c87135bda3c919cac5c",
    "negative10.yaml": "4f253e452c847b869da1e76f8304ab156296fb03",
    "negative11.tf": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative11.yaml": "4f253e452c847b869da1e76f8304ab156296fb03",
    "negative12.tf": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative13.tf": "54347f11e14b2a4728a56fc132a706b72d7716c0",
    "negative14.tf": REFERENCE,
    "negative15.tf": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative16.tf": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative17.tf": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative18.tf": "2bf8de135856ef6f7af5440f66e9b64bbcbc5b98",
    "negative18.yaml": "777e9eae0324f594b779c724e3112f4fb69d5efc",
    "negative19.yaml": REFERENCE,
    "negative20.yaml": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative21.tf": "777e9eae0324f594b779c724e3112f4fb69d5efc",
    "negative22.tf": "c3abdce7597667141537631b959795fc81e206ee",
    "negative23.tf": "4c4d48112e794816fd19f318dcd68b41a22e4479",
    "negative23.yaml": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "negative24.tf": "4e807e72302e75c22b2ba5b7a2e9b1b8892311e5",
    "negative24.yaml": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative25.yaml": "c01414bdcb3f0e57b360937a178bd5f30aa10f89",
    "negative26.yaml": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "negative27.tf": REFERENCE,
    "negative27.yaml": "9781f5ef7815e6da7c95462d4fd225469817fc68",
    "negative28.tf": "1818fa5a3d6269ea325c0c8f1972c5c9fb1e420e",
    "negative28.yaml": "dce72fd7e8c00eb1b843d5ad2250cf9b44806dd4",
    "negative29.tf": "0f2611b471cb881d8bc1197df05521f4c657fa4e",
    "negative29.yaml": "5cce3fd863a9a5cc37f6e9e26755c502897b9c80",
    "negative30.tf": "9781f5ef7815e6da7c95462d4fd225469817fc68",
    "negative30.yaml": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative31.yaml": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative32.yaml": "1321068a54ef8d4262296be4ef63acdcea108603",
    "negative33.yaml": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "negative34.tf": "0923bdf3ebfcc148b1d61c87135bda3c919cac5c",
    "negative35.dockerfile": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "negative36.tf": "35e3112316db0841aeb990a9ea8a2ff87bbffba5",
    "negative37.tf": "0956301a8212368faaab81684c8b65384db1a964",
    "negative37.yaml": "39276238ba5004d8dcca01dcf8f1bdbfb438286d",
    "negative38.tf": "97fa99355dc8ce81156efe29b49a60f8ff9b9ccd",
    "negative38.yaml": "39276238ba5004d8dcca01dcf8f1bdbfb438286d",
    "negative39.yaml": "0ae68bc65ed2074f3bb28f84829c3844e7e7c18a",
    "negative40.yaml": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative41.yaml": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "negative42.tf": "26e1266941b8fd21aaead78a723144a8f6ff70fc",
    "negative42.yaml": "dce72fd7e8c00eb1b843d5ad2250cf9b44806dd4",
    "negative43.tf": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative44.yml": "c01414bdcb3f0e57b360937a178bd5f30aa10f89",
    "negative45.dockerfile": "5aa563b8d27c2e6fabb5c5daaae853744fc857e4",
    "negative45.yml": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative46.yaml": "19eae21647f538a3684f8a31ce32bfbc95433e9d",
    "negative47.tf": "a144731056d5430c65d1dc76d39c64f503a6e9a0",
    "negative48.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "negative48.yaml": "3e82c9daf46b17b589143569c63b4dcda0e0443a",
    "negative49.dockerfile": "777e9eae0324f594b779c724e3112f4fb69d5efc",
    "negative49.tf": "db8455331afcf10d74e8db7c785d92879743cee3",
    "negative50.dockerfile": REFERENCE,
    "negative50.yaml": "bc20ae6e8071b99d78b85ca499a2794a510b5f01",
    "negative52.yaml": "7d51c6a465912915391341a7dc4076b6f08f708f",
    "negative53.json": "26a8f3012dad1347b4f91cbcf372989a418652ce",
    "negative53.yml": "8d591c04ce59677f9f6659301d3891f403f352b3",
    "negative54.json": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "negative54.tf": "e9a89b207bdd38a07175ea2a081111e366d0eece",
    "negative55.yml": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "negative56.json": "c679c48e85e9091a20755db55889d1a976bd4650",
    "negative56.tf": "777e9eae0324f594b779c724e3112f4fb69d5efc",
    "negative56.yml": "a3c4e50d8eb4524a8a88e57529e3cd5a73374177",
    "negative57.bicep": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "negative57.json": "f457853d42aac31d83cd0b5467f6ed0c1e40f049",
    "negative58.bicep": "84ae6fdeca2f0a93ababe848ac22294fcaf721a1",
    "negative58.json": "0debdd0a84ff399d9c779735b44de6b517342ea3",
    "negative59.bicep": "777e9eae0324f594b779c724e3112f4fb69d5efc",
    "negative59.tf": "2ecdc3c0385f13827907e3f4048789975c136ef0",
    "negative60.tf": "513c29c1fe22840965cda4d0f2c3225308691efb",
    "negative61.tf": "1818fa5a3d6269ea325c0c8f1972c5c9fb1e420e",
    "negative62.tf": "13bf3ae3cc5350e4d0b2cd682f76cea664c4514d",
    "negative63.yaml": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative64.tf": REFERENCE,
    "negative65.tf": "777e9eae0324f594b779c724e3112f4fb69d5efc",
    "negative66.json": REFERENCE,
    "negative67.yaml": "1a6458afa25d5d2445470e12f361b83bcc499fe5",
    "negative68.yaml": REFERENCE,
    "negative69.tf": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative70.yaml": "777e9eae0324f594b779c724e3112f4fb69d5efc",
    "negative71.yaml": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative72.tf": "e482209589767fa0c009874a471a64d0b4475e48",
    "negative73.yaml": "90f0a3d86c39c532baa9f54036cbfa8583d29521",
    "negative74.yaml": "e482209589767fa0c009874a471a64d0b4475e48",
}
FILES: dict[str, str] = {EXPECTED: REFERENCE} | {f"{TEST}/{name}": commit for name, commit in _F.items()}

PAIRED: dict[str, int] = {
    # Other versions of the expected results, read at the commit a copied test file was stored
    # under (commit -> number of findings it lists); copied as _at/<commit>/<EXPECTED>.
    "19eae21647f538a3684f8a31ce32bfbc95433e9d": 70,
    "b0cf8040c4b745d026e562f74624e3d525262501": 58,
}
REFERENCE_FINDINGS = 84

NOT_COPIED: dict[str, str] = {
    # Test files the index holds that were not copied, and why (decided before building).
    "positive56.proto": 'the stored version (3778c88b…) is later than the reference: its lines 11–13, labelled there, are `syntax = "proto3";`, a blank line and a comment; its text (aligned columns of spaces) was not reproduced to its stored length either',
    "negative53.tf": "8,964 characters, nearly all one `description` string of documentation (`<a name=…>` anchors); not copied",
    "negative49.yml": "its stored text could not be reproduced to its stored length (white space at line ends)",
    "negative51.yml": "aligned columns of spaces on every line that could not be reproduced exactly from the stored text",
    "negative52.yml": "its stored text could not be reproduced to its stored length (white space at line ends)",
    "negative60.proto": "aligned columns of spaces on every line that could not be reproduced exactly from the stored text",
    "negative61.proto": "aligned columns of spaces on every line that could not be reproduced exactly from the stored text",
}

LEFT_OUT_FINDINGS: dict[tuple[str, str], str] = {
    # Findings of the expected results not taken, and why (decided before building).
    (
        "positive38.yaml",
        "CloudFormation Secret Template",
    ): 'the line is `SecretStringTemplate: \'{"username":"admin"}\'`, the template of a secret Secrets Manager generates: it names a user, it holds no secret value',
}

LEFT_OUT: dict[str, str] = {
    # Test data of the repository not used, and why (decided before building).
    "unreported lines of the positive files": "the test asserts the whole list of findings, so they are labelled too, but only for file versions that pair with their expected results; not taken, the negative files giving look-alikes enough",
    "other versions of positive_expected_result.json (085e1271…, dd952baf…, bfb904a1…, 8d591c04…, c3c3ed1a…, 5f41db04…)": "read to compare; the reference is a version of the era of the header comments whose commit holds 14 of the copied positive files; 5f41db04… lists no finding for positive27.yaml, whose tokens are commented out at that commit",
    "other versions of test files (positive15.tf at 390dc34d… and 90f0a3d8…, positive24.tf at 9781f5ef…, positive27.yaml at 5f41db04…, positive36.tf and positive37.tf at 2bf8de13…, positive41.tf at 0f2611b4…, positive43.yaml at 1105b4d3…, positive46.yaml, positive49.yml at 4175abaa…, positive50.yaml at 914f1356… (63,810 characters), positive51.dockerfile, positive1.yaml and positive2.yaml at older commits)": "read to find the version stored at the reference commit; the one copied is that version where the index held it",
    "assets/queries/common/passwords_and_secrets/{payloads,temp_tests,newtests}/, temp_sample.yaml, data.json": "not read by TestSecretsQuery (only test/positive*.* and test/negative*.*)",
    "assets/queries/common/passwords_and_secrets/regex_rules.json, metadata.json": "the rules themselves, not test data (not read)",
    "the other queries' tests (assets/queries/**/test)": "infrastructure misconfigurations, not secrets (not read)",
}

_HEADER = re.compile(r"positive-test")
_MARK_INLINE = re.compile(r"(?:#|//)\s*(?:positive\d+|\d+\b)")
_MARK_ALONE = re.compile(r"^\s*(?:#|//)\s*(?:positive\d+|#?\d+\b)")
_LINE_NOTE = re.compile(r"\(line (\d+)(?:/(\d+))?\)")
_COMMENT_LINE = re.compile(r"^\s*(?:#|//)")
_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PEM_HEADER = re.compile(r"^[A-Za-z][\w-]*: ")
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d")
_PUTTY_PRIVATE = re.compile(r"^Private-Lines: (\d+)$")
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\"']+:([^\s@/\"']+)@")
_PASSWORD_FIELD = re.compile(r"(?i)\bpassword=([^;'\"\s)]+)")
_ASSIGNMENT = re.compile(
    r"^\s*(?:-\s+)?(?:(?:export|ARG|ENV)\s+)?[\"']?(?P<name>[A-Za-z_$][\w.$-]*)[\"']?\s*(?::=|=>|=|:)\s*(?P<rest>.*)$"
)
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'|`([^`]*)`")
_TRAILING_COMMENT = re.compile(r"\s+(?:#|//).*$")
_BARE = re.compile(r"[^\s\"'`,;{}\[\]()]+")
_WORD = re.compile(r"(?i)pass|pwd|secret|token|credential|private|auth|key$")
_RUN = re.compile(r"[A-Za-z0-9+=_-]{20,}")
_MIN_KIND = 4  # a token-like run holds at least this many letters and this many digits


@dataclass(frozen=True)
class Finding:
    query: str
    line: int
    file: str


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)


def _source(path: str) -> str:
    return f"{REPO} {path}@{FILES[path]}"


def _expected(text: str, count: int) -> list[Finding]:
    """The findings of one version of the expected results, checked against the count read."""
    entries = json.loads(text)
    assert len(entries) == count == text.count('"queryName"'), (len(entries), count)
    found = []
    for entry in entries:
        assert set(entry) == {"queryName", "severity", "line", "fileName"}, entry
        assert entry["queryName"].startswith(QUERY_PREFIX), entry
        found.append(Finding(entry["queryName"][len(QUERY_PREFIX) :], int(entry["line"]), entry["fileName"]))
    return found


def _has_header(lines: list[str]) -> bool:
    return any(_HEADER.search(line) for line in lines[:8])


def _marked(lines: list[str], number: int) -> bool:
    """Whether the file marks line `number` (1-based) as a finding."""
    line = lines[number - 1]
    if _MARK_INLINE.search(line) and not _COMMENT_LINE.match(line):
        return True
    if number > 1 and _MARK_ALONE.match(lines[number - 2]):
        return True
    for note in _LINE_NOTE.finditer("\n".join(lines[:8])):
        if number in {int(n) for n in note.groups() if n}:
            return True
    return False


def _block(lines: list[str], number: int) -> tuple[str, list[str]] | None:
    """A key over several lines around line `number`: its text and its secret, if there is one."""
    index = number - 1
    if _PUTTY.search(lines[index]):
        end = next(i for i in range(index, len(lines)) if lines[i].startswith("Private-MAC:"))
        body = lines[index : end + 1]
        at = next(i for i, line in enumerate(body) if _PUTTY_PRIVATE.match(line))
        count = int(_PUTTY_PRIVATE.match(body[at])[1])  # type: ignore[index]
        return "\n".join(body), ["\n".join(body[at + 1 : at + 1 + count])]
    begin = next((i for i in range(index, -1, -1) if _BEGIN.search(lines[i])), None)
    if begin is None or any(_END.search(lines[i]) for i in range(begin, index)):
        return None
    end = next(i for i in range(index, len(lines)) if _END.search(lines[i]))
    body = [
        line.strip()
        for line in lines[begin + 1 : end]
        if line.strip() and not _PEM_HEADER.match(line.strip())
    ]
    return "\n".join(lines[begin : end + 1]), ["\n".join(body)]


def _assignment_value(line: str) -> str | None:
    found = _ASSIGNMENT.match(line)
    if not found:
        return None
    rest = found["rest"]
    if rest[:1] in "\"'`":
        quoted = _QUOTED.match(rest)
        return None if quoted is None else next(g for g in quoted.groups() if g is not None)
    if quoted := _QUOTED.search(rest):
        return next(g for g in quoted.groups() if g is not None)
    bare = _BARE.match(_TRAILING_COMMENT.sub("", rest))
    return None if bare is None else bare.group()


def secret_of(line: str) -> str | None:
    """The value a scanner would capture in one labelled line, by the rules above; None if none applies."""
    if url := _URL_PASSWORD.search(line):
        return url.group(1)
    if field_ := _PASSWORD_FIELD.search(line):
        return field_.group(1)
    value = _assignment_value(line)
    return value or None


def _gives_value(line: str) -> bool:
    return not _COMMENT_LINE.match(line) and secret_of(line) is not None


def _look_alike(line: str) -> bool:
    if not line.strip() or _COMMENT_LINE.match(line):
        return False
    found = _ASSIGNMENT.match(line)
    if found and secret_of(line) is not None and _WORD.search(found["name"]):
        return True
    return any(
        len(re.findall(r"[A-Za-z]", run)) >= _MIN_KIND and len(re.findall(r"\d", run)) >= _MIN_KIND
        for run in _RUN.findall(line)
    )


def _labels(copy: Path, name: str, reference: dict[str, list[Finding]], corpus: Corpus) -> list[Finding]:
    """The findings a copied positive file is given, or none if its version does not belong to them."""
    commit = FILES[f"{TEST}/{name}"]
    lines = (copy / TEST / name).read_text("utf-8").split("\n")
    wanted = reference[name]
    if commit == REFERENCE:
        return wanted
    if commit in PAIRED:
        paired = [
            f
            for f in _expected((copy / "_at" / commit / EXPECTED).read_text("utf-8"), PAIRED[commit])
            if f.file == name
        ]
        assert paired, name
        return paired
    if not _has_header(lines):
        corpus.left_out["finding on a file version older than the expected results, unpaired"] += len(wanted)
        return []
    valued = {i for i, line in enumerate(lines, 1) if _gives_value(line)}
    numbers = {f.line for f in wanted}
    if all(n <= len(lines) and _marked(lines, n) for n in numbers) or valued == numbers:
        return wanted
    corpus.left_out["finding on a file version of the reference's era, its line not marked"] += len(wanted)
    return []


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    reference: dict[str, list[Finding]] = {}
    for finding in _expected((copy / EXPECTED).read_text("utf-8"), REFERENCE_FINDINGS):
        reference.setdefault(finding.file, []).append(finding)
    copied = {path.rsplit("/", 1)[1] for path in FILES if path != EXPECTED}
    assert set(reference) <= copied | set(NOT_COPIED), sorted(set(reference) - copied - set(NOT_COPIED))
    assert {n for n in copied if n.startswith("positive")} == set(reference) - set(NOT_COPIED)
    assert all(n.startswith(("positive", "negative")) for n in copied)
    positives: list[tuple[str, list[str], str, str]] = []  # text, secrets, query, path
    negatives: list[tuple[str, str, str]] = []  # text, rule, path
    for name in sorted(reference, key=lambda n: int(re.sub(r"\D", "", n))):
        if name in NOT_COPIED:
            corpus.left_out[f"finding on {name} (NOT_COPIED)"] += len(reference[name])
            continue
        path = f"{TEST}/{name}"
        lines = (copy / path).read_text("utf-8").split("\n")
        for finding in _labels(copy, name, reference, corpus):
            if (name, finding.query) in LEFT_OUT_FINDINGS:
                corpus.left_out["finding LEFT_OUT_FINDINGS names"] += 1
                continue
            assert 1 <= finding.line <= len(lines), (name, finding)
            block = _block(lines, finding.line)
            if block is not None:
                text, secrets = block
            else:
                text = lines[finding.line - 1]
                value = secret_of(text)
                if value is None:
                    corpus.left_out["labelled line that gives no value"] += 1
                    continue
                secrets = [value]
            positives.append((text, secrets, finding.query, path))
    for name in sorted(n for n in copied if n.startswith("negative")):
        path = f"{TEST}/{name}"
        stem = name.replace(".", "_")
        for number, line in enumerate((copy / path).read_text("utf-8").split("\n"), 1):
            if _look_alike(line):
                negatives.append((line, f"kc.unreported.{stem}.{number}", path))
            elif line.strip():
                corpus.left_out["line of a negative file that is no look-alike"] += 1
    labels: dict[str, set[bool]] = {}
    for text, *_ in positives:
        labels.setdefault(text, set()).add(True)
    for text, *_ in negatives:
        labels.setdefault(text, set()).add(False)
    seen: set[str] = set()
    counters: Counter[str] = Counter()
    for text, secrets, query, path in positives:
        if len(labels[text]) > 1:
            corpus.left_out["text labelled both ways"] += 1
            continue
        if text in seen:
            corpus.left_out["repeated text (a finding)"] += 1
            continue
        seen.add(text)
        assert secrets and all(s and s in text for s in secrets), (query, text[:60])
        kept = [s for s in secrets if not placeholder_shape(s)]
        if not kept:
            corpus.left_out["placeholder by shape"] += 1
            continue
        rule = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-")
        counters[rule] += 1
        entry: dict[str, object] = {"line": text}
        entry |= {"secret": kept[0]} if len(kept) == 1 else {"secrets": kept}
        extra = {v: text.count(v) - 1 for v in kept if text.count(v) > 1}
        if extra:
            entry["also_in_line"] = extra
        entry |= {"rule": f"kc.{rule}.{counters[rule]}", "source": _source(path), "licence": LICENCE}
        corpus.positives.append(entry)
    for text, rule, path in negatives:
        if len(labels[text]) > 1:
            corpus.left_out["text labelled both ways"] += 1
            continue
        if text in seen:
            corpus.left_out["repeated text (a look-alike)"] += 1
            continue
        seen.add(text)
        corpus.negatives.append({"line": text, "rule": rule, "source": _source(path), "licence": LICENCE})
    corpus.left_out = +corpus.left_out
    return corpus


def copy_from_clone(clone: Path, into: Path) -> Path:
    """Each file of `FILES` and `PAIRED` out of the git clone `clone`, at its commit, written under `into`."""
    wanted = [(path, commit, into / path) for path, commit in FILES.items()]
    wanted += [(EXPECTED, commit, into / "_at" / commit / EXPECTED) for commit in PAIRED]
    for path, commit, out in wanted:
        shown = subprocess.run(
            ["git", "-C", str(clone), "show", f"{commit}:{path}"], check=True, capture_output=True
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(shown.stdout)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("copy", nargs="?", type=Path, help="a folder laid out as the repository")
    source.add_argument("--clone", type=Path, help="a git clone of Checkmarx/kics")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("kics.jsonl", corpus.positives),
        ("kics_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    print(f"{len(corpus.positives)} positives of {len(families)} rules; {len(corpus.negatives)} negatives")
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
