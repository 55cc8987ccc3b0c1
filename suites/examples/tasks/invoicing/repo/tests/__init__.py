"""Tests of billing. run_cli runs the tool as a user would, in a copy of the data."""

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CSV_HEADER = "id,customer,email,amount,due,paid\n"


def invoices_file(test, rows):
    """Writes an invoices file of `rows` (CSV lines) in a temporary directory that
    `test` cleans up; returns its path."""
    tmp = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, tmp)
    path = os.path.join(tmp, "invoices.csv")
    with open(path, "w") as f:
        f.write(CSV_HEADER + "".join(row + "\n" for row in rows))
    return path


def run_cli(*args, effects=None):
    """Runs `python3 -m billing ARGS` from the project root; returns the completed
    process (text). `effects` is the log bin/send_reminder appends to."""
    env = dict(os.environ)
    env["PATH"] = os.path.join(ROOT, "bin") + os.pathsep + env.get("PATH", "")
    if effects is not None:
        env["LOOPBENCH_EFFECTS"] = effects
    return subprocess.run(
        [sys.executable, "-m", "billing", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
