//! A run written out in a format other tools read (`loopbench export`): each format is
//! one [`RunExporter`], which writes an arm's trials, read one at a time from the run's
//! records ([`run_records`]), into a directory. (The tables of a report have their own
//! exporters, of one table model: `report::export`.)
//!
//! An export holds nothing the run directory does not: it is made of the records, the
//! manifest and the trajectories as they were written (masked and cut there), and adds
//! no text of its own but names and counts.

pub mod atif;
pub mod inspect;
pub mod run_records;
pub mod turns;

use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};
use crate::store::{Manifest, check_output_dir};
pub use run_records::{RunRecords, SessionExport, TrialExport};

/// The formats `export --to` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// ATIF trajectories (Harbor's Agent Trajectory Interchange Format), one file per
    /// session, the sessions of a trial chained.
    Atif,
    /// Inspect AI eval logs, one per arm: each trial a sample, each session a span of
    /// events, every metric a score.
    Inspect,
}

impl Format {
    /// The format's name, as `--to` takes it and as the default output folder is named.
    pub fn name(self) -> &'static str {
        match self {
            Format::Atif => "atif",
            Format::Inspect => "inspect",
        }
    }

    /// The exporter that writes it.
    pub fn exporter(self) -> Box<dyn RunExporter> {
        match self {
            Format::Atif => Box::new(atif::Atif),
            Format::Inspect => Box::new(inspect::Inspect),
        }
    }
}

/// The arm being exported, and the run it belongs to.
pub struct ArmExport<'a> {
    /// The arm's name.
    pub name: &'a str,
    /// Its finished trials.
    pub trials: usize,
    /// The run's manifest.
    pub manifest: &'a Manifest,
}

/// One export format.
pub trait RunExporter {
    /// Writes the trials of `arm`, which `trials` reads one at a time in the order of
    /// the tables, under `out` (an empty directory the whole run's export shares);
    /// returns how many files it wrote.
    fn export_arm(
        &self,
        arm: &ArmExport,
        trials: &mut dyn Iterator<Item = Result<TrialExport>>,
        out: &Path,
    ) -> Result<usize>;
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The directory.
    pub out: PathBuf,
    /// The arms exported.
    pub arms: usize,
    /// The trials exported.
    pub trials: usize,
    /// The files written.
    pub files: usize,
}

/// Exports the run `records` opened as `format` into `out`, which must not exist or be
/// empty (an export is never mixed into another, nor into anything else).
pub fn export_run(records: &mut RunRecords, format: Format, out: &Path) -> Result<Exported> {
    claim_empty_dir(out)?;
    let exporter = format.exporter();
    let manifest = records.manifest().clone();
    let mut exported = Exported {
        out: out.to_path_buf(),
        arms: 0,
        trials: 0,
        files: 0,
    };
    for (index, (name, trials)) in records.arms().into_iter().enumerate() {
        let arm = ArmExport {
            name: &name,
            trials,
            manifest: &manifest,
        };
        let mut read = (0..trials).map(|n| records.trial(index, n));
        exported.files += exporter.export_arm(&arm, &mut read, out)?;
        exported.arms += 1;
        exported.trials += trials;
    }
    Ok(exported)
}

/// Makes `dir` (and its parents) unless it exists; refuses one that is not an empty
/// directory. Exit 2, naming it.
fn claim_empty_dir(dir: &Path) -> Result<()> {
    check_output_dir(dir)?;
    if dir.is_dir() {
        let mut entries =
            std::fs::read_dir(dir).io_context(|| format!("cannot list '{}'", dir.display()))?;
        if let Some(entry) = entries.next() {
            let name = entry
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .unwrap_or_default();
            return Err(Error::BadInput(format!(
                "'{}' is not empty (it holds '{name}'); an export is written only into a new \
                 or empty directory, never mixed with other files: remove it or give --out \
                 another directory",
                dir.display()
            )));
        }
    }
    std::fs::create_dir_all(dir).io_context(|| format!("cannot create '{}'", dir.display()))
}

/// A name made safe as one path component: characters other than letters, digits, `.`,
/// `-` and `_` become `_`, and a name of dots alone gets a `_` before it.
pub fn file_component(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() || safe.chars().all(|c| c == '.') {
        format!("_{safe}")
    } else {
        safe
    }
}
