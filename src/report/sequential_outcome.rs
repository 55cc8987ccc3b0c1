//! Where a sequential run stands, as the verdict tells it: read back from the files the
//! run wrote (`sequential.json`, `sequential-state.json`), so that `report` and `show`
//! say the same as the run did.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::format::{fixed, pp, pvalue};
use crate::error::{Error, Result, ResultsDirError};
use crate::rates::{Better, better_of};
use crate::run_dir::RunDir;

/// One arm that crossed its boundary, at the look where it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Crossing {
    /// The arm.
    pub arm: String,
    /// The look, 1-based.
    pub look: usize,
    /// Pooled two-proportion z (positive: the arm's rate is higher).
    pub z: f64,
    /// The boundary |z| reached.
    pub boundary: f64,
    /// The repeated (look-adjusted) p-value.
    pub p_repeated: Option<f64>,
    /// The repeated confidence interval of rate(arm) − rate(baseline).
    pub ci: Option<(f64, f64)>,
}

/// A sequential run's stopping point.
#[derive(Debug, Clone, PartialEq)]
pub struct SequentialOutcome {
    /// The metric the looks compare.
    pub metric: String,
    /// Looks of the design.
    pub looks: usize,
    /// Looks judged so far.
    pub looks_done: usize,
    /// Every arm crossed, or the last look is done.
    pub finished: bool,
    /// The arms that crossed, in the order they did.
    pub crossed: Vec<Crossing>,
    /// Arms besides the baseline that have not crossed.
    pub open: Vec<String>,
}

/// `sequential-state.json`: where a run of looks stands. Written by the run after each
/// look and read back by the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialState {
    /// Looks of the design.
    pub looks: usize,
    /// Looks judged so far.
    pub looks_done: usize,
    /// Every arm crossed, or the last look is done.
    pub finished: bool,
    /// The look to run next; `None` once finished.
    pub next_look: Option<usize>,
    /// The arms that still get trials (the baseline included while any other runs).
    #[serde(default)]
    pub running: Vec<String>,
    /// The metric the looks compare (absent in files written before it was recorded).
    #[serde(default)]
    pub metric: Option<String>,
}

/// One comparison at one look: a row of `sequential.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookRow {
    /// The look, 1-based.
    pub look: usize,
    /// Replicates per (arm, task) the look counts.
    pub replicates: u32,
    /// The arm compared with the baseline.
    pub arm: String,
    /// Baseline events.
    pub base_k: u64,
    /// Baseline units.
    pub base_n: u64,
    /// The arm's events.
    pub k: u64,
    /// The arm's units.
    pub n: u64,
    /// Pooled two-proportion z (positive: the arm's rate is higher).
    pub z: f64,
    /// The look's boundary |z| must reach.
    pub boundary: f64,
    /// The arm crossed and stops here.
    pub crossed: bool,
    /// The repeated (look-adjusted) p-value.
    pub p_repeated: Option<f64>,
    /// The repeated confidence interval of rate(arm) − rate(baseline).
    pub ci_low: Option<f64>,
    /// Its upper bound.
    pub ci_high: Option<f64>,
}

impl SequentialOutcome {
    /// The outcome of the sequential run in `dir`; `None` when the run is not one.
    pub fn read(dir: &RunDir) -> Result<Option<SequentialOutcome>> {
        let Some(state) = read_json::<SequentialState>(&dir.sequential_state_json())? else {
            return Ok(None);
        };
        let rows: Vec<LookRow> = read_json(&dir.sequential_json())?.unwrap_or_default();
        let mut crossed: Vec<Crossing> = Vec::new();
        let mut arms: Vec<&str> = Vec::new();
        for row in &rows {
            if !arms.contains(&row.arm.as_str()) {
                arms.push(&row.arm);
            }
            if row.crossed {
                crossed.push(Crossing {
                    arm: row.arm.clone(),
                    look: row.look,
                    z: row.z,
                    boundary: row.boundary,
                    p_repeated: row.p_repeated,
                    ci: row.ci_low.zip(row.ci_high),
                });
            }
        }
        let open = arms
            .into_iter()
            .filter(|a| !crossed.iter().any(|c| c.arm == *a))
            .map(str::to_string)
            .collect();
        Ok(Some(SequentialOutcome {
            metric: state
                .metric
                .unwrap_or_else(|| "the sequential metric".into()),
            looks: state.looks,
            looks_done: state.looks_done,
            finished: state.finished,
            crossed,
            open,
        }))
    }

    /// Where the run stopped and why, in one sentence: "stopped at look 2 of 5: every arm
    /// crossed its boundary", "ran all 5 looks", or "looks 1 to 2 of 5 so far".
    pub fn stop_text(&self) -> String {
        if self.open.is_empty() && self.looks_done > 0 {
            format!(
                "stopped at look {} of {}: every arm crossed its boundary",
                self.looks_done, self.looks
            )
        } else if self.looks_done >= self.looks || self.finished {
            format!(
                "ran all {} looks; no boundary crossed for {}",
                self.looks,
                self.open.join(", ")
            )
        } else {
            format!(
                "looks 1 to {} of {} so far; still running: {}",
                self.looks_done,
                self.looks,
                self.open.join(", ")
            )
        }
    }

    /// Each crossing in words: "single lower (better) at look 2, z -4.12 past ±2.96,
    /// repeated p 4.0e-4, repeated CI -40.1 pp … -12.3 pp".
    pub fn crossing_texts(&self) -> Vec<String> {
        let better = better_of(&self.metric);
        self.crossed
            .iter()
            .map(|c| {
                let higher = c.z > 0.0;
                let judged = match (better, higher) {
                    (Some(Better::Lower), false) | (Some(Better::Higher), true) => " (better)",
                    (Some(_), _) => " (worse)",
                    (None, _) => "",
                };
                let mut text = format!(
                    "{} {}{judged} at look {}, z {} past ±{}",
                    c.arm,
                    if higher { "higher" } else { "lower" },
                    c.look,
                    fixed(c.z, 2),
                    fixed(c.boundary, 2)
                );
                if let Some(p) = c.p_repeated {
                    text += &format!(", repeated p {}", pvalue(p));
                }
                if let Some((low, high)) = c.ci {
                    text += &format!(", repeated CI {} … {}", pp(low), pp(high));
                }
                text
            })
            .collect()
    }

    /// What the p-values of a sequential run mean, for the reader of the verdict.
    pub fn adjustment_note(&self) -> String {
        let looks = self.looks_done.max(1);
        format!(
            "the looks' p and intervals are repeated-confidence ones (adjusted for {looks} \
             look{}), the tables' Holm p fixed-sample ones",
            if looks == 1 { "" } else { "s" }
        )
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("cannot read '{}'", path.display()), e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        ResultsDirError::NotWhatLoopbenchWrote {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            reason: e.to_string(),
        }
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::open_run_dir;

    fn write(dir: &RunDir, state: &str, rows: &str) {
        std::fs::write(dir.sequential_state_json(), state).unwrap();
        std::fs::write(dir.sequential_json(), rows).unwrap();
    }

    const ROWS: &str = r#"[
      {"look":1,"replicates":5,"arm":"single","base_k":1,"base_n":40,"k":9,"n":10,
       "z":-1.5,"boundary":4.2,"crossed":false,"p_repeated":1.0,"ci_low":-0.6,"ci_high":0.1},
      {"look":1,"replicates":5,"arm":"yaml","base_k":1,"base_n":40,"k":1,"n":40,
       "z":0.0,"boundary":4.2,"crossed":false,"p_repeated":1.0,"ci_low":-0.1,"ci_high":0.1},
      {"look":2,"replicates":10,"arm":"single","base_k":2,"base_n":80,"k":9,"n":20,
       "z":-4.1234,"boundary":2.9626,"crossed":true,"p_repeated":0.0004,"ci_low":-0.401,"ci_high":-0.123},
      {"look":2,"replicates":10,"arm":"yaml","base_k":2,"base_n":80,"k":3,"n":80,
       "z":0.5,"boundary":2.9626,"crossed":false,"p_repeated":1.0,"ci_low":-0.1,"ci_high":0.1}
    ]"#;

    #[test]
    fn a_run_without_the_files_is_not_sequential() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_run_dir(tmp.path());
        assert_eq!(SequentialOutcome::read(&dir).unwrap(), None);
    }

    #[test]
    fn a_crossing_is_told_with_its_look_direction_and_repeated_p() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_run_dir(tmp.path());
        write(
            &dir,
            r#"{"looks":5,"looks_done":2,"finished":false,"next_look":3,"running":["json","yaml"],"metric":"premature_done"}"#,
            ROWS,
        );
        let o = SequentialOutcome::read(&dir).unwrap().unwrap();
        assert_eq!(o.open, vec!["yaml".to_string()]);
        assert_eq!(
            o.stop_text(),
            "looks 1 to 2 of 5 so far; still running: yaml"
        );
        assert_eq!(
            o.crossing_texts(),
            vec![
                "single lower (better) at look 2, z -4.12 past ±2.96, repeated p 4.0e-4, \
                 repeated CI -40.1 pp … -12.3 pp"
                    .to_string()
            ]
        );
    }

    #[test]
    fn the_last_look_without_a_crossing_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_run_dir(tmp.path());
        write(
            &dir,
            r#"{"looks":2,"looks_done":2,"finished":true,"next_look":null,"running":[],"metric":"premature_done"}"#,
            ROWS,
        );
        let o = SequentialOutcome::read(&dir).unwrap().unwrap();
        assert_eq!(
            o.stop_text(),
            "ran all 2 looks; no boundary crossed for yaml"
        );
    }

    #[test]
    fn a_damaged_state_file_names_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_run_dir(tmp.path());
        write(&dir, "{\n\"looks\": \"two\"}", "[]");
        let err = SequentialOutcome::read(&dir).unwrap_err();
        let Error::ResultsDir(ResultsDirError::NotWhatLoopbenchWrote {
            path, line, column, ..
        }) = err
        else {
            panic!("{err:?}");
        };
        assert_eq!(path, dir.sequential_state_json());
        assert_eq!((line, column), (2, 14));
    }
}
