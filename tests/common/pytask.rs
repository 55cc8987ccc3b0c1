//! A real Python task (standard library only) and command agents that work on it, for
//! tests of checks the code under test tries to forge: feature `Fn` passes when
//! `ledger/fn.py` sets `VALUE = n`, and each pristine test file holds two tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::command::{Ran, script};
use super::{loopbench, read_jsonl};

/// The default verify command of feature `n`.
pub fn unittest_module(n: u32) -> String {
    format!("python3 -m unittest -q tests.test_f{n}")
}

/// The task `pytask` of three features in `root`, each checked by `verify(n)`.
pub fn py_task_with(root: &Path, verify: &dyn Fn(u32) -> String) -> PathBuf {
    let dir = root.join("pytask");
    for sub in ["repo/ledger", "repo/tests", "oracle/tests"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("repo/ledger/__init__.py"), "").unwrap();
    std::fs::write(dir.join("repo/tests/__init__.py"), "").unwrap();
    std::fs::write(dir.join("oracle/tests/__init__.py"), "").unwrap();
    let mut toml = String::from(
        "name = \"pytask\"\ngoal = \"three values\"\ntests = { glob = \"tests/**/*.py\", count_pattern = '^\\s*def test_' }\n",
    );
    for n in 1..=3 {
        let test = format!(
            "import unittest\n\nfrom ledger import f{n}\n\n\nclass TestF{n}(unittest.TestCase):\n    def test_value(self):\n        self.assertEqual(f{n}.VALUE, {n})\n\n    def test_positive(self):\n        self.assertGreater(f{n}.VALUE, 0)\n"
        );
        std::fs::write(dir.join(format!("repo/tests/test_f{n}.py")), &test).unwrap();
        std::fs::write(dir.join(format!("oracle/tests/test_f{n}.py")), &test).unwrap();
        let command = toml::Value::String(verify(n)).to_string();
        toml += &format!(
            "\n[[feature]]\nid = \"F{n}\"\ndescription = \"value {n}\"\nverify = {command}\n"
        );
    }
    std::fs::write(dir.join("task.toml"), toml).unwrap();
    dir
}

/// [`py_task_with`] the default verify commands.
pub fn py_task(root: &Path) -> PathBuf {
    py_task_with(root, &unittest_module)
}

/// An `[agents.NAME]` table running `./PROGRAM`.
pub fn agent(name: &str, program: &str) -> String {
    format!(
        "[agents.{name}]\ndriver = \"command\"\nprogram = \"./{program}\"\ntimeout = \"60s\"\n\n"
    )
}

/// `list PASSES ID...` writes the JSON feature list with those entries.
pub const LIST: &str = r#"
list() {
  passes=$1; shift; sep=""
  { printf '['
    for id in "$@"; do
      printf '%s{"id": "%s", "category": "functional", "description": "value %s", "steps": [], "passes": %s}' "$sep" "$id" "$id" "$passes"
      sep=", "
    done
    printf ']\n'; } > feature_list.json
}
"#;

/// The initializer writes the list, nothing claimed; the coding session does its work
/// (the attack) and then claims every entry and commits everything.
pub fn py_agent(work: &str) -> String {
    format!(
        r#"{LIST}
if [ "$LOOPBENCH_SESSION_KIND" = initializer ]; then
  list false F1 F2 F3
  echo "list written" > PROGRESS.md
else
{work}
  list true F1 F2 F3
  echo "all three done" > PROGRESS.md
fi
git add -A && git commit -qm done
"#
    )
}

/// The work done: every feature implemented.
pub const HONEST: &str = r#"
for n in 1 2 3; do echo "VALUE = $n" > "ledger/f$n.py"; done
"#;

/// Runs a suite over `pytask` (already written in `tmp`) with one arm per `(name,
/// session body)`, each an initializer and one coding session of [`py_agent`].
pub fn run_py_arms(tmp: &Path, arms: &[(&str, &str)], extra_args: &[&str]) -> Ran {
    run_py_arms_with(tmp, arms, extra_args, "")
}

/// [`run_py_arms`], with `agent_lines` added to every agent's table
/// (`sandbox = "bwrap"`: the agents, and so their checks, sandboxed).
pub fn run_py_arms_with(
    tmp: &Path,
    arms: &[(&str, &str)],
    extra_args: &[&str],
    agent_lines: &str,
) -> Ran {
    run_py_arms_with_keys(tmp, "", agent_lines, arms, extra_args)
}

/// [`run_py_arms_with`], with `suite_keys` (TOML lines) among the suite's top-level keys.
pub fn run_py_arms_with_keys(
    tmp: &Path,
    suite_keys: &str,
    agent_lines: &str,
    arms: &[(&str, &str)],
    extra_args: &[&str],
) -> Ran {
    let mut agents = String::new();
    let mut tables = String::new();
    for (name, body) in arms {
        script(tmp, &format!("{name}.sh"), &py_agent(body));
        agents +=
            &agent(name, &format!("{name}.sh")).replacen("\n\n", &format!("\n{agent_lines}\n"), 1);
        tables += &format!(
            "[[arm]]\nname = \"{name}\"\nagent = \"{name}\"\nlist_format = \"json\"\ninitializer = true\nmax_sessions = 1\n\n"
        );
    }
    std::fs::write(
        tmp.join("suite.toml"),
        format!(
            "name = \"forged\"\nseed = 5\nreplicates = 1\ntasks = [\"pytask\"]\n{suite_keys}\n{agents}\n{tables}"
        ),
    )
    .unwrap();
    let out = tmp.join("out");
    let output = loopbench()
        .arg("run")
        .arg(tmp)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .args(extra_args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "run failed: {stderr}");
    Ran {
        out: out.clone(),
        sessions: super::read_csv(&out.join("sessions.csv")),
        trials: super::read_csv(&out.join("trials.csv")),
        stderr,
    }
}

/// The coding session of a one-coding-session arm.
pub fn only_session<'a>(ran: &'a Ran, arm: &str) -> &'a BTreeMap<String, String> {
    let rows: Vec<_> = ran
        .arm(arm)
        .into_iter()
        .filter(|s| s["kind"] == "coding")
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0]
}

/// The evidence of session `session` of `arm`.
pub fn evidence(out: &Path, arm: &str, session: u64) -> Value {
    read_jsonl(&out.join("sessions.jsonl"))
        .into_iter()
        .find(|s| s["arm"] == arm && s["session"] == session)
        .unwrap_or_else(|| panic!("no session {session} of {arm}"))["evidence"]
        .clone()
}

/// The reasons of the failed checks in a session's evidence.
pub fn failed_reasons(out: &Path, arm: &str, session: u64) -> Vec<String> {
    evidence(out, arm, session)["failed_checks"]
        .as_array()
        .map(|checks| {
            checks
                .iter()
                .map(|c| c["reason"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}
