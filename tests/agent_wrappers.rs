//! The agent wrappers in `scripts/agents/` (claude, codex, aider), each run by the
//! command driver against a stub executable of the same name first on PATH: the stub
//! records its arguments and the prompt it got, does real work in the work directory,
//! and prints output in its CLI's format; the usage the wrapper derives from that
//! output must land in `sessions.csv`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::command::{arm, script, sh_suite};
use common::{loopbench, read_csv, repo_root};

/// Turn budget the arms hand to their agents.
const TURNS: u32 = 17;

/// Every stub: log arguments (one per line) and the prompt, then implement feature n
/// of the sh task (src/f<n>.txt), note it and commit, as an agent would.
const STUB_PROLOGUE: &str = r#"
n="$LOOPBENCH_SESSION"
log="$STUB_LOG/$(basename "$0").$n"
printf '%s\n' "$@" > "$log.args"
echo "file $n" > "src/f$n.txt"
echo "session $n: made src/f$n.txt" >> PROGRESS.md
git add -A && git commit -qm "session $n"
"#;

fn stubs(bin: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    // Claude Code: stream-json with a final result line.
    script(
        bin,
        "claude",
        &format!(
            r#"cat > "$STUB_LOG/claude.$LOOPBENCH_SESSION.stdin"
{STUB_PROLOGUE}
echo '{{"type":"system","subtype":"init","cwd":"'"$PWD"'","session_id":"s'$n'"}}'
echo '{{"type":"assistant","message":{{"id":"m1","content":[{{"type":"text","text":"working"}}]}}}}'
echo '{{"type":"result","subtype":"success","is_error":false,"num_turns":'$((n + 2))',"total_cost_usd":0.'$n'5,"usage":{{"input_tokens":'$((n * 100))',"cache_creation_input_tokens":10,"cache_read_input_tokens":1,"output_tokens":'$((n * 7))'}}}}'
"#
        ),
    );
    // Codex: JSONL events; usage on turn.completed.
    script(
        bin,
        "codex",
        &format!(
            r#"cat > "$STUB_LOG/codex.$LOOPBENCH_SESSION.stdin"
{STUB_PROLOGUE}
echo '{{"type":"thread.started","thread_id":"t'$n'"}}'
echo '{{"type":"turn.started"}}'
echo '{{"type":"item.completed","item":{{"id":"i0","type":"command_execution","command":"ls"}}}}'
echo '{{"type":"item.completed","item":{{"id":"i1","type":"agent_message","text":"done"}}}}'
echo 'not json: a warning codex printed'
echo '{{"type":"turn.completed","usage":{{"input_tokens":'$((n * 1000))',"cached_input_tokens":500,"output_tokens":'$((n * 30))',"reasoning_output_tokens":3}}}}'
"#
        ),
    );
    // aider: the message comes in a file; usage as "Tokens: ... Cost: ..." lines.
    script(
        bin,
        "aider",
        &format!(
            r#"prev=""; for a in "$@"; do [ "$prev" = --message-file ] && cp "$a" "$STUB_LOG/aider.$LOOPBENCH_SESSION.stdin"; prev="$a"; done
{STUB_PROLOGUE}
echo "Aider v0.86.1"
echo "Tokens: 2.3k sent, 1.1k cache write, 145 received. Cost: \$0.01 message, \$0.01 session."
echo "Applied edit to src/f$n.txt"
echo "Tokens: 4.5k sent, $n received. Cost: \$0.02 message, \$0.0$((n + 2)) session."
"#
        ),
    );
}

struct Wrapped {
    sessions: Vec<BTreeMap<String, String>>,
    log: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Wrapped {
    fn args(&self, agent: &str, session: u32) -> Vec<String> {
        let path = self.log.join(format!("{agent}.{session}.args"));
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn prompt(&self, agent: &str, session: u32) -> String {
        std::fs::read_to_string(self.log.join(format!("{agent}.{session}.stdin"))).unwrap()
    }

    fn usage(&self, arm: &str, session: u32) -> [&str; 4] {
        let row = self
            .sessions
            .iter()
            .find(|r| r["arm"] == arm && r["session"] == session.to_string())
            .unwrap_or_else(|| panic!("no session {session} of {arm}"));
        assert_eq!(row["error"], "", "{arm} session {session}: {row:?}");
        [
            &row["turns"],
            &row["input_tokens"],
            &row["output_tokens"],
            &row["cost_usd"],
        ]
        .map(String::as_str)
    }
}

/// Runs a suite with one arm per wrapper (two coding sessions each) with the stubs
/// first on PATH.
fn run_wrapped() -> Wrapped {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let log = tmp.path().join("log");
    std::fs::create_dir_all(&log).unwrap();
    stubs(&bin);
    let wrappers = repo_root().join("scripts/agents");
    let agent = |name: &str, extra: &str| {
        format!(
            // The agent's environment is built, not inherited: the stubs' log directory
            // reaches them through the agent's env table.
            "[agents.{name}]\ndriver = \"command\"\nprogram = \"{}\"\nargs = [\"--model\", \"{extra}\"]\ntimeout = \"60s\"\nenv = {{ STUB_LOG = \"{}\" }}\n",
            wrappers.join(format!("{name}.sh")).display(),
            log.display()
        )
    };
    let budget = format!("session_turns = {TURNS}");
    let suite = sh_suite(
        &tmp.path().join("suite"),
        &[
            agent("claude", "m-claude"),
            agent("codex", "m-codex"),
            agent("aider", "m-aider"),
        ]
        .concat(),
        &[
            arm("claude", "claude", 2, &budget),
            arm("codex", "codex", 2, &budget),
            arm("aider", "aider", 2, &budget),
        ]
        .concat(),
    );
    let out = tmp.path().join("run");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("PATH", path)
        .env("STUB_LOG", &log)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Wrapped {
        sessions: read_csv(&out.join("sessions.csv")),
        log,
        _tmp: tmp,
    }
}

#[test]
fn each_wrapper_passes_prompt_budget_and_arguments_and_its_usage_lands_in_sessions_csv() {
    let w = run_wrapped();

    // claude: the prompt on stdin as loopbench wrote it, the budget as --max-turns,
    // stream-json output, the suite's extra arguments last.
    for n in [1, 2] {
        assert_eq!(
            w.args("claude", n),
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--max-turns",
                "17",
                "--permission-mode",
                "bypassPermissions",
                "--model",
                "m-claude"
            ]
        );
        assert!(w.prompt("claude", n).contains("You have 17 turns"));
    }
    // turns = num_turns; input = input + cache creation + cache read; cost as printed.
    assert_eq!(w.usage("claude", 1), ["3", "111", "7", "0.15"]);
    assert_eq!(w.usage("claude", 2), ["4", "211", "14", "0.25"]);

    // codex: `exec --json`, its own sandbox writable in the work directory (Codex 0.17x
    // has no --full-auto), prompt from stdin ("-"), the budget appended to the prompt.
    assert_eq!(
        w.args("codex", 1),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "workspace-write",
            "--model",
            "m-codex",
            "-"
        ]
    );
    let prompt = w.prompt("codex", 2);
    assert!(prompt.contains("You have 17 turns"), "{prompt}");
    assert!(
        prompt.ends_with(
            "Your budget for this session is 17 turns; leave notes before it runs out.\n"
        )
    );
    // turns = completed items; output_tokens already hold the reasoning tokens (not
    // added again); codex prints no cost.
    assert_eq!(w.usage("codex", 1), ["2", "1000", "30", ""]);
    assert_eq!(w.usage("codex", 2), ["2", "2000", "60", ""]);

    // aider: the prompt (and budget) as a message file.
    let args = w.args("aider", 1);
    assert_eq!(args[0], "--message-file");
    // No --yes-always (it answers No to running commands); a local analytics log.
    assert_eq!(
        args[2..7],
        [
            "--no-pretty",
            "--no-stream",
            "--no-check-update",
            "--no-analytics",
            "--analytics-log"
        ]
    );
    assert!(args[7].ends_with("/analytics.jsonl"), "{args:?}");
    // Its histories go to the trial's HOME (in the trial's own directory, copied to
    // `agents/<trial>/home/` after each session), never into the work directory, where
    // the harness's own index would count them as uncommitted work.
    assert_eq!(args[8], "--chat-history-file");
    assert!(
        args[9].ends_with("/own/home/.aider.chat.history.md"),
        "{args:?}"
    );
    assert_eq!(args[10], "--input-history-file");
    assert!(
        args[11].ends_with("/own/home/.aider.input.history"),
        "{args:?}"
    );
    assert_eq!(args[12..], ["--model", "m-aider"]);
    assert!(
        w.prompt("aider", 1)
            .contains("budget for this session is 17 turns")
    );
    // The stand-in writes no analytics log: the printed lines. Two model calls; 2.3k +
    // 1.1k + 4.5k sent, 145 + n received, the last session cost.
    assert_eq!(w.usage("aider", 1), ["2", "7900", "146", "0.03"]);
    assert_eq!(w.usage("aider", 2), ["2", "7900", "147", "0.04"]);

    // What the stubs did is observed like any agent's work: two features verified.
    for arm in ["claude", "codex", "aider"] {
        let last = w.sessions.iter().rfind(|r| r["arm"] == arm).unwrap();
        assert_eq!(last["features_verified"], "2", "{arm}");
        assert_eq!(last["clean_tree"], "true", "{arm}");
    }
}

#[test]
fn a_wrapper_outside_loopbench_says_what_is_missing() {
    for name in ["claude", "codex", "aider"] {
        let output =
            std::process::Command::new(repo_root().join(format!("scripts/agents/{name}.sh")))
                .env_remove("LOOPBENCH_TURNS")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
        assert!(!output.status.success(), "{name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("LOOPBENCH_TURNS is not set"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn usage_parser_survives_output_it_does_not_know() {
    // Ported from the test of scripts/agents/usage.py, which `loopbench usage` replaces.
    let tmp = tempfile::tempdir().unwrap();
    let capture = tmp.path().join("capture");
    std::fs::write(
        &capture,
        "garbage\n{\"type\":\"result\",\"num_turns\":\"x\"}\n[1,2]\n\u{0}\n",
    )
    .unwrap();
    let usage = |format: &str| {
        let output = loopbench()
            .args(["usage", format])
            .arg(&capture)
            .output()
            .unwrap();
        assert!(output.status.success(), "{format}");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    };
    for (format, expected) in [
        ("claude", "{}"),
        ("codex", "{\"turns\":0}"),
        ("aider", "{}"),
    ] {
        assert_eq!(usage(format), expected, "{format}");
    }
    // A claude capture without a result line: the session was cut off.
    std::fs::write(&capture, "{\"type\":\"assistant\"}\n").unwrap();
    assert_eq!(usage("claude"), "{\"status\":\"interrupted\"}");
    // A capture that is not there is bad input.
    loopbench()
        .args(["usage", "claude", "/nonexistent/capture"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("/nonexistent/capture"));
}

#[test]
fn wrappers_work_in_the_sandbox_from_a_checkout_the_sandbox_hides() {
    if !loopbench::sandbox::bwrap_works() {
        eprintln!("skipped: bwrap does not work here");
        return;
    }
    // The wrappers lie under /tmp, which the sandbox replaces with an empty tmpfs:
    // only the program file itself is bound. The stub CLIs and their log lie where
    // the sandbox sees them (the log is bound writable).
    let checkout = tempfile::tempdir().unwrap();
    let wrappers = checkout.path().join("scripts/agents");
    std::fs::create_dir_all(&wrappers).unwrap();
    for entry in std::fs::read_dir(repo_root().join("scripts/agents")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), wrappers.join(entry.file_name())).unwrap();
    }
    let visible = common::visible_tempdir();
    let bin = visible.path().join("bin");
    let log = visible.path().join("log");
    std::fs::create_dir_all(&log).unwrap();
    // As root the sandbox runs as an unprivileged user, which may write only what it is
    // given: the log directory is handed over, as a root user hands over a CLI's state.
    if nix::unistd::geteuid().is_root() {
        loopbench::sandbox::SandboxUser::default()
            .hand_over(&[&log])
            .unwrap();
    }
    stubs(&bin);
    let agent = |name: &str| {
        format!(
            "[agents.{name}]\ndriver = \"command\"\nprogram = \"{}\"\ntimeout = \"60s\"\nsandbox = \"bwrap\"\nsandbox_writable = [\"{}\"]\nenv = {{ STUB_LOG = \"{}\" }}\n",
            wrappers.join(format!("{name}.sh")).display(),
            log.display(),
            log.display(),
        )
    };
    let suite = sh_suite(
        &checkout.path().join("suite"),
        &[agent("claude"), agent("codex"), agent("aider")].concat(),
        &[
            arm("claude", "claude", 1, ""),
            arm("codex", "codex", 1, ""),
            arm("aider", "aider", 1, ""),
        ]
        .concat(),
    );
    let out = checkout.path().join("run");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sessions = read_csv(&out.join("sessions.csv"));
    let usage = |arm: &str| {
        let row = sessions.iter().find(|r| r["arm"] == arm).unwrap();
        assert_eq!(row["error"], "", "{arm}: {row:?}");
        assert_eq!(row["features_verified"], "1", "{arm}: {row:?}");
        [
            row["turns"].clone(),
            row["input_tokens"].clone(),
            row["output_tokens"].clone(),
            row["cost_usd"].clone(),
        ]
    };
    assert_eq!(usage("claude"), ["3", "111", "7", "0.15"]);
    assert_eq!(usage("codex"), ["2", "1000", "30", ""]);
    assert_eq!(usage("aider"), ["2", "7900", "146", "0.03"]);
}
