//! Harbor's task layout read as a loopbench task without conversion: one feature per
//! step, in order, each checked by its `tests/test.sh` (merged over the task's
//! `tests/`) in a container; every part of Harbor's schema loopbench does not run named
//! by `validate` with file and line; each wrong file refused at its line; and every
//! command that would run it outside the container sandbox refused (running it in a
//! container: tests/container_sandbox.rs).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{loopbench, repo_root};
use loopbench::suite::{Image, Task};
use predicates::prelude::*;

fn example_suite() -> PathBuf {
    repo_root().join("suites/examples/harbor-steps")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A two-step Harbor task in `root/name` whose `task.toml` is `toml`.
fn two_steps(root: &Path, toml: &str) -> PathBuf {
    let dir = root.join("twostep");
    write(&dir.join("task.toml"), toml);
    write(&dir.join("environment/Dockerfile"), "FROM ubuntu:24.04\n");
    write(&dir.join("tests/shared.sh"), "# shared\n");
    for step in ["one", "two"] {
        let s = dir.join("steps").join(step);
        write(&s.join("instruction.md"), &format!("Do step {step}.\n"));
        write(
            &s.join("tests/test.sh"),
            "echo 1 > /logs/verifier/reward.txt\n",
        );
    }
    dir
}

const TWO_STEPS: &str = "[[steps]]\nname = \"one\"\n\n[[steps]]\nname = \"two\"\n";

#[test]
fn the_shipped_example_is_read_as_two_features_in_order() {
    let dir = example_suite().join("counter");
    let task = Task::load(&dir).unwrap();
    assert_eq!(task.name, "counter");
    assert_eq!(
        task.goal,
        "A counter on the command line, built in two steps"
    );
    let ids: Vec<&str> = task.features.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["count", "reset"]);
    let count = &task.features[0];
    assert!(count.description.starts_with("Write `/app/counter.sh`"));
    assert!(count.depends_on.is_empty());
    let check = count.container.as_ref().unwrap();
    assert_eq!(
        check.tests,
        [dir.join("tests"), dir.join("steps/count/tests")]
    );
    assert_eq!(check.script, "test.sh");
    assert_eq!(check.timeout, Duration::from_secs(60));
    assert_eq!(check.min_reward, 1.0);
    assert_eq!(check.gold, Some(dir.join("steps/count/solution/solve.sh")));
    assert_eq!(check.workdir, None);
    let reset = &task.features[1];
    assert_eq!(reset.depends_on, ["count"]);
    let check = reset.container.as_ref().unwrap();
    assert_eq!(check.env["COUNTER_STATE"], "/app/.count");
    assert_eq!(check.workdir, Some(dir.join("steps/reset/workdir")));
    let env = task.environment.as_ref().unwrap();
    assert_eq!(
        env.image,
        Image::Dockerfile(dir.join("environment/Dockerfile"))
    );
    let dockerfile = std::fs::read_to_string(dir.join("environment/Dockerfile")).unwrap();
    assert_eq!(dockerfile.lines().next(), Some("FROM ubuntu:24.04"));
    assert_eq!(
        (env.workdir.as_str(), env.cpus, env.memory_mb),
        ("/app", Some(1.0), Some(512))
    );
    assert!(!env.allow_internet);
    assert!(task.not_run().is_empty(), "{:?}", task.not_run());
    assert_eq!(task.needs_container(), Some("is a Harbor task"));
}

#[test]
fn validate_reads_the_shipped_example() {
    // Its checks run in containers: without an engine here, the suite cannot run and
    // is not valid here.
    if crate::container_sandbox::engine().is_none() {
        loopbench()
            .arg("validate")
            .arg(example_suite())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "task 'counter' runs in a container",
            ));
        return;
    }
    loopbench()
        .arg("validate")
        .arg(example_suite())
        .assert()
        .success()
        .stdout(predicate::str::contains("suite 'harbor-steps' is valid"))
        .stdout(predicate::str::contains(
            "task counter: 2 features, in a container",
        ))
        // Its sessions and checks run in that container (sandbox = "container").
        .stdout(predicate::str::contains("not run by this version").not());
}

#[test]
fn run_and_check_task_refuse_the_example_outside_a_container_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("harbor-steps");
    loopbench::fsutil::copy_tree(&example_suite(), &suite, false).unwrap();
    let file = suite.join("suite.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let on_the_host = text.replace("verify_sandbox = \"container\"\n", "");
    assert_ne!(on_the_host, text, "the example sets verify_sandbox");
    std::fs::write(&file, on_the_host).unwrap();
    let out = tmp.path().join("results");
    loopbench()
        .arg("run")
        .arg(&suite)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("task 'counter'"))
        .stderr(predicate::str::contains("is a Harbor task"))
        .stderr(predicate::str::contains(
            "set verify_sandbox = \"container\"",
        ));
    assert!(!out.exists(), "a refused run wrote {}", out.display());
    loopbench()
        .arg("check-task")
        .arg(example_suite().join("counter"))
        .args(["--sandbox", "none"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("task 'counter'"))
        .stderr(predicate::str::contains("sandbox = \"container\""));
}

#[test]
fn a_task_without_steps_is_one_feature_named_task() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hello");
    write(
        &dir.join("task.toml"),
        "[environment]\ndocker_image = \"ubuntu:24.04\"\nnetwork_mode = \"public\"\n\n[verifier]\ntimeout_sec = 30\nenv = { A = \"1\" }\n",
    );
    write(
        &dir.join("instruction.md"),
        "\n# Say hello\n\nWrite hello.txt.\n",
    );
    write(
        &dir.join("tests/test.sh"),
        "echo 1 > /logs/verifier/reward.txt\n",
    );
    write(&dir.join("solution/solve.sh"), "echo hello > hello.txt\n");
    let task = Task::load(&dir).unwrap();
    assert_eq!(task.name, "hello");
    assert_eq!(task.goal, "Say hello");
    assert_eq!(task.features.len(), 1);
    let f = &task.features[0];
    assert_eq!(f.id, "task");
    assert!(f.description.contains("Write hello.txt."));
    let check = f.container.as_ref().unwrap();
    assert_eq!(check.tests, [dir.join("tests")]);
    assert_eq!(check.timeout, Duration::from_secs(30));
    assert_eq!(check.env["A"], "1");
    assert_eq!(check.gold, Some(dir.join("solution/solve.sh")));
    let env = task.environment.as_ref().unwrap();
    assert_eq!(env.image, Image::Reference("ubuntu:24.04".into()));
    assert!(env.allow_internet);
    // A Harbor task's tests are never in the work directory.
    assert!(!task.tests.glob.is_match("tests/test.sh"));
}

#[test]
fn validate_names_every_part_loopbench_does_not_run_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = "[environment]\ngpus = 1\nhealthcheck = { command = \"true\" }\n\n\
                [[environment.mcp_servers]]\nname = \"m\"\nurl = \"http://x\"\n\n\
                [[steps]]\nname = \"one\"\nartifacts = [\"/app/out\"]\n\n\
                [[steps]]\nname = \"two\"\nmin_reward = { a = 1.0 }\n";
    let dir = two_steps(tmp.path(), toml);
    write(
        &dir.join("environment/docker-compose.yaml"),
        "services: {}\n",
    );
    write(
        &tmp.path().join("suite.toml"),
        "name = \"h\"\nseed = 1\nreplicates = 1\ntasks = [\"twostep\"]\n\n[agents.sim]\ndriver = \"sim\"\nprofile = \"calibrated\"\n\n[[arm]]\nname = \"a\"\nagent = \"sim\"\nlist_format = \"json\"\n",
    );
    let file = dir.join("task.toml").display().to_string();
    let assert = loopbench()
        .arg("validate")
        .arg(tmp.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    for expected in [
        format!("not run: {file}:2: [environment] gpus: GPUs"),
        format!("not run: {file}:3: [environment] healthcheck"),
        format!("not run: {file}:5: [environment] mcp_servers: MCP servers"),
        format!("not run: {file}:11: step 'one' artifacts"),
        format!("not run: {file}:15: step 'two' min_reward"),
        format!(
            "not run: {}:1: a multi-container environment",
            dir.join("environment/docker-compose.yaml").display()
        ),
    ] {
        assert!(
            stdout.contains(&expected),
            "missing {expected:?} in\n{stdout}"
        );
    }
}

#[test]
fn each_wrong_harbor_task_names_its_file_line_and_what_was_expected() {
    // (task.toml, what to remove after writing, the line's text, the message)
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "[environment]\ncpus = 1\nnetwork = true\n",
            "",
            "network = true",
            "unknown field `network`",
        ),
        (
            "[verifier]\ntimeout_sec = 0\n[[steps]]\nname = \"one\"\n",
            "",
            "timeout_sec",
            "above 0",
        ),
        (
            "[[steps]]\nname = \"one\"\nmin_reward = \"high\"\n",
            "",
            "min_reward",
            "min_reward must be a number",
        ),
        (
            "[[steps]]\nname = \"one\"\n\n[[steps]]\nname = \"one\"\n",
            "",
            "name = \"one\"\n\n",
            "defined twice",
        ),
        (
            "[[steps]]\nname = \"a b\"\n",
            "",
            "name =",
            "step name 'a b'",
        ),
        (
            TWO_STEPS,
            "steps/two/instruction.md",
            "\"two\"",
            "step 'two' has no instruction",
        ),
        (
            TWO_STEPS,
            "steps/two/tests/test.sh",
            "\"two\"",
            "step 'two' has no check",
        ),
        (
            "[task]\nname = \"org/a b\"\n[[steps]]\nname = \"one\"\n",
            "",
            "name = \"org",
            "task name",
        ),
        (
            "[environment]\nworkdir = \"app\"\n[[steps]]\nname = \"one\"\n",
            "",
            "workdir",
            "must be an absolute path",
        ),
        (
            "[environment]\nenv = { \"1A\" = \"x\" }\n[[steps]]\nname = \"one\"\n",
            "",
            "env =",
            "not an environment variable name",
        ),
        (TWO_STEPS, "environment/Dockerfile", "", "needs an image"),
    ];
    for (i, (toml, remove, at, expected)) in cases.iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = two_steps(tmp.path(), toml);
        if !remove.is_empty() {
            std::fs::remove_file(dir.join(remove)).unwrap();
        }
        let line = if at.is_empty() {
            1
        } else {
            let pos = toml.find(at).unwrap();
            toml[..pos].matches('\n').count() + 1
        };
        let line = if *at == "name = \"one\"\n\n" {
            // The second definition.
            toml.rfind("name = \"one\"")
                .map(|p| toml[..p].matches('\n').count() + 1)
                .unwrap()
        } else {
            line
        };
        common::assert_task_refused_at(&dir, line, expected, i);
    }
}

#[test]
fn a_loopbench_task_is_not_taken_for_a_harbor_task() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = common::sh_task(tmp.path());
    write(&dir.join("instruction.md"), "notes\n");
    let task = Task::load(&dir).unwrap();
    assert!(task.environment.is_none());
    assert_eq!(task.features.len(), 3);
}

#[test]
fn a_harbor_task_with_a_file_leading_out_of_it_is_refused_before_it_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_steps(tmp.path(), TWO_STEPS);
    let secret = tmp.path().join("secret.sh");
    write(&secret, "echo 1 > /logs/verifier/reward.txt\n");
    let link = dir.join("steps/two/tests/test.sh");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let err = Task::load(&dir).unwrap_err().to_string();
    let prefix = format!("{}:1:", dir.join("task.toml").display());
    assert!(err.starts_with(&prefix), "{err}");
    assert!(
        err.contains("'steps/two/tests/test.sh' is a symlink out of the task directory"),
        "{err}"
    );
}

#[test]
fn env_templates_resolve_from_the_harness_s_environment_and_a_missing_one_is_refused_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = format!(
        "[verifier]\nenv = {{ P = \"${{PATH}}\", M = \"${{LB_TEST_UNSET_41:-judge-x}}\" }}\n\n\
         [solution]\nenv = {{ S = \"s-${{LB_TEST_UNSET_41:-1}}\" }}\n\n{TWO_STEPS}"
    );
    let dir = two_steps(tmp.path(), &toml);
    let task = Task::load(&dir).unwrap();
    let check = task.features[1].container.as_ref().unwrap();
    assert_eq!(check.env["P"], std::env::var("PATH").unwrap());
    assert_eq!(check.env["M"], "judge-x");
    assert_eq!(check.gold_env["S"], "s-1");
    // The host's values it took are to be redacted; a default is no value of the host's.
    assert_eq!(task.host_variables(), ["PATH"]);
    // A variable the harness lacks, with no default: refused at the template's line.
    let toml = format!(
        "[environment]\ncpus = 1\nenv = {{ A = \"1\",\n  KEY = \"${{LB_TEST_UNSET_41}}\" }}\n\n{TWO_STEPS}"
    );
    write(&dir.join("task.toml"), &toml);
    common::assert_task_refused_at(
        &dir,
        4,
        "env: KEY: '${LB_TEST_UNSET_41}' names a variable the harness's environment does not have",
        0,
    );
}
