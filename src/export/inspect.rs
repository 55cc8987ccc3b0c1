//! Inspect out: one Inspect AI eval log per arm (Inspect's JSON log format, version 2,
//! named as Inspect names its logs: [`log_file_name`]), which Inspect's reader (`inspect_ai.log.read_eval_log`), its data frames
//! (`inspect_ai.analysis`) and its viewer (`inspect view`) load.
//!
//! The arm is the task, each trial a sample (its task the sample's id, its replicate the
//! epoch, from 1), each session a span of events made of its turns
//! ([`super::turns`]): a model event per turn of the agent (its text and calls), a tool
//! event per call with its result, an info event per message of the user and one for
//! how the session ended. Every rate of the metric table ([`crate::rates`]) is a score
//! of the sample (k: the trial's sessions, or the trial, that count for it), and so are
//! `features_verified`, `tokens` and `cost_usd`; each score's explanation is what
//! `loopbench show` says of the trial or of the sessions it counted.
//!
//! The samples are written as the trials are read, one at a time, into a file beside
//! the log; the results (each score's mean) are summed on the way, and the log is its
//! header (results included: Inspect reads them before the samples) and that file.

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::turns::{Call, CallResult, End, Turn, turns};
use super::{ArmExport, RunExporter, SessionExport, TrialExport, file_component};
use crate::agent::SessionKind;
use crate::error::{Error, IoContext, Result};
use crate::rates::{FEATURES_VERIFIED, Metric, Unit};
use crate::record::TrialRecord;
use crate::report::show::{session_block, trial_timeline};

/// The Inspect eval log version written.
pub const LOG_VERSION: u32 = 2;

/// The Inspect exporter.
pub struct Inspect;

/// The scores every sample may have, in order: `features_verified`, each rate, the
/// trial's usage.
fn score_names() -> Vec<&'static str> {
    let mut names = vec![FEATURES_VERIFIED];
    names.extend(Metric::ALL.iter().map(|m| m.name()));
    names.extend(["tokens", "cost_usd"]);
    names
}

impl RunExporter for Inspect {
    fn export_arm(
        &self,
        arm: &ArmExport,
        trials: &mut dyn Iterator<Item = Result<TrialExport>>,
        out: &Path,
    ) -> Result<usize> {
        let path = out.join(log_file_name(arm));
        // Inspect reads a JSON log's header (its results among it) before its samples
        // and stops there: the samples go to a file beside it first, the results are
        // summed on the way, and the log is the header followed by that file.
        let staged = out.join(format!(".{}.samples", file_component(arm.name)));
        let model = format!("loopbench/{}", arm.manifest.driver);
        let names = score_names();
        let mut sums = vec![(0.0f64, 0u64); names.len()];
        let mut samples = 0u64;
        let mut usage = crate::agent::Usage::default();
        {
            let file = std::fs::File::create_new(&staged)
                .io_context(|| format!("cannot create '{}'", staged.display()))?;
            let mut log = LogWriter {
                out: std::io::BufWriter::new(file),
                path: &staged,
            };
            for trial in trials {
                let trial = trial?;
                usage = usage + trial.record.usage;
                let sample = sample(&trial, &model)?;
                for (i, name) in names.iter().enumerate() {
                    if let Some(value) = sample["scores"][*name]["value"].as_f64() {
                        sums[i].0 += value;
                        sums[i].1 += 1;
                    }
                }
                log.write(if samples > 0 { b"," } else { b"[" })?;
                log.write(&encode(&sample, log.path)?)?;
                samples += 1;
            }
            log.write(if samples > 0 { b"]" } else { b"[]" })?;
            log.finish()?;
        }
        let mut header = header(arm, &model, &names);
        let mut results = json!({
            "total_samples": samples,
            "completed_samples": samples,
        });
        results["scores"] = Value::Array(
            names
                .iter()
                .zip(&sums)
                .map(|(name, (sum, n))| {
                    let mean = if *n > 0 { sum / *n as f64 } else { 0.0 };
                    json!({
                        "name": name,
                        "scorer": name,
                        "scored_samples": n,
                        "unscored_samples": samples - n,
                        "params": {},
                        "metrics": {"mean": {"name": "mean", "value": mean, "params": {}}},
                    })
                })
                .collect(),
        );
        header.insert("results".into(), results);
        if let Some(model_usage) = model_usage(&usage)
            && let Some(stats) = header.get_mut("stats")
        {
            stats["model_usage"] = json!({ model.as_str(): model_usage });
        }
        let head = encode(&Value::Object(header), &path)?;
        let head = head.strip_suffix(b"}").unwrap_or(&head);
        let file = std::fs::File::create_new(&path)
            .io_context(|| format!("cannot create '{}'", path.display()))?;
        let mut log = LogWriter {
            out: std::io::BufWriter::new(file),
            path: &path,
        };
        log.write(head)?;
        log.write(b",\"samples\":")?;
        let mut from = std::fs::File::open(&staged)
            .io_context(|| format!("cannot read '{}'", staged.display()))?;
        std::io::copy(&mut from, &mut log.out)
            .io_context(|| format!("cannot write '{}'", path.display()))?;
        log.write(b"}\n")?;
        log.finish()?;
        std::fs::remove_file(&staged)
            .io_context(|| format!("cannot remove '{}'", staged.display()))?;
        Ok(1)
    }
}

/// The log's file name as Inspect names its own, which is how its listing of a
/// directory (the viewer's, the data frames') finds a JSON log:
/// `TIMESTAMP_TASK_ID.json`, the run's start as the timestamp (`2026-12-06T22-38-13-00-00`),
/// the arm as the task (its `_` as `-`, for `_` separates the parts).
pub fn log_file_name(arm: &ArmExport) -> String {
    let m = arm.manifest;
    let started: String = m.started.chars().take(19).collect();
    let stamp = format!("{}-00-00", started.replace(':', "-"));
    let task = file_component(arm.name).replace('_', "-");
    format!(
        "{stamp}_{task}_{}.json",
        stable_id(&[&m.suite_hash, arm.name])
    )
}

/// A log being written.
struct LogWriter<'a> {
    out: std::io::BufWriter<std::fs::File>,
    path: &'a Path,
}

impl LogWriter<'_> {
    fn finish(mut self) -> Result<()> {
        self.out
            .flush()
            .io_context(|| format!("cannot write '{}'", self.path.display()))
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .io_context(|| format!("cannot write '{}'", self.path.display()))
    }
}

fn encode(value: &Value, path: &Path) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|e| Error::Tool(format!("cannot encode '{}': {e}", path.display())))
}

/// An id made from `parts`, stable from one export of a run to the next.
fn stable_id(parts: &[&str]) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update(&[0]);
    }
    hasher.finalize().to_hex()[..22].to_string()
}

/// The log's fields but its samples and results: the eval (the arm as the task), the
/// plan and the stats.
fn header(arm: &ArmExport, model: &str, names: &[&str]) -> Map<String, Value> {
    let m = arm.manifest;
    let mut task_args = Map::new();
    task_args.insert("arm".into(), json!(arm.name));
    if let Some(settings) = m.arm_settings.get(arm.name) {
        task_args.extend(settings.clone());
    }
    if let Some(replay) = &m.replay
        && let Some(i) = m.arms.iter().position(|a| a == arm.name)
    {
        task_args.insert("list_format".into(), json!(replay.formats.get(i)));
        task_args.insert("schema".into(), json!(replay.schema));
        task_args.insert("exit_check".into(), json!(replay.exit_check));
        task_args.insert("ledger".into(), json!(replay.ledger));
        task_args.insert("session_tokens".into(), json!(replay.session_tokens));
        task_args.insert("start".into(), json!(replay.start));
    }
    let run_id = stable_id(&[&m.suite_hash, &m.started]);
    let scorers: Vec<Value> = names
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "options": {},
                "metrics": [{"name": "inspect_ai/mean", "options": {}}],
                "metadata": {},
            })
        })
        .collect();
    let manifest = match serde_json::to_value(m) {
        Ok(Value::Object(manifest)) => manifest,
        _ => Map::new(),
    };
    let loopbench: Map<String, Value> = [
        "suite",
        "suite_hash",
        "seed",
        "replicates",
        "driver",
        "simulated",
        "baseline",
        "loopbench_version",
        "git_commit",
        "started",
        "finished",
    ]
    .into_iter()
    .filter_map(|key| Some((key.to_string(), manifest.get(key)?.clone())))
    .collect();
    let eval = json!({
        "eval_id": stable_id(&[&run_id, arm.name]),
        "run_id": run_id,
        "created": m.started,
        "task": arm.name,
        "task_id": stable_id(&[&m.suite_hash, arm.name]),
        "task_version": 0,
        "task_display_name": arm.name,
        "task_attribs": {},
        "task_args": task_args,
        "task_args_passed": {},
        "dataset": {
            "name": m.suite,
            "samples": m.tasks.len(),
            "sample_ids": m.tasks,
            "shuffled": false,
        },
        "model": model,
        "model_generate_config": {},
        "model_args": {},
        "config": {"epochs": m.replicates},
        "packages": {"loopbench": m.loopbench_version},
        "metadata": {"loopbench": loopbench},
        "scorers": scorers,
    });
    let mut header = Map::new();
    header.insert("version".into(), json!(LOG_VERSION));
    header.insert("status".into(), json!("success"));
    header.insert("eval".into(), eval);
    header.insert(
        "plan".into(),
        json!({
            "name": "plan",
            "steps": [{"solver": model, "params": {}, "params_passed": {}}],
            "config": {},
        }),
    );
    header.insert(
        "stats".into(),
        json!({
            "started_at": m.started,
            "completed_at": m.finished.clone().unwrap_or_else(|| m.started.clone()),
            "model_usage": {},
        }),
    );
    header
}

/// The sample of one trial.
fn sample(trial: &TrialExport, model: &str) -> Result<Value> {
    let record = &trial.record;
    let key = &record.key;
    let mut events = Vec::new();
    let mut messages = Vec::new();
    for session in &trial.sessions {
        session_events(session, model, &mut events, &mut messages);
    }
    let record_value = serde_json::to_value(record)
        .map_err(|e| Error::Tool(format!("cannot encode a trial record: {e}")))?;
    let mut sample = json!({
        "id": key.task,
        "epoch": key.replicate + 1,
        "input": key.trial_id,
        "target": "",
        "messages": messages,
        "output": {"model": model, "choices": [], "completion": ""},
        "scores": scores(trial),
        "metadata": {
            "trial_id": key.trial_id,
            "arm": key.arm,
            "task": key.task,
            "replicate": key.replicate,
            "trial_record": record_value,
        },
        "events": events,
        "total_time": record.wall_ms as f64 / 1000.0,
        "working_time": record.wall_ms as f64 / 1000.0,
        "uuid": stable_id(&[&key.trial_id]),
        "attachments": {},
    });
    if let Some(model_usage) = model_usage(&record.usage) {
        sample["model_usage"] = json!({ model: model_usage });
    }
    if let Some(error) = &record.error {
        sample["error"] = json!({"message": error, "traceback": "", "traceback_ansi": ""});
    }
    Ok(sample)
}

/// Inspect's `ModelUsage` of `usage`, when its tokens are known.
fn model_usage(usage: &crate::agent::Usage) -> Option<Value> {
    let tokens = usage.tokens()?;
    let mut value = json!({
        "input_tokens": usage.input_tokens.unwrap_or(0),
        "output_tokens": usage.output_tokens.unwrap_or(0),
        "total_tokens": tokens,
    });
    if let Some(cost) = usage.cost_usd {
        value["total_cost"] = json!(cost);
    }
    Some(value)
}

/// The events and messages of one session, added to the sample's.
fn session_events(
    session: &SessionExport,
    model: &str,
    events: &mut Vec<Value>,
    messages: &mut Vec<Value>,
) {
    let record = &session.record;
    let span = format!("{}#{}", record.key.trial_id, record.session);
    let kind = match record.kind {
        SessionKind::Initializer => "initializer",
        SessionKind::Coding => "coding",
    };
    let record_value = serde_json::to_value(record).unwrap_or(Value::Null);
    events.push(json!({
        "event": "span_begin",
        "id": span,
        "type": "session",
        "name": format!("session {} ({kind})", record.session),
        "working_start": 0.0,
        "metadata": {"session_record": record_value},
    }));
    let entries = session.trajectory.as_deref().unwrap_or_default();
    let (turns, end) = turns(entries);
    for turn in turns {
        match turn {
            Turn::User { text, from, cut } => {
                events.push(event(
                    &span,
                    json!({"event": "info", "source": from, "data": text}),
                    cut_metadata(&cut),
                ));
                messages.push(json!({"role": "user", "content": text, "source": "input"}));
            }
            Turn::Agent {
                message,
                calls,
                results,
                cut,
            } => {
                let tool_calls: Vec<Value> = calls.iter().map(tool_call).collect();
                let assistant = json!({
                    "role": "assistant",
                    "content": message,
                    "source": "generate",
                    "tool_calls": if tool_calls.is_empty() { Value::Null } else { json!(tool_calls) },
                    "model": model,
                });
                events.push(event(
                    &span,
                    json!({
                        "event": "model",
                        "model": model,
                        "input": [],
                        "tools": [],
                        "tool_choice": "auto",
                        "config": {},
                        "output": {
                            "model": model,
                            "choices": [{
                                "message": assistant,
                                "stop_reason": if calls.is_empty() { "stop" } else { "tool_calls" },
                            }],
                            "completion": message,
                        },
                    }),
                    cut_metadata(&cut),
                ));
                messages.push(assistant);
                let mut answered = vec![false; results.len()];
                for call in &calls {
                    let found = results
                        .iter()
                        .position(|r| r.call_id.as_deref() == Some(&call.id));
                    let result = found.map(|i| {
                        answered[i] = true;
                        &results[i]
                    });
                    events.push(event(&span, tool_event(call, result), Value::Null));
                    if let Some(result) = result {
                        messages.push(tool_message(Some(call), result));
                    }
                }
                for (result, _) in results.iter().zip(&answered).filter(|(_, a)| !**a) {
                    events.push(event(
                        &span,
                        json!({
                            "event": "info",
                            "source": "tool_result",
                            "data": {"content": result.content, "extra": result.extra},
                        }),
                        Value::Null,
                    ));
                    messages.push(tool_message(None, result));
                }
            }
        }
    }
    if let Some(end) = end {
        events.push(end_event(&span, &end));
    }
    events.push(json!({"event": "span_end", "id": span, "span_id": span, "working_start": 0.0}));
}

/// An event of span `span`, with `metadata` when it is not null.
fn event(span: &str, mut event: Value, metadata: Value) -> Value {
    event["span_id"] = json!(span);
    event["working_start"] = json!(0.0);
    if !metadata.is_null() {
        event["metadata"] = metadata;
    }
    event
}

fn cut_metadata(cut: &[super::turns::Cut]) -> Value {
    if cut.is_empty() {
        Value::Null
    } else {
        json!({"cut": cut.iter().map(super::turns::Cut::to_json).collect::<Vec<_>>()})
    }
}

fn end_event(span: &str, end: &End) -> Value {
    event(
        span,
        json!({"event": "info", "source": "loopbench", "data": {"end": end.to_json()}}),
        Value::Null,
    )
}

fn tool_call(call: &Call) -> Value {
    json!({
        "id": call.id,
        "function": call.name,
        "arguments": call.arguments,
        "type": "function",
    })
}

/// The tool event of `call` and its result, when it has one.
fn tool_event(call: &Call, result: Option<&CallResult>) -> Value {
    let mut event = json!({
        "event": "tool",
        "type": "function",
        "id": call.id,
        "function": call.name,
        "arguments": call.arguments,
        "result": result.and_then(|r| r.content.clone()).unwrap_or_default(),
        "events": [],
    });
    if let Some(result) = result {
        if result.failed {
            event["error"] = json!({
                "type": "unknown",
                "message": result.content.clone().unwrap_or_default(),
            });
        }
        if !result.extra.is_empty() {
            event["metadata"] = Value::Object(result.extra.clone());
        }
    }
    event
}

fn tool_message(call: Option<&Call>, result: &CallResult) -> Value {
    let mut message = json!({
        "role": "tool",
        "content": result.content.clone().unwrap_or_default(),
        "tool_call_id": result.call_id,
        "function": call.map(|c| c.name.clone()),
    });
    if result.failed {
        message["error"] = json!({
            "type": "unknown",
            "message": result.content.clone().unwrap_or_default(),
        });
    }
    if !result.extra.is_empty() {
        message["metadata"] = Value::Object(result.extra.clone());
    }
    message
}

/// The sample's scores: `features_verified`, every rate (its k for the trial, with k
/// and n in its metadata) and the trial's tokens and cost where known; each explained
/// by what `show` says of the trial or of the sessions that count.
fn scores(trial: &TrialExport) -> Value {
    let record = &trial.record;
    let timeline = trial_timeline(
        record,
        &trial
            .sessions
            .iter()
            .map(|s| s.record.clone())
            .collect::<Vec<_>>(),
    );
    let heading = trial_heading(record);
    let mut scores = Map::new();
    scores.insert(
        FEATURES_VERIFIED.into(),
        json!({
            "value": record.metrics.features_verified,
            "answer": format!("{} of {}", record.metrics.features_verified, record.metrics.features_total),
            "explanation": timeline,
            "metadata": {"features_total": record.metrics.features_total},
        }),
    );
    let trial_row = match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let session_rows: Vec<Map<String, Value>> = trial
        .sessions
        .iter()
        .map(|s| match serde_json::to_value(&s.record) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        })
        .collect();
    for metric in Metric::ALL {
        let def = metric.def();
        let (mut k, mut n) = (0u64, 0u64);
        let mut explanation = Vec::new();
        match def.unit {
            Unit::Trial => {
                (k, n) = def.tally.tally_row(&trial_row);
                explanation.push(heading.clone());
            }
            Unit::Session => {
                let mut previous = None;
                for (session, row) in trial.sessions.iter().zip(&session_rows) {
                    let coding = session.record.kind == SessionKind::Coding;
                    if coding {
                        let (sk, sn) = def.tally.tally_row(row);
                        k += sk;
                        n += sn;
                        if sk > 0 {
                            explanation.push(session_block(&session.record, previous, true));
                        }
                    }
                    previous = Some(&session.record);
                }
            }
        }
        let mut text = format!("{k} of {n}: {}", def.meaning);
        for part in explanation {
            text.push_str("\n\n");
            text.push_str(part.trim_end());
        }
        scores.insert(
            def.name.into(),
            json!({
                "value": k,
                "explanation": text,
                "metadata": {"k": k, "n": n, "unit": match def.unit { Unit::Session => "sessions", Unit::Trial => "trial" }},
            }),
        );
    }
    let usage = &record.usage;
    if let Some(tokens) = usage.tokens() {
        scores.insert(
            "tokens".into(),
            json!({
                "value": tokens,
                "explanation": format!(
                    "input_tokens {}, output_tokens {}, over {} sessions",
                    usage.input_tokens.unwrap_or(0),
                    usage.output_tokens.unwrap_or(0),
                    record.metrics.sessions
                ),
            }),
        );
    }
    if let Some(cost) = usage.cost_usd {
        scores.insert(
            "cost_usd".into(),
            json!({
                "value": cost,
                "explanation": format!("${cost:.2} over {} sessions", record.metrics.sessions),
            }),
        );
    }
    Value::Object(scores)
}

/// The first lines of the trial's timeline: how it ended, and a premature victory.
fn trial_heading(record: &TrialRecord) -> String {
    trial_timeline(record, &[]).trim_end().to_string()
}
