//! Unit tests of the command driver: crash timing and the session environment.

use super::*;
use crate::agent::SessionKind;
use crate::workspace::Workspace;

fn agent(crash: CrashMode, timeout: u64, window: u64) -> CommandAgent {
    CommandAgent {
        name: "a".into(),
        program: "true".into(),
        args: Vec::new(),
        env: BTreeMap::from([("LOOPBENCH_SESSION".to_string(), "99".to_string())]),
        pass_env: vec!["LB_TEST_PASSED_KEY".into()],
        redactor: Redactor::default(),
        limits: sandbox::Limits::default(),
        timeout: Duration::from_secs(timeout),
        crash,
        crash_window: Duration::from_secs(window),
        capture_limit: crate::suite::DEFAULT_CAPTURE_LIMIT,
        sandbox: None,
        network: None,
        model_server: None,
        base_dir: PathBuf::from("/"),
        hidden: Hidden::default(),
        key: TrialKey::new("arm", "task", 0),
        trial_seed: 42,
        attempt: 1,
        capture_dir: PathBuf::from("/nonexistent"),
        retry: RetryPolicy::default(),
        grace: KILL_GRACE,
        next: 1,
    }
}

#[test]
fn a_killed_crash_falls_in_the_shorter_of_timeout_and_crash_window() {
    let a = agent(CrashMode::Kill, 1800, 600);
    assert_eq!(a.crash_after(Some(0.5)), Some(Duration::from_secs(300)));
    let a = agent(CrashMode::Kill, 60, 600);
    assert_eq!(a.crash_after(Some(0.5)), Some(Duration::from_secs(30)));
    assert_eq!(a.crash_after(None), None);
    assert_eq!(
        agent(CrashMode::Agent, 60, 600).crash_after(Some(0.5)),
        None
    );
}

#[test]
fn the_contract_wins_over_the_env_table_and_the_crash_is_told_only_in_agent_mode() {
    let ws = Workspace::existing(
        "/w/work".into(),
        "/w/effects.log".into(),
        "/w/prompt.md".into(),
    );
    let contract = vec![("LOOPBENCH_SESSION".to_string(), OsString::from("3"))];
    let ctx = SessionContext {
        workspace: &ws,
        session: 3,
        kind: SessionKind::Coding,
        env: &contract,
        prompt: "",
        turn_budget: 60,
        interrupt_at: Some(0.25),
        rerun: 0,
        notify: &|_| {},
    };
    let last = |env: &[(String, OsString)], k: &str| {
        env.iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    };
    let usage = Path::new("/w/usage.json");
    let state = Path::new("/w/state");
    let home = Path::new("/w/home");
    let env = agent(CrashMode::Kill, 60, 60).session_env(&ctx, usage, state, home);
    assert_eq!(last(&env, "LOOPBENCH_SESSION").as_deref(), Some("3"));
    assert_eq!(last(&env, "LOOPBENCH_TURNS").as_deref(), Some("60"));
    assert_eq!(
        last(&env, "LOOPBENCH_SESSION_KIND").as_deref(),
        Some("coding")
    );
    assert_eq!(last(&env, "LOOPBENCH_TRIAL_SEED").as_deref(), Some("42"));
    assert_eq!(
        last(&env, "LOOPBENCH_USAGE_FILE").as_deref(),
        Some("/w/usage.json")
    );
    assert_eq!(last(&env, "LOOPBENCH_INTERRUPT_AT"), None);
    let bin = last(&env, "LOOPBENCH_BIN").unwrap();
    assert!(
        Path::new(&bin).is_absolute() && Path::new(&bin).is_file(),
        "{bin}"
    );
    let env = agent(CrashMode::Agent, 60, 60).session_env(&ctx, usage, state, home);
    assert_eq!(
        last(&env, "LOOPBENCH_INTERRUPT_AT").as_deref(),
        Some("0.25")
    );
}

#[test]
fn the_environment_is_built_not_inherited() {
    let ws = Workspace::existing(
        "/w/work".into(),
        "/w/effects.log".into(),
        "/w/prompt.md".into(),
    );
    let ctx = SessionContext {
        workspace: &ws,
        session: 1,
        kind: SessionKind::Coding,
        env: &[],
        prompt: "",
        turn_budget: 60,
        interrupt_at: None,
        rerun: 0,
        notify: &|_| {},
    };
    // CARGO_MANIFEST_DIR is in every test's environment and names no agent setting.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let env = agent(CrashMode::Kill, 60, 60).session_env(
        &ctx,
        Path::new("/w/usage.json"),
        Path::new("/w/state"),
        Path::new("/w/home"),
    );
    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert!(!names.contains(&"CARGO_MANIFEST_DIR"), "{names:?}");
    assert!(names.contains(&"PATH"));
    let home = env.iter().rev().find(|(k, _)| k == "HOME").unwrap();
    assert_eq!(home.1, OsString::from("/w/home"));
}
