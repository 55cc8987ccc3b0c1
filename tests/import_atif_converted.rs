//! `loopbench import atif` of trajectories a third-party converter wrote gives the trace
//! `loopbench import claude-code` / `loopbench import codex` gives of the transcripts it
//! converted, action by action; where the converter drops (or adds) something, the case
//! says what and why.
//!
//! The converter is Harbor's (the `harbor` package on PyPI, [`HARBOR`]: its Claude Code
//! and Codex agents' `convert_trajectory`, which Harbor runs on a trial's session files),
//! run on the repository's transcripts: the real CLIs' (the dry run's Codex rollouts,
//! `tests/data/codex/latefees` and `failed-patch`, and Claude Code session files,
//! `tests/data/claude-code/dry-run`) and the hand-written Claude Code session files of
//! older CLI versions (`tests/data/claude-code`), one trajectory per session file. Its output
//! is committed (`tests/data/atif/harbor/`), so the default test needs no Python; the
//! `#[ignore]`d one installs the converter (Python 3.12 or later, PyPI), converts the
//! transcripts again and requires the committed output to be exactly what it writes:
//!
//! ```text
//! cargo nextest run --run-ignored only -E 'test(/^import_atif_converted::/)'
//! ```
//!
//! `LOOPBENCH_BLESS=1` with it rewrites the committed output instead.

use crate::common;

use std::path::{Path, PathBuf};

use common::python::{python_at_least, venv_of};
use common::{loopbench, repo_root};
use serde_json::Value;

/// The converter, and the package whose price table it estimates costs with (pinned so
/// that its output, estimated costs included, is reproducible). docs/formats.md pins
/// the same versions.
const HARBOR: &[&str] = &["harbor==0.26.0", "litellm==1.110.2"];

/// Converts each transcript `FILE` of format `argv[1]` (`claude-code`, `codex`) with
/// Harbor's own converter, alone in a trial's agent log folder as Harbor finds it after a
/// run (`sessions/projects/PROJECT/ID.jsonl` with its `ID/subagents/`, or
/// `sessions/ROLLOUT.jsonl`), and writes its trajectory as `argv[2]/STEM.json` with
/// Harbor's own formatting. LiteLLM reads its bundled price table, not the network's.
const CONVERT: &str = r#"
import os, shutil, sys, tempfile
from pathlib import Path
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
import logging
logging.disable(logging.WARNING)
from harbor.agents.installed.claude_code import ClaudeCode
from harbor.agents.installed.codex import Codex
from harbor.utils.trajectory_utils import format_trajectory_json

kind, out = sys.argv[1], Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
for file in map(Path, sys.argv[3:]):
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "agent"
        if kind == "claude-code":
            project = logs / "sessions" / "projects" / "-home-dev-latefees"
            project.mkdir(parents=True)
            shutil.copy(file, project / file.name)
            if file.with_suffix("").is_dir():
                shutil.copytree(file.with_suffix(""), project / file.stem)
            agent = ClaudeCode(logs_dir=logs, model_name="anthropic/claude-sonnet-4-5")
        else:
            (logs / "sessions").mkdir(parents=True)
            shutil.copy(file, logs / "sessions" / file.name)
            agent = Codex(logs_dir=logs, model_name="openai/gpt-5.5")
        trajectory = agent.convert_trajectory(logs)
        if trajectory is None:
            sys.exit(f"{file}: the converter wrote no trajectory")
        (out / f"{file.stem}.json").write_text(format_trajectory_json(trajectory.to_json_dict()))
"#;

/// One converted fixture.
struct Case {
    /// The importer of the original transcripts.
    format: &'static str,
    /// The transcripts, under tests/data.
    source: &'static str,
    /// The converter's output, under tests/data/atif/harbor.
    converted: &'static str,
    /// What the ATIF import gives otherwise than the original's, and why.
    differences: &'static [Difference],
}

/// One difference between the two imports, in session `session` (from 1).
struct Difference {
    session: u64,
    what: What,
    why: &'static str,
}

enum What {
    /// An action (a JSON object whose fields, these given, equal these) the original's
    /// import has and the ATIF one lacks.
    Lost(&'static str),
    /// An action the ATIF import has and the original's lacks.
    Added(&'static str),
    /// A field of the session's line with this `op` (its `usage`, `end`, `session`):
    /// (op, field, the original's value, the ATIF import's), JSON; `null` is absent.
    Field(&'static str, &'static str, &'static str, &'static str),
}

/// A command whose result has no text (`git commit -q`, `rm`, `cd`): the converter
/// writes no observation result for a result whose text is empty, so the trajectory
/// holds the call without a result, which is not applied and cuts the session off.
const NO_TEXT: &str = "the converter drops a tool result whose text is empty";

/// The converter merges a subagent's transcript (a `subagents/` file, or inline
/// `isSidechain` lines) into the session's steps, so the subagent's model calls count
/// as the session's turns.
const SUBAGENT_TURNS: &str = "the converter counts the subagent's model calls as the session's";

/// `claude --continue` starts its file with a copy of the first session's main chain
/// (the same `uuid`s); the converter, given one session file, keeps the copy as steps
/// of the new session and marks none `is_copied_context`, so they are imported again
/// and their usage counted again.
const COPY: &str = "the converter keeps a resumed session's copy of its history as new steps";

/// Every session's `cost_usd` is the converter's estimate from LiteLLM's price table
/// (`cost_source` `litellm_estimate`), not the cost the transcript records (Claude
/// Code's `costUSD`) or none (Codex records no cost): it is left out of the
/// comparison.
const COST: &str = "the converter estimates costs";

const fn lost(session: u64, line: &'static str, why: &'static str) -> Difference {
    Difference {
        session,
        what: What::Lost(line),
        why,
    }
}

const fn field(
    session: u64,
    op: &'static str,
    name: &'static str,
    values: (&'static str, &'static str),
    why: &'static str,
) -> Difference {
    Difference {
        session,
        what: What::Field(op, name, values.0, values.1),
        why,
    }
}

const CUT_OFF: (&str, &str) = (r#""completed""#, r#""interrupted""#);

const CASES: &[Case] = &[
    Case {
        format: "codex",
        source: "codex/latefees",
        converted: "codex-latefees",
        differences: &[],
    },
    Case {
        format: "codex",
        source: "codex/failed-patch",
        converted: "codex-failed-patch",
        differences: &[],
    },
    Case {
        format: "claude-code",
        source: "claude-code/dry-run",
        converted: "claude-code-dry-run",
        differences: &[],
    },
    Case {
        format: "claude-code",
        source: "claude-code/latefees",
        converted: "claude-code-latefees",
        differences: &[
            lost(
                1,
                r#"{"op": "run", "cmd": "cd . && git add -A && git commit -qm 'F1: late fee'"}"#,
                NO_TEXT,
            ),
            field(1, "end", "status", CUT_OFF, NO_TEXT),
            field(1, "usage", "turns", ("9", "11"), SUBAGENT_TURNS),
            lost(
                2,
                r#"{"op": "run", "cmd": "rm ./tests/test_export.py"}"#,
                NO_TEXT,
            ),
            lost(
                3,
                r#"{"op": "run", "cmd": "git add -A && git commit -qm 'F3: export'"}"#,
                NO_TEXT,
            ),
            field(3, "end", "status", CUT_OFF, NO_TEXT),
        ],
    },
    Case {
        format: "claude-code",
        source: "claude-code/failed-commands",
        converted: "claude-code-failed-commands",
        differences: &[],
    },
    Case {
        format: "claude-code",
        source: "claude-code/shell-cwd",
        converted: "claude-code-shell-cwd",
        differences: &[
            lost(
                1,
                r#"{"op": "run", "cmd": "rm test_export.py", "cwd": "tests"}"#,
                NO_TEXT,
            ),
            lost(1, r#"{"op": "run", "cmd": "cd tests"}"#, NO_TEXT),
            lost(
                1,
                r#"{"op": "run", "cmd": "git add -A && git commit -qm 'F1: late fee; export tests dropped'"}"#,
                NO_TEXT,
            ),
            field(1, "end", "status", CUT_OFF, NO_TEXT),
        ],
    },
    Case {
        format: "claude-code",
        source: "claude-code/odd-lines",
        converted: "claude-code-odd-lines",
        differences: &[
            lost(1, r#"{"op": "run", "cmd": "rm ledger/fees.py"}"#, NO_TEXT),
            lost(
                1,
                r#"{"op": "run", "cmd": "git add -A && git commit -qm 'F1: late fee'"}"#,
                NO_TEXT,
            ),
            field(1, "end", "status", CUT_OFF, NO_TEXT),
            // The API error line (`isApiErrorMessage`, model `<synthetic>`) is an agent
            // step of one model call to the converter; no model answered it.
            field(
                1,
                "usage",
                "turns",
                ("7", "8"),
                "the converter counts Claude Code's API error line as a model call",
            ),
        ],
    },
    Case {
        format: "claude-code",
        source: "claude-code/resumed",
        converted: "claude-code-resumed",
        differences: &[
            lost(
                1,
                r#"{"op": "run", "cmd": "git add -A && git commit -qm 'F1, F2: late fee and reminders'"}"#,
                NO_TEXT,
            ),
            field(1, "end", "status", CUT_OFF, NO_TEXT),
            field(1, "usage", "turns", ("6", "8"), SUBAGENT_TURNS),
            Difference {
                session: 2,
                what: What::Added(r#"{"op": "write", "path": "ledger/fees.py"}"#),
                why: COPY,
            },
            Difference {
                session: 2,
                what: What::Added(r#"{"op": "edit", "path": "feature_list.json"}"#),
                why: COPY,
            },
            Difference {
                session: 2,
                what: What::Added(r#"{"op": "edit", "path": "feature_list.json"}"#),
                why: COPY,
            },
            field(2, "usage", "turns", ("4", "10"), COPY),
            field(2, "usage", "input_tokens", ("11016", "22940"), COPY),
            field(2, "usage", "output_tokens", ("374", "886"), COPY),
            lost(
                2,
                r#"{"op": "run", "cmd": "git add -A && git commit -qm 'F3: CSV export'"}"#,
                NO_TEXT,
            ),
            field(2, "end", "status", CUT_OFF, NO_TEXT),
        ],
    },
];

fn data(path: &str) -> PathBuf {
    repo_root().join("tests/data").join(path)
}

fn converted_dir(case: &Case) -> PathBuf {
    data("atif/harbor").join(case.converted)
}

/// The sessions of `loopbench import FORMAT INPUT`: each its action lines (as
/// `common::trace_actions` keeps them, the `end` line without its summary, which names
/// the source).
fn import(format: &str, input: &Path) -> Vec<Vec<Value>> {
    let out = loopbench()
        .args(["import", format])
        .arg(input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "import {format} {}: {}",
        input.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = String::from_utf8(out.stdout).unwrap();
    let mut sessions: Vec<Vec<Value>> = Vec::new();
    for line in common::trace_actions(&trace).lines() {
        let mut line: Value = serde_json::from_str(line).unwrap();
        if line["op"] == "session" {
            sessions.push(Vec::new());
        }
        if line["op"] == "end" {
            line.as_object_mut().unwrap().remove("summary");
        }
        sessions
            .last_mut()
            .expect("a session line first")
            .push(line);
    }
    sessions
}

/// Whether every field of `part` is the same in `line`.
fn matches(line: &Value, part: &Value) -> bool {
    part.as_object()
        .unwrap()
        .iter()
        .all(|(k, v)| line.get(k) == Some(v))
}

/// Removes the one line of `lines` that `part` matches; panics, naming `why`, when
/// none does.
fn take(lines: &mut Vec<Value>, part: &str, why: &str, side: &str) {
    let part: Value = serde_json::from_str(part).unwrap();
    let Some(at) = lines.iter().position(|l| matches(l, &part)) else {
        panic!("{side} has no line {part} ({why}):\n{lines:#?}");
    };
    lines.remove(at);
}

/// Sets `field` of the line with `op` to `value` (`null`: removes it).
fn set(lines: &mut [Value], op: &str, field: &str, value: &Value) {
    let line = lines
        .iter_mut()
        .find(|l| l["op"] == op)
        .unwrap_or_else(|| panic!("no {op} line"));
    let fields = line.as_object_mut().unwrap();
    if value.is_null() {
        fields.remove(field);
    } else {
        fields.insert(field.to_string(), value.clone());
    }
}

/// `import atif` of the committed converter output of `case` against the original's
/// import, with its differences accounted for.
fn compare(case: &Case) {
    let original = import(case.format, &data(case.source));
    let atif = import("atif", &converted_dir(case));
    assert_eq!(
        original.len(),
        atif.len(),
        "{}: as many sessions as the original",
        case.converted
    );
    let (mut original, mut atif) = (original, atif);
    for (n, session) in atif.iter_mut().enumerate() {
        let usage = session.iter_mut().find(|l| l["op"] == "usage").unwrap();
        assert!(
            usage.as_object_mut().unwrap().remove("cost_usd").is_some(),
            "{}: session {}: {COST}, on every session",
            case.converted,
            n + 1
        );
    }
    for session in &mut original {
        for line in session.iter_mut().filter(|l| l["op"] == "usage") {
            line.as_object_mut().unwrap().remove("cost_usd");
        }
    }
    for d in case.differences {
        let s = usize::try_from(d.session - 1).unwrap();
        match d.what {
            What::Lost(part) => take(&mut original[s], part, d.why, "the original's import"),
            What::Added(part) => take(&mut atif[s], part, d.why, "the ATIF import"),
            What::Field(op, field, was, is) => {
                let (was, is): (Value, Value) = (
                    serde_json::from_str(was).unwrap(),
                    serde_json::from_str(is).unwrap(),
                );
                let line = |lines: &[Value]| lines.iter().find(|l| l["op"] == op).cloned();
                let field_of = |l: Option<Value>| l.and_then(|l| l.get(field).cloned());
                assert_eq!(
                    (field_of(line(&original[s])), field_of(line(&atif[s]))),
                    (
                        (!was.is_null()).then(|| was.clone()),
                        (!is.is_null()).then(|| is.clone())
                    ),
                    "{}: session {}: {op}.{field} ({})",
                    case.converted,
                    d.session,
                    d.why
                );
                set(&mut atif[s], op, field, &was);
            }
        }
    }
    for (n, (o, a)) in original.iter().zip(&atif).enumerate() {
        let show = |l: &[Value]| {
            l.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(
            o == a,
            "{}: session {}, action by action:\n--- import {} {}\n{}\n--- import atif {}\n{}",
            case.converted,
            n + 1,
            case.format,
            case.source,
            show(o),
            case.converted,
            show(a)
        );
    }
}

#[test]
fn the_converter_s_trajectories_import_as_the_transcripts_it_converted() {
    for case in CASES {
        compare(case);
    }
}

/// The transcript files of `case` the converter reads, one session each.
fn transcripts(case: &Case) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data(case.source))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
#[ignore = "installs Harbor from PyPI with a Python 3.12 or later"]
fn the_converter_writes_exactly_the_committed_trajectories() {
    let test = "import_atif_converted::the_converter_writes_exactly_the_committed_trajectories";
    let Some(python) = python_at_least(test, 12) else {
        return;
    };
    let Some(venv) = venv_of(test, "harbor", &python, HARBOR) else {
        return;
    };
    let bless = std::env::var_os("LOOPBENCH_BLESS").is_some();
    let tmp = tempfile::tempdir().unwrap();
    for case in CASES {
        let out = tmp.path().join(case.converted);
        let mut args = vec![case.format.as_ref(), out.as_os_str()];
        let files = transcripts(case);
        args.extend(files.iter().map(|f| f.as_os_str()));
        // The converter writes sets (Claude Code's `cwds`) in Python's hash order.
        let status = std::process::Command::new(venv.python())
            .env("PYTHONHASHSEED", "0")
            .arg("-c")
            .arg(CONVERT)
            .args(&args)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "the converter failed on {}: {status}",
            case.source
        );
        let committed = converted_dir(case);
        if bless {
            if committed.exists() {
                std::fs::remove_dir_all(&committed).unwrap();
            }
            std::fs::create_dir_all(committed.parent().unwrap()).unwrap();
            copy_dir(&out, &committed);
            continue;
        }
        let names = |dir: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(&out), names(&committed), "{}", case.converted);
        for name in names(&out) {
            let written = std::fs::read_to_string(out.join(&name)).unwrap();
            let kept = std::fs::read_to_string(committed.join(&name)).unwrap();
            assert!(
                written == kept,
                "{}/{name} is not what {HARBOR:?} writes now: regenerate it with \
                 LOOPBENCH_BLESS=1 and this test",
                case.converted
            );
        }
        compare(case);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}
