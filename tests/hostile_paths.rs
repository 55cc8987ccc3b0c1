//! A suite or a task from elsewhere that names a path out of its own directory, run as
//! root (CI runs as root), where the harness would read a root-only file and hand it on:
//! a prompt template (given to the agent on stdin), a scripted model server's scenario
//! (served to the agent), a task's `repo/` (copied into the work directory),
//! `oracle/tests` and `oracle/gold/<ID>` (copied into checks, which `check-task`
//! reports on), by a `..` climb or by a symlink. Each is refused before anything runs
//! (exit 2, naming the file, the line and the key), and the secret appears in nothing
//! the harness prints.

use crate::common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use common::command::{arm, script};

/// Root-only files outside every suite: a prompt, a scenario, a test directory, a
/// repository and a gold directory, each holding the secret.
struct Host {
    _dir: tempfile::TempDir,
    root: PathBuf,
    secret: String,
}

impl Host {
    fn new() -> Host {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap().join("host");
        let secret = format!("HOST-SECRET-{}-{}", std::process::id(), line!());
        for sub in ["tests", "repo/src", "gold/src"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let text = format!("{secret}\n");
        let check = format!("# test: f1 exists\necho {secret}\ntest -f src/f1.txt\n");
        for (file, body) in [
            ("secret.md", text.as_str()),
            ("scenario.jsonl", text.as_str()),
            ("tests/check_F1.sh", check.as_str()),
            ("repo/src/f1.txt", text.as_str()),
            ("gold/src/f1.txt", text.as_str()),
        ] {
            std::fs::write(root.join(file), body).unwrap();
            std::fs::set_permissions(root.join(file), std::fs::Permissions::from_mode(0o600))
                .unwrap();
        }
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
        Host {
            _dir: dir,
            root,
            secret,
        }
    }

    /// `path` of the host as `..` climbs from `dir`.
    fn climb_from(&self, dir: &Path, path: &str) -> String {
        let depth = std::fs::canonicalize(dir).unwrap().components().count() - 1;
        format!("{}{}", "../".repeat(depth), self.root.join(path).display()).replacen("//", "/", 1)
    }
}

/// A suite over the sh task with one command agent (`agent_extra` in its table) and
/// one arm (`arm_extra` in it).
fn suite(root: &Path, agent_extra: &str, arm_extra: &str) -> PathBuf {
    common::sh_task(root);
    script(root, "agent.sh", "exit 0\n");
    std::fs::write(root.join("scenario.jsonl"), "").unwrap();
    let text = format!(
        "name = \"paths\"\nseed = 1\nreplicates = 1\ntasks = [\"shtask\"]\n\n\
         [agents.a]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n{agent_extra}\n\n{}",
        arm("a", "a", 1, arm_extra)
    );
    std::fs::write(root.join("suite.toml"), text).unwrap();
    root.to_path_buf()
}

/// The 1-based line of `file` that holds `needle`.
fn line_of(file: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in {}", file.display()))
        + 1
}

/// Runs `loopbench ARGS`, which must exit 2; gives back what it printed.
fn refused(args: &[&std::ffi::OsStr], secret: &str) -> String {
    let out = common::loopbench().args(args).output().unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{args:?}: {printed}");
    assert!(
        !printed.contains(secret),
        "{args:?} printed the secret: {printed}"
    );
    printed
}

/// `validate` refuses the suite at `file:line:` naming `key`.
fn validate_refuses(suite: &Path, host: &Host, file: &Path, line: usize, key: &str) -> String {
    let printed = refused(&["validate".as_ref(), suite.as_os_str()], &host.secret);
    let at = format!("{}:{line}:", file.display());
    assert!(printed.contains(&at), "expected {at}: {printed}");
    assert!(printed.contains(key), "expected {key}: {printed}");
    printed
}

#[test]
fn a_prompt_or_a_scenario_out_of_the_suite_is_refused_by_its_key() {
    let host = Host::new();
    // prompts.coding climbing out with `..`, and through a symlink in the suite.
    let tmp = common::visible_tempdir();
    let climb = host.climb_from(tmp.path(), "secret.md");
    let dir = suite(
        tmp.path(),
        "",
        &format!("prompts = {{ coding = \"{climb}\" }}"),
    );
    let file = dir.join("suite.toml");
    let said = validate_refuses(
        &dir,
        &host,
        &file,
        line_of(&file, "prompts ="),
        "prompts.coding",
    );
    assert!(said.contains("'..'"), "{said}");

    let tmp = common::visible_tempdir();
    std::fs::create_dir(tmp.path().join("prompts")).unwrap();
    symlink(
        host.root.join("secret.md"),
        tmp.path().join("prompts/mine.md"),
    )
    .unwrap();
    let dir = suite(tmp.path(), "", "prompts = { coding = \"prompts/mine.md\" }");
    let file = dir.join("suite.toml");
    validate_refuses(
        &dir,
        &host,
        &file,
        line_of(&file, "prompts ="),
        "prompts.coding",
    );

    // The suite's own template, a symlink out.
    let tmp = common::visible_tempdir();
    std::fs::create_dir(tmp.path().join("prompts")).unwrap();
    symlink(
        host.root.join("secret.md"),
        tmp.path().join("prompts/coding.md"),
    )
    .unwrap();
    let dir = suite(tmp.path(), "", "");
    let printed = refused(&["validate".as_ref(), dir.as_os_str()], &host.secret);
    assert!(
        printed.contains(&dir.join("prompts/coding.md").display().to_string()),
        "{printed}"
    );

    // model_server.scenario climbing out, and a symlink.
    let tmp = common::visible_tempdir();
    let climb = host.climb_from(tmp.path(), "scenario.jsonl");
    let dir = suite(
        tmp.path(),
        &format!("model_server = {{ scenario = \"{climb}\" }}"),
        "",
    );
    let file = dir.join("suite.toml");
    let key = "model_server.scenario";
    validate_refuses(&dir, &host, &file, line_of(&file, "model_server ="), key);

    let tmp = common::visible_tempdir();
    symlink(
        host.root.join("scenario.jsonl"),
        tmp.path().join("served.jsonl"),
    )
    .unwrap();
    let dir = suite(
        tmp.path(),
        "model_server = { scenario = \"served.jsonl\" }",
        "",
    );
    let file = dir.join("suite.toml");
    validate_refuses(&dir, &host, &file, line_of(&file, "model_server ="), key);
}

#[test]
fn a_task_whose_files_lead_out_of_it_is_refused_and_check_task_prints_no_secret() {
    let host = Host::new();
    // Each task root, and a file deep in repo/, replaced by a symlink to the host.
    let cases: [(&str, &str, Option<&str>); 5] = [
        ("repo", "repo", None),
        ("oracle/tests", "tests", None),
        ("oracle/gold/F1", "gold", Some("id = \"F1\"")),
        ("repo/src/notes.md", "secret.md", None),
        ("task.toml", "secret.md", None),
    ];
    for (place, target, key_line) in cases {
        let tmp = common::visible_tempdir();
        let dir = suite(tmp.path(), "", "");
        let task = dir.join("shtask");
        std::fs::create_dir_all(task.join("oracle/gold")).unwrap();
        let at = task.join(place);
        if at.is_dir() {
            std::fs::remove_dir_all(&at).unwrap();
        } else if at.exists() {
            std::fs::remove_file(&at).unwrap();
        }
        symlink(host.root.join(target), &at).unwrap();
        let task_file = task.join("task.toml");
        let printed = if place == "task.toml" {
            let printed = refused(&["validate".as_ref(), dir.as_os_str()], &host.secret);
            assert!(
                printed.contains(&task_file.display().to_string()),
                "{printed}"
            );
            printed
        } else {
            let line = key_line.map_or(1, |k| line_of(&task_file, k));
            validate_refuses(&dir, &host, &task_file, line, &format!("'{place}'"))
        };
        assert!(
            printed.contains("symlink out of the task directory"),
            "{place}: {printed}"
        );
        // check-task on the task alone, and on the suite: refused, the secret unprinted.
        for input in [&task, &dir] {
            let printed = refused(&["check-task".as_ref(), input.as_os_str()], &host.secret);
            assert!(
                printed.contains("symlink out of the task directory"),
                "{printed}"
            );
        }
    }
}

#[test]
fn the_shipped_suites_that_name_tasks_and_programs_outside_them_still_load() {
    // A suite's tasks and programs are its choice, wherever they lie: the dry run
    // names `../examples/tasks/latefees` and `../../scripts/agents/*.sh`.
    let dryrun = common::repo_root().join("suites/real-cli-dryrun");
    let suite = loopbench::suite::Suite::load(&dryrun).unwrap();
    let task = std::fs::canonicalize(&suite.tasks[0].dir).unwrap();
    assert!(!task.starts_with(std::fs::canonicalize(&dryrun).unwrap()));
    for agent in suite.agents.values() {
        let loopbench::suite::AgentDriver::Command {
            program,
            model_server,
            ..
        } = agent
        else {
            panic!("{agent:?}");
        };
        assert!(program.starts_with("../../scripts/agents/"), "{program}");
        let scenario = &model_server.as_ref().unwrap().scenario;
        assert!(scenario.starts_with(std::fs::canonicalize(&dryrun).unwrap()));
    }
}
