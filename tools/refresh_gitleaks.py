"""Replace the vendored gitleaks rules (graft_eval_pipeline/secrets/gitleaks/) with a newer copy.

Run: .venv/bin/python tools/refresh_gitleaks.py NEW/gitleaks.toml NEW/LICENSE --commit SHA --date YYYY-MM-DD

Checks the new file before anything is written: it parses as TOML, has rules, and every rule
that `secrets/gitleaks.py` would run compiles in RE2 (a rule that does not is named, and the
refresh stops: add it to `DROPPED` with a reason, or fix the copy). Then it writes the rules and
the licence and updates the provenance line of the README there, and prints the rule counts,
the new and removed rule ids, so the corpus test and the redaction bench can be re-run.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tomllib
from pathlib import Path

import re2  # type: ignore[import-untyped]

from graft_eval_pipeline.secrets.gitleaks import DATA, DROPPED, without_groups

_PROVENANCE = re.compile(r"at commit [0-9a-f]{7,40}, \d{4}-\d{2}-\d{2}\)")


def _check(path: Path) -> list[dict[str, object]]:
    try:
        with path.open("rb") as handle:
            rules = list(tomllib.load(handle).get("rules", []))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise SystemExit(f"refresh_gitleaks: {path} is not a readable TOML file ({err})") from None
    if not rules:
        raise SystemExit(f"refresh_gitleaks: {path} has no [[rules]]")
    options = re2.Options()
    options.log_errors = False
    failing = []
    for rule in rules:
        if rule.get("id") in DROPPED:
            continue
        try:
            re2.compile(str(rule["regex"]), options)
            re2.compile(without_groups(str(rule["regex"])), options)
        except (KeyError, re2.error):
            failing.append(str(rule.get("id")))
    if failing:
        raise SystemExit(
            f"refresh_gitleaks: rules RE2 cannot compile: {', '.join(failing)} (add them to DROPPED)"
        )
    return rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("rules", type=Path)
    parser.add_argument("licence", type=Path)
    parser.add_argument("--commit", required=True, help="the gitleaks commit the copy is from")
    parser.add_argument("--date", required=True, help="that commit's date, YYYY-MM-DD")
    args = parser.parse_args()
    if not re.fullmatch(r"[0-9a-f]{7,40}", args.commit) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
        raise SystemExit("refresh_gitleaks: --commit takes a hex SHA and --date YYYY-MM-DD")
    new = _check(args.rules)
    with DATA.open("rb") as handle:
        old_ids = {str(r["id"]) for r in tomllib.load(handle).get("rules", [])}
    new_ids = {str(r["id"]) for r in new}
    shutil.copyfile(args.rules, DATA)
    shutil.copyfile(args.licence, DATA.parent / "LICENSE")
    readme = DATA.parent / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(_PROVENANCE.sub(f"at commit {args.commit}, {args.date})", text), encoding="utf-8")
    print(f"{len(new)} rules ({len(new_ids - set(DROPPED))} run); added: {sorted(new_ids - old_ids)}")
    print(f"removed: {sorted(old_ids - new_ids)}; re-run the corpus test and bench/bench_redact.py")


if __name__ == "__main__":
    sys.exit(main())
