//! What the reports need from `manifest.json`, read tolerantly: a results directory may
//! have no manifest, and older or newer manifests may lack or add fields.

use serde_json::Value;

use crate::error::{Result, ResultsDirError};
use crate::run_dir::RunDir;

/// The manifest fields the reports use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    /// `manifest.json` exists.
    pub has_manifest: bool,
    /// Suite name.
    pub suite: Option<String>,
    /// Arms in canonical order (empty without a manifest).
    pub arms: Vec<String>,
    /// The numbers come from the simulated agent.
    pub simulated: bool,
    /// The arm the others are compared with, when the manifest names one.
    pub baseline: Option<String>,
    /// RFC 3339 start time.
    pub started: Option<String>,
    /// `I/N` when the run is one shard of a study (None for a whole or merged run).
    pub shard: Option<String>,
}

impl RunInfo {
    /// Reads the `manifest.json` of `dir` if it exists. A manifest that is not a JSON
    /// object is bad input; a missing or mistyped field is taken as absent.
    pub fn read(dir: &RunDir) -> Result<RunInfo> {
        let path = dir.manifest();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RunInfo::default()),
            Err(e) => {
                return Err(ResultsDirError::Unreadable {
                    path,
                    reason: e.to_string(),
                }
                .into());
            }
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| ResultsDirError::NotJson {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if !value.is_object() {
            return Err(ResultsDirError::ManifestNotAnObject { path }.into());
        }
        let string = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
        Ok(RunInfo {
            has_manifest: true,
            suite: string("suite"),
            arms: value
                .get("arms")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            simulated: value
                .get("simulated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            baseline: string("baseline"),
            started: string("started"),
            shard: string("shard"),
        })
    }

    /// `present` (arm names found in the data) in canonical order: the manifest's order,
    /// then arms the manifest does not list sorted by name; `baseline` first.
    pub fn order_arms(&self, present: &[String], baseline: Option<&str>) -> Vec<String> {
        let mut ordered: Vec<String> = self
            .arms
            .iter()
            .filter(|a| present.contains(a))
            .cloned()
            .collect();
        let mut rest: Vec<String> = present
            .iter()
            .filter(|a| !ordered.contains(a))
            .cloned()
            .collect();
        rest.sort();
        ordered.extend(rest);
        if let Some(pos) = baseline.and_then(|b| ordered.iter().position(|a| a == b)) {
            let base = ordered.remove(pos);
            ordered.insert(0, base);
        }
        ordered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::open_run_dir;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_directory_without_manifest_gives_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            RunInfo::read(&open_run_dir(dir.path())).unwrap(),
            RunInfo::default()
        );
    }

    #[test]
    fn unknown_and_missing_fields_are_tolerated() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_run_dir(tmp.path());
        std::fs::write(
            dir.manifest(),
            r#"{"arms":["b","a"],"simulated":true,"baseline":"a","extra":1}"#,
        )
        .unwrap();
        let info = RunInfo::read(&dir).unwrap();
        assert!(info.simulated && info.has_manifest);
        assert_eq!(info.arms, names(&["b", "a"]));
        assert_eq!(info.baseline.as_deref(), Some("a"));
        assert_eq!(info.suite, None);
    }

    #[test]
    fn arms_follow_the_manifest_then_names_with_the_baseline_first() {
        let info = RunInfo {
            arms: names(&["yaml", "markdown", "json"]),
            ..RunInfo::default()
        };
        let present = names(&["json", "markdown", "zeta", "yaml", "alpha"]);
        assert_eq!(
            info.order_arms(&present, Some("json")),
            names(&["json", "yaml", "markdown", "alpha", "zeta"])
        );
        assert_eq!(
            RunInfo::default().order_arms(&present, Some("yaml")),
            names(&["yaml", "alpha", "json", "markdown", "zeta"])
        );
    }
}
