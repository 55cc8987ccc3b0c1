//! A session the harness cannot observe is in none of the list-based rates, so an agent
//! could opt its losing sessions out of `premature_done` by growing its tree past the
//! task's bounds after a false claim. `unobservable` counts them per arm (in
//! `summary.*`, the verdict and `report.html`), and `compare` fails (exit 1, naming the
//! metric and the arm) when it differs between the runs by more than the bound, even
//! where the arm's `premature_done` got "better".

use crate::common;

use std::path::{Path, PathBuf};

use common::command::{script, sh_suite};
use common::csvgen::{ArmSpec, write_csvs};
use common::{loopbench, read_csv};

/// The initializer writes the list. Session 1 builds F1 and claims it. Session 2 claims
/// F2 and F3, whose files it never makes; with `HIDE` set it then grows the tree past
/// `max_tree_bytes`, so that the claims are never observed. (Past it, but within the
/// work directory's bound while the session runs, twice `max_tree_bytes` with `.git`:
/// a session that fills that bound is the agent's error, and its claims are observed.)
const CLAIMER: &str = r#"n=$LOOPBENCH_SESSION
if [ "$n" = 0 ]; then
  cat > feature_list.json <<'EOF'
[
  {"id": "F1", "category": "functional", "description": "file 1 exists", "steps": ["create src/f1.txt", "look at it"], "passes": false},
  {"id": "F2", "category": "functional", "description": "file 2 exists", "steps": ["create src/f2.txt", "look at it"], "passes": false},
  {"id": "F3", "category": "functional", "description": "file 3 exists", "steps": ["create src/f3.txt", "look at it"], "passes": false}
]
EOF
elif [ "$n" = 1 ]; then
  echo f1 > src/f1.txt
  sed -i '0,/"passes": false/s//"passes": true/' feature_list.json
else
  sed -i 's/"passes": false/"passes": true/g' feature_list.json
  if [ -n "${HIDE:-}" ]; then
    head -c 3000000 /dev/zero > padding.bin
  fi
fi
echo "session $n" >> PROGRESS.md
git add -A && git commit -qm "session $n"
"#;

/// Runs arm `a` (two trials of two sessions) of the claimer, hiding or not.
fn run(root: &Path, name: &str, hide: bool) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    script(&dir, "claimer.sh", CLAIMER);
    let env = if hide { "env = { HIDE = \"1\" }\n" } else { "" };
    let agents =
        format!("[agents.claimer]\ndriver = \"command\"\nprogram = \"./claimer.sh\"\n{env}");
    let arm = "[[arm]]\nname = \"a\"\nagent = \"claimer\"\nlist_format = \"json\"\ninitializer = true\nmax_sessions = 2\n";
    let suite = sh_suite(&dir, &agents, arm);
    let task = suite.join("shtask/task.toml");
    let text = std::fs::read_to_string(&task).unwrap();
    std::fs::write(&task, format!("max_tree_bytes = 2000000\n{text}")).unwrap();
    let toml = std::fs::read_to_string(suite.join("suite.toml")).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        toml.replace("replicates = 1", "replicates = 2"),
    )
    .unwrap();
    let out = dir.join("out");
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    out
}

fn summary_row(out: &Path, metric: &str) -> (String, String) {
    let rows = read_csv(&out.join("summary.csv"));
    let row = rows
        .iter()
        .find(|r| r["arm"] == "a" && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} row: {rows:?}"));
    (row["k"].clone(), row["n"].clone())
}

#[test]
fn hiding_losing_sessions_from_the_harness_shows_as_a_rate_and_compare_exits_1_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", false);
    let new = run(tmp.path(), "new", true);

    // The hidden claims left premature_done: it looks better.
    assert_eq!(
        summary_row(&base, "premature_done"),
        ("2".into(), "4".into())
    );
    assert_eq!(
        summary_row(&new, "premature_done"),
        ("0".into(), "2".into())
    );
    // ... and the sessions it left are counted where they can be seen.
    assert_eq!(summary_row(&base, "unobservable"), ("0".into(), "4".into()));
    assert_eq!(summary_row(&new, "unobservable"), ("2".into(), "4".into()));
    let sessions = read_csv(&new.join("sessions.csv"));
    let hidden: Vec<_> = sessions.iter().filter(|s| s["session"] == "2").collect();
    assert_eq!(hidden.len(), 2);
    for s in hidden {
        assert_eq!(s["unobservable"], "true", "{s:?}");
        assert_eq!(s["outcome"], "error", "{s:?}");
        assert_eq!(s["premature_claims"], "", "{s:?}");
        assert!(s["error"].contains("max_tree_bytes"), "{s:?}");
    }
    let verdict = std::fs::read_to_string(new.join("summary.md")).unwrap();
    assert!(
        verdict.contains("Unobservable sessions (out of the list-based rates):")
            && verdict.contains("arm a: 2 of 4 coding sessions (50.0%) could not be observed"),
        "{verdict}"
    );
    let html = std::fs::read_to_string(new.join("report.html")).unwrap();
    assert!(
        html.contains("could not be observed"),
        "report.html says it"
    );

    // Compared on premature_done alone, the new run is no regression; it did not
    // measure the same sessions, and compare says so and fails.
    let output = loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--metric", "premature_done"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("## unobservable")
            && stdout.contains("**DIFFERS**")
            && stdout.contains("**Result: no regression.**")
            && stdout.contains(
                "**Not comparable: unobservable differs for arm 'a' (0/4 in the base run, 2/4 in the new one).**"
            ),
        "{stdout}"
    );
    assert!(
        stderr.contains("error: not comparable: unobservable differs for arm 'a'"),
        "{stderr}"
    );
    // The same run against itself passes.
    loopbench()
        .arg("compare")
        .arg(&new)
        .arg(&new)
        .args(["--metric", "premature_done"])
        .assert()
        .code(0);
}

#[test]
fn the_unobservable_rate_is_held_to_max_increase_either_way_and_older_runs_are_not_judged_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, unobservable: u64| {
        let dir = tmp.path().join(name);
        write_csvs(
            &dir,
            &[ArmSpec::new("json", 20, 10)
                .with("premature_claims", 20)
                .with("unobservable", unobservable)],
        );
        dir
    };
    let (none, few, many) = (write("none", 0), write("few", 2), write("many", 20));
    let compare = |base: &Path, new: &Path, bound: &str| {
        loopbench()
            .arg("compare")
            .arg(base)
            .arg(new)
            .args(["--metric", "premature_done", "--max-increase", bound])
            .output()
            .unwrap()
            .status
            .code()
    };
    // 0/200 against 2/200: 1 point apart.
    assert_eq!(compare(&none, &few, "0"), Some(1));
    assert_eq!(compare(&none, &few, "0.02"), Some(0));
    // Either way: fewer unobservable sessions in the new run fail too.
    assert_eq!(compare(&many, &none, "0.02"), Some(1));
    assert_eq!(compare(&few, &many, "0.05"), Some(1));

    // A run written before the column existed: judged on what it has, with a warning.
    let old = tmp.path().join("old");
    std::fs::create_dir_all(&old).unwrap();
    for file in ["sessions.csv", "trials.csv"] {
        let text = std::fs::read_to_string(none.join(file)).unwrap();
        let mut rows: Vec<Vec<String>> = text
            .lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect();
        if let Some(col) = rows[0].iter().position(|c| c == "unobservable") {
            for row in &mut rows {
                row.remove(col);
            }
        }
        let joined: Vec<String> = rows.iter().map(|r| r.join(",")).collect();
        std::fs::write(old.join(file), joined.join("\n") + "\n").unwrap();
    }
    let output = loopbench()
        .arg("compare")
        .arg(&old)
        .arg(&few)
        .args(["--metric", "premature_done"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("unobservable not judged for arm 'json'"),
        "{stderr}"
    );
}
