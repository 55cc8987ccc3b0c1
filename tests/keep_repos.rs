//! `--keep-repos`: every trial leaves `repos/<trial_id>.bundle`, a history the harness
//! made from the trees it observed: one root commit for the starting tree, then one
//! commit per session, authored by the session. Cloning it and reading `git log -p`
//! shows what each session did. Resumed runs, any `--jobs` and merged shards give the
//! same history.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{loopbench, read_jsonl, repo_root};
use serde_json::Value;

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(git_bytes(dir, args)).unwrap()
}

pub(crate) fn git_bytes(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out.stdout
}

pub(crate) fn clone(bundle: &Path, into: &Path) -> PathBuf {
    assert!(bundle.is_file(), "no bundle at {}", bundle.display());
    let out = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(bundle)
        .arg(into)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    into.to_path_buf()
}

/// Checks every trial of `out`: its bundle clones, has one commit per session after
/// the root, each authored by its session and holding the tree its evidence names.
fn assert_bundles_match_records(out: &Path, scratch: &Path) -> usize {
    let sessions = read_jsonl(&out.join("sessions.jsonl"));
    let trials = read_jsonl(&out.join("trials.jsonl"));
    assert!(!trials.is_empty());
    for (i, trial) in trials.iter().enumerate() {
        let id = trial["trial_id"].as_str().unwrap();
        let mut mine: Vec<&Value> = sessions.iter().filter(|s| s["trial_id"] == id).collect();
        mine.sort_by_key(|s| s["session"].as_u64());
        let repo = clone(
            &out.join("repos").join(format!("{id}.bundle")),
            &scratch.join(format!("clone-{i}")),
        );
        let log = git(&repo, &["log", "--reverse", "--format=%an <%ae>|%T|%s"]);
        let commits: Vec<&str> = log.lines().collect();
        assert_eq!(
            commits.len(),
            mine.len() + 1,
            "{id}: a root commit and one per session\n{log}"
        );
        assert!(commits[0].starts_with("loopbench <loopbench@localhost>|"));
        for (commit, record) in commits[1..].iter().zip(&mine) {
            let n = record["session"].as_u64().unwrap();
            let parts: Vec<&str> = commit.split('|').collect();
            assert_eq!(parts[0], format!("session-{n} <session-{n}@loopbench>"));
            assert_eq!(
                parts[1],
                record["evidence"]["tree"].as_str().unwrap(),
                "{id} s{n}"
            );
            assert!(parts[2].starts_with(&format!("session {n} (")), "{commit}");
        }
    }
    trials.len()
}

#[test]
fn a_replayed_trace_leaves_a_bundle_whose_log_shows_each_session() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let root = repo_root().join("suites/examples");
    loopbench()
        .arg("replay")
        .arg(root.join("traces/latefees-every-metric.jsonl"))
        .arg("--task")
        .arg(root.join("tasks/latefees"))
        .args(["--format", "json", "--keep-repos", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(assert_bundles_match_records(&out, tmp.path()), 1);
    let repo = tmp.path().join("clone-0");
    // Session 2 deleted the export tests and reworded F3; its commit shows both.
    let second = git(&repo, &["log", "-p", "--author=session-2@", "-1"]);
    assert!(second.contains("deleted file mode"), "{second}");
    assert!(second.contains("+++ /dev/null"), "{second}");
    assert!(second.contains("tests removed: tests/test_export.py (3 -> 0)"));
    assert!(second.contains("-    \"description\": \"Export invoices as CSV with amount"));
    // The mangled list of the last session is what the last commit holds.
    assert_eq!(
        std::fs::read_to_string(repo.join("feature_list.json")).unwrap(),
        "{ all features: done }\n"
    );
}

#[test]
fn a_relative_out_directory_gets_its_bundles_where_it_says() {
    let tmp = tempfile::tempdir().unwrap();
    let root = repo_root().join("suites/examples");
    loopbench()
        .current_dir(tmp.path())
        .arg("replay")
        .arg(root.join("traces/latefees-every-metric.jsonl"))
        .arg("--task")
        .arg(root.join("tasks/latefees"))
        .args(["--format", "json", "--keep-repos", "--out", "results/rel"])
        .assert()
        .success();
    assert_eq!(
        assert_bundles_match_records(&tmp.path().join("results/rel"), tmp.path()),
        1
    );
}

fn run_args(out: &Path) -> Vec<String> {
    [
        "run",
        &repo_root()
            .join("suites/seed-replication")
            .display()
            .to_string(),
        "--arms",
        "json,crash",
        "--replicates",
        "2",
        "--seed",
        "5",
        "--quiet",
        "--keep-repos",
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from)
    .to_vec()
}

fn heads(out: &Path) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = std::fs::read_dir(out.join("repos"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let heads = git(out, &["bundle", "list-heads", &p.display().to_string()]);
            (p.file_name().unwrap().to_string_lossy().into_owned(), heads)
        })
        .collect();
    found.sort();
    found
}

#[test]
fn a_run_killed_and_resumed_leaves_the_same_bundles_as_one_run_at_other_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("reference");
    loopbench()
        .args(run_args(&reference))
        .args(["--jobs", "2"])
        .assert()
        .success();
    let trials = assert_bundles_match_records(&reference, tmp.path());
    // One bundle per trial, nothing else.
    assert_eq!(
        std::fs::read_dir(reference.join("repos")).unwrap().count(),
        trials
    );
    // An initializer session's commit adds the list it wrote.
    let first = git(
        &tmp.path().join("clone-0"),
        &["log", "--stat", "--author=session-0@"],
    );
    assert!(first.contains("feature_list.json"), "{first}");

    let out = tmp.path().join("killed");
    let total = read_jsonl(&reference.join("sessions.jsonl")).len();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("loopbench"))
        .args(run_args(&out))
        .args(["--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let recorded = |p: &Path| {
        std::fs::read_to_string(p.join("sessions.jsonl")).map_or(0, |t| t.lines().count())
    };
    let deadline = Instant::now() + Duration::from_secs(300);
    while recorded(&out) < total / 3 {
        assert!(
            Instant::now() < deadline,
            "the run never got a third of the way"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it was killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    loopbench()
        .args(["resume", "--quiet"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(heads(&out), heads(&reference));

    // Shards keep their trials' bundles, and `merge` gathers them.
    let mut shards = Vec::new();
    for shard in ["1/2", "2/2"] {
        let dir = tmp.path().join(format!("shard-{}", &shard[..1]));
        loopbench()
            .args(run_args(&dir))
            .args(["--shard", shard])
            .assert()
            .success();
        shards.push(dir);
    }
    let merged = tmp.path().join("merged");
    loopbench()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
    assert_eq!(heads(&merged), heads(&reference));
}

/// Commits the value passed as `LB_BUNDLE_KEY` every way a tree can hold it: in a
/// `.env`, a file's name, a symlink's target, a binary file, and a CLI's JSON config
/// (with a quote in it, JSON-escaped); and does its feature.
const SECRET_COMMITTER: &str = r#"
printf 'KEY=%s\n' "$LB_BUNDLE_KEY" > .env
mkdir -p "config/$LB_BUNDLE_KEY"
printf '{"key": "%s", "quoted": "%s\\"x"}\n' "$LB_BUNDLE_KEY" "$LB_BUNDLE_KEY" > "config/$LB_BUNDLE_KEY/cli.json"
ln -sf "/run/$LB_BUNDLE_KEY" link
printf '\000\001%s\377' "$LB_BUNDLE_KEY" > blob.bin
echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
git add -A && git commit -qm "key $LB_BUNDLE_KEY"
exit 0
"#;

/// Every file under `dir` whose bytes hold `needle`.
pub(crate) fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            std::fs::read(e.path())
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
        })
        .map(|e| e.path().to_path_buf())
        .collect()
}

#[test]
fn a_value_passed_by_pass_env_that_the_agent_commits_is_in_no_bundle_nor_any_stored_file() {
    if !common::require_bwrap() {
        return;
    }
    const KEY: &str = "sk-bundle-secret-8675309";
    let tmp = common::visible_tempdir();
    let root = tmp.path();
    common::command::script(root, "committer.sh", SECRET_COMMITTER);
    let agents = "[agents.committer]\ndriver = \"command\"\nprogram = \"./committer.sh\"\n\
                  timeout = \"60s\"\nsandbox = \"bwrap\"\npass_env = [\"LB_BUNDLE_KEY\"]\n";
    let suite = common::command::sh_suite(
        root,
        agents,
        &common::command::arm("committer", "committer", 2, ""),
    );
    let out = root.join("out");
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--keep-repos", "--out"])
        .arg(&out)
        .env("LB_BUNDLE_KEY", KEY)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    loopbench()
        .args(["report", "--html"])
        .arg(&out)
        .assert()
        .success();
    let sessions = read_jsonl(&out.join("sessions.jsonl"));
    assert_eq!(sessions.len(), 2, "{sessions:?}");

    let repo = clone(
        &out.join("repos/committer:shtask:0.bundle"),
        &root.join("c"),
    );
    let log = git(&repo, &["log", "-p", "--all", "--format=%an|%s%n%b"]);
    let objects = git_bytes(
        &repo,
        &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
    );
    let holds =
        |bytes: &[u8], needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    for (what, bytes) in [("log -p", log.as_bytes()), ("the objects", &objects)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(!holds(bytes, KEY), "{what} holds the key:\n{text}");
        assert!(!holds(bytes, "bundle-secret"), "{what}: a part of it");
    }
    // The files are there, each value replaced; the commit says so.
    let label = "[redacted LB_BUNDLE_KEY]";
    assert_eq!(
        std::fs::read_to_string(repo.join(".env")).unwrap(),
        format!("KEY={label}\n")
    );
    let config = repo.join("config").join(label).join("cli.json");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        format!("{{\"key\": \"{label}\", \"quoted\": \"{label}\\\"x\"}}\n")
    );
    assert_eq!(
        std::fs::read_link(repo.join("link")).unwrap(),
        Path::new("/run").join(label)
    );
    assert_eq!(
        std::fs::read(repo.join("blob.bin")).unwrap(),
        [&b"\x00\x01"[..], label.as_bytes(), b"\xff"].concat()
    );
    assert!(
        log.contains("redacted: 4 files held a value passed by pass_env"),
        "{log}"
    );
    // The record's tree is the one the agent left; the commit's is not.
    let head_tree = git(&repo, &["rev-parse", "HEAD^{tree}"]);
    assert_ne!(head_tree.trim(), sessions[1]["evidence"]["tree"]);

    // Nor does any other file the run stored hold it: records, captures, the HOME
    // copy, the report.
    assert!(out.join("report.html").is_file());
    assert_eq!(files_holding(&out, KEY.as_bytes()), Vec::<PathBuf>::new());
}
