//! One ATIF document as the importer reads it: read whole within a bound and checked to
//! be a trajectory; the root its paths are relative to, the session's usage and how it
//! ended. Everything but the document's shape is read leniently: a missing or mistyped
//! field is absent, never an error.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::agent::Usage;
use crate::agent::trace::EndStatus;
use crate::error::{Error, Result, TranscriptError};
use crate::import::session::JSON_LINE_MAX;

/// What an ATIF file must be, for messages about one that is not.
pub const EXPECTED: &str =
    "an ATIF trajectory (a JSON object with \"schema_version\": \"ATIF-v1.N\" and \"steps\")";

/// One trajectory document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file it was read from.
    pub file: PathBuf,
    /// The document.
    pub value: Map<String, Value>,
}

/// Whether `value` is a trajectory: an object whose `schema_version` names ATIF.
pub fn is_trajectory(value: &Map<String, Value>) -> bool {
    value
        .get("schema_version")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("ATIF-"))
}

/// The JSON of the file `path`, read whole when it is at most [`JSON_LINE_MAX`] bytes.
pub fn read_json(path: &Path) -> Result<std::result::Result<Value, String>> {
    let cannot = |e: std::io::Error| TranscriptError::TrajectoryUnreadable {
        file: path.to_path_buf(),
        reason: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(JSON_LINE_MAX as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() > JSON_LINE_MAX {
        return Ok(Err(format!(
            "a file longer than {} MiB",
            JSON_LINE_MAX >> 20
        )));
    }
    Ok(serde_json::from_slice(&bytes).map_err(|e| format!("not JSON ({e})")))
}

impl Document {
    /// Reads the trajectory at `path`; a file that is not one is bad input naming it
    /// and what was expected.
    pub fn read(path: &Path) -> Result<Document> {
        let found = match read_json(path)? {
            Ok(Value::Object(value)) if is_trajectory(&value) => {
                if !matches!(value.get("steps"), Some(Value::Array(_))) {
                    return Err(bad_file(path, "a trajectory without a \"steps\" array"));
                }
                return Ok(Document {
                    file: path.to_path_buf(),
                    value,
                });
            }
            Ok(Value::Object(value)) => match value.get("schema_version") {
                Some(v) => format!("a JSON object with \"schema_version\": {v}"),
                None => "a JSON object without \"schema_version\"".to_string(),
            },
            Ok(_) => "JSON that is not an object".to_string(),
            Err(e) => e,
        };
        Err(bad_file(path, &found))
    }

    /// Its steps (checked to be an array when read).
    pub fn steps(&self) -> &[Value] {
        self.value
            .get("steps")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The file its `continued_trajectory_ref` names, beside it: only a relative path
    /// that stays in its directory (a trajectory names no file elsewhere); `Err` with
    /// why for any other.
    pub fn continuation(&self) -> Option<std::result::Result<PathBuf, TranscriptError>> {
        let given = self.value.get("continued_trajectory_ref")?;
        let Some(name) = given.as_str() else {
            return Some(Err(TranscriptError::ContinuationNotAPath {
                file: self.file.clone(),
                given: given.to_string(),
            }));
        };
        let path = Path::new(name);
        let plain = path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !plain || name.is_empty() {
            return Some(Err(TranscriptError::ContinuationNotBeside {
                file: self.file.clone(),
                name: name.to_string(),
            }));
        }
        let dir = self.file.parent().unwrap_or(Path::new(""));
        Some(Ok(dir.join(path)))
    }

    /// What names the session for people: its `trajectory_id`, else its `session_id`.
    pub fn id(&self) -> Option<&str> {
        ["trajectory_id", "session_id"]
            .iter()
            .find_map(|k| self.value.get(*k).and_then(Value::as_str))
    }

    /// When its first step was taken, in ns since the epoch, when it says.
    pub fn started(&self) -> Option<i128> {
        self.steps()
            .iter()
            .find_map(|s| s.get("timestamp").and_then(Value::as_str))
            .and_then(crate::timestamp::rfc3339_nanos)
    }

    /// loopbench's own record of the session, in a trajectory loopbench exported
    /// (`extra.loopbench`).
    pub fn loopbench(&self) -> Option<&Map<String, Value>> {
        self.value
            .get("extra")
            .and_then(|e| e.get("loopbench"))
            .and_then(Value::as_object)
    }

    /// The directory the agent worked in, as the trajectory says: the `cwd` of its first
    /// step that has one (Harbor's converters keep the CLI's), else the agent's only
    /// `cwds` (Claude Code's converter), else the agent's `cwd` (Codex's session_meta, as
    /// Harbor's Codex converter keeps it). loopbench's own trajectories name paths
    /// relative to the work directory.
    pub fn cwd(&self) -> Option<&str> {
        let from_steps = self.steps().iter().find_map(|s| {
            s.get("extra")
                .and_then(|e| e.get("cwd"))
                .and_then(Value::as_str)
        });
        let agent_extra = self.value.get("agent").and_then(|a| a.get("extra"));
        from_steps
            .or_else(|| {
                let cwds = agent_extra?.get("cwds").and_then(Value::as_array)?;
                match cwds.as_slice() {
                    [only] => only.as_str(),
                    _ => None,
                }
            })
            .or_else(|| agent_extra?.get("cwd").and_then(Value::as_str))
    }

    /// The session's usage: the trajectory's `final_metrics`, else the sum of its steps'
    /// `metrics` (see docs/formats.md, "ATIF in"); a field neither gives is absent.
    pub fn usage(&self) -> Usage {
        let totals = self.value.get("final_metrics");
        let total = |key: &str| totals.and_then(|t| t.get(key));
        let steps: Vec<&Value> = self.counted_steps().collect();
        let summed = |key: &str| {
            steps
                .iter()
                .filter_map(|s| {
                    s.get("metrics")
                        .and_then(|m| m.get(key))
                        .and_then(Value::as_u64)
                })
                .reduce(u64::saturating_add)
        };
        let cost_summed = steps
            .iter()
            .filter_map(|s| {
                s.get("metrics")
                    .and_then(|m| m.get("cost_usd"))
                    .and_then(Value::as_f64)
            })
            .reduce(|a, b| a + b);
        Usage {
            turns: total("extra")
                .and_then(|e| e.get("turns"))
                .and_then(Value::as_u64)
                .or_else(|| self.model_calls()),
            input_tokens: total("total_prompt_tokens")
                .and_then(Value::as_u64)
                .or_else(|| summed("prompt_tokens")),
            output_tokens: total("total_completion_tokens")
                .and_then(Value::as_u64)
                .or_else(|| summed("completion_tokens")),
            cost_usd: total("total_cost_usd")
                .and_then(Value::as_f64)
                .or(cost_summed),
        }
    }

    /// The agent's steps that are the session's own (not copied from an earlier
    /// trajectory for context).
    fn counted_steps(&self) -> impl Iterator<Item = &Value> {
        self.steps().iter().filter(|s| {
            s.get("source").and_then(Value::as_str) == Some("agent")
                && s.get("is_copied_context").and_then(Value::as_bool) != Some(true)
        })
    }

    /// Model calls: over the agent's own steps, each `llm_call_count`, else 1 for a step
    /// with `metrics`; `None` when no step says either.
    fn model_calls(&self) -> Option<u64> {
        self.counted_steps()
            .filter_map(|s| {
                s.get("llm_call_count")
                    .and_then(Value::as_u64)
                    .or_else(|| s.get("metrics").is_some().then_some(1))
            })
            .reduce(u64::saturating_add)
    }

    /// How the session ended, when the trajectory says: loopbench's record of it
    /// (`extra.loopbench.end.reason`): cut off (`interrupted`, `timeout`, `error`) is
    /// `interrupted`, `out_of_budget` stays; anything else is `completed`, and so is a
    /// trajectory that does not say. Never `declared_complete`: what an agent claims is
    /// not evidence.
    pub fn status(&self) -> EndStatus {
        let reason = self
            .loopbench()
            .and_then(|l| l.get("end"))
            .and_then(|e| e.get("reason"))
            .and_then(Value::as_str);
        match reason {
            Some("interrupted" | "timeout" | "error") => EndStatus::Interrupted,
            Some("out_of_budget") => EndStatus::OutOfBudget,
            _ => EndStatus::Completed,
        }
    }

    /// The session's number in the run loopbench exported it from
    /// (`extra.loopbench.session`).
    pub fn number(&self) -> Option<u32> {
        self.loopbench()
            .and_then(|l| l.get("session"))
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    }

    /// loopbench's record says the session was divergent (its trace reset a file).
    pub fn recorded_divergent(&self) -> bool {
        self.loopbench()
            .and_then(|l| l.get("session_record"))
            .and_then(|r| r.get("divergent"))
            .and_then(Value::as_bool)
            == Some(true)
    }
}

/// The error for a file that is not a trajectory.
fn bad_file(path: &Path, found: &str) -> Error {
    TranscriptError::BadDocument {
        file: path.to_path_buf(),
        expected: EXPECTED.into(),
        found: found.into(),
    }
    .into()
}

/// The text of a `message` or a result's `content`: a string, or the text of its parts
/// (an image or audio part has none).
pub fn text_of(value: Option<&Value>) -> String {
    crate::agent::trajectory::content_text(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn document(value: Value) -> Document {
        let Value::Object(value) = value else {
            unreachable!()
        };
        Document {
            file: PathBuf::from("/t/session-1.json"),
            value,
        }
    }

    #[test]
    fn usage_is_the_final_metrics_else_the_steps_metrics() {
        let d = document(json!({"schema_version": "ATIF-v1.8", "steps": [
            {"step_id": 1, "source": "agent", "message": "", "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.5}},
            {"step_id": 2, "source": "agent", "message": "", "llm_call_count": 2, "metrics": {"prompt_tokens": 5}},
            {"step_id": 3, "source": "agent", "message": "", "is_copied_context": true, "metrics": {"prompt_tokens": 1000}},
            {"step_id": 4, "source": "user", "message": "go"}],
            "final_metrics": {"total_completion_tokens": 40}}));
        let u = d.usage();
        assert_eq!(u.turns, Some(3));
        assert_eq!(u.input_tokens, Some(15));
        assert_eq!(u.output_tokens, Some(40));
        assert_eq!(u.cost_usd, Some(0.5));
        let none = document(json!({"schema_version": "ATIF-v1.8", "steps": [
            {"step_id": 1, "source": "agent", "message": "hi"}]}));
        assert_eq!(none.usage(), Usage::default());
    }

    #[test]
    fn a_continuation_is_a_file_beside_the_trajectory_and_nothing_else() {
        let with = |r: Value| {
            document(
                json!({"schema_version": "ATIF-v1.8", "steps": [], "continued_trajectory_ref": r}),
            )
        };
        assert_eq!(
            with(json!("session-2.json")).continuation(),
            Some(Ok(PathBuf::from("/t/session-2.json")))
        );
        for bad in ["../x.json", "/etc/passwd", ""] {
            assert_eq!(
                with(json!(bad)).continuation(),
                Some(Err(TranscriptError::ContinuationNotBeside {
                    file: PathBuf::from("/t/session-1.json"),
                    name: bad.into()
                }))
            );
        }
        assert_eq!(
            with(json!(3)).continuation(),
            Some(Err(TranscriptError::ContinuationNotAPath {
                file: PathBuf::from("/t/session-1.json"),
                given: "3".into()
            }))
        );
    }

    #[test]
    fn only_loopbench_s_record_of_the_end_gives_a_status_and_never_declared_complete() {
        let ended = |reason: &str| {
            document(json!({"schema_version": "ATIF-v1.8", "steps": [],
                "extra": {"loopbench": {"end": {"reason": reason}}}}))
            .status()
        };
        assert_eq!(ended("interrupted"), EndStatus::Interrupted);
        assert_eq!(ended("timeout"), EndStatus::Interrupted);
        assert_eq!(ended("out_of_budget"), EndStatus::OutOfBudget);
        assert_eq!(ended("declared_complete"), EndStatus::Completed);
        let harbor = document(json!({"schema_version": "ATIF-v1.6", "steps": []}));
        assert_eq!(harbor.status(), EndStatus::Completed);
    }
}
