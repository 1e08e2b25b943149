"""docs/case-sets.md "Trying export offline" runs as written.

The fake GitHub demo server from the first block (`python -m graft_eval_pipeline_tests.fake_github
--serve`, on a free port instead of 8765), then the second block in bash (init, export, validate,
show, run), then the export again (it resumes: every case present, no stage-2 request). Loopback
only, a temporary set folder.
"""

from __future__ import annotations

import os
import re
import select
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.sets.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # the walkthrough's commands in subprocesses

PAGE = REPO_ROOT / "docs" / "case-sets.md"
HEADING = "## Trying export offline"
PAGE_PORT = "8765"
VENV_BIN = f"{Path(sys.executable).parent}/"


def walkthrough() -> tuple[str, str]:
    """The section's two bash blocks: the server command and the steps."""
    section = PAGE.read_text(encoding="utf-8").split(HEADING, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 2, "the section has a server block and a steps block"
    return blocks[0], blocks[1]


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def as_here(text: str, port: str) -> str:
    """The page's text with this interpreter's venv and the free port."""
    assert ".venv/bin/" in text
    return text.replace(".venv/bin/", VENV_BIN).replace(PAGE_PORT, port)


def environment(tmp_path: Path) -> dict[str, str]:
    """This process's environment without keys, tokens or a set folder; temp files in tmp_path."""
    drop = ("GRAFT_", "GITHUB_", "ANTHROPIC_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(TMPDIR=str(tmp_path), PYTHONPATH=str(REPO_ROOT), NO_COLOR="1")
    return env


@contextmanager
def demo_server(command: str, env: dict[str, str]) -> Iterator[str]:
    """Start the page's server command; yield the first line it prints (its URL)."""
    args = shlex.split(command.split("#", 1)[0])
    proc = subprocess.Popen(args, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "the demo server printed nothing within 60 s"
        yield proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_docs_export_walkthrough_runs_as_written(tmp_path: Path) -> None:
    server, steps = walkthrough()
    port = free_port()
    env = environment(tmp_path)
    assert PAGE_PORT in server and PAGE_PORT in steps
    with demo_server(as_here(server, port), env) as first_line:
        assert f"http://127.0.0.1:{port}" in first_line
        export = next(line for line in steps.splitlines() if " export --set " in line)
        script = as_here(steps, port) + as_here(export, port) + "\n"
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    out = done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in out + done.stderr
    assert "created pilot set pilot-demo" in out and "encrypted with key" in out
    assert "exported: 7, already present: 0, gone (404/410): 0" in out
    assert "candidates: 7 (merged in range: 8, left out by --author agent: 1)" in out
    assert "set pilot-demo: 7 cases, 0 labeled" in out  # validate
    assert "title   Round discounts half-even" in out and "issue #7" in out  # show decrypts one
    assert "set pilot-demo (pilot): 7 cases, 0 scored, mode fake, complete true" in out  # run
    assert "exported: 0, already present: 7" in out and "stage 2: 0)" in out  # the second export
    sets = [p for p in tmp_path.iterdir() if (p / "pilot-demo" / "set.json").is_file()]
    assert len(sets) == 1 and len(list((sets[0] / "pilot-demo" / "cases").iterdir())) == 7
