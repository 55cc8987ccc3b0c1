//! `loopbench import [FORMAT] INPUT... [--format auto] [--root DIR] [--out FILE]`: converts
//! other agents' transcripts into a trace, on stdout or into a file. The formats are the
//! importers of `import::format`.

use super::args::{ImportArgs, ImportFiles, ImportFormat};
use crate::error::{IoContext, Result, TranscriptError};
use crate::exit_code;
use crate::fsutil::write_atomic;
use crate::import::detect::detect;
use crate::import::format::Format;
use crate::store::check_output_dir;

/// Runs the command; returns the exit code.
pub fn run(args: &ImportArgs) -> Result<i32> {
    let (format, files) = match &args.command {
        Some(command) => (command.format, &command.files),
        None => {
            let files = &args.files;
            // `import --root DIR codex PATH` reads "codex" as a path: the format goes first.
            if let Some(name) = files
                .inputs
                .iter()
                .find(|p| !p.exists() && Format::all().any(|f| p.as_os_str() == f.name()))
            {
                return Err(TranscriptError::FormatAsPath { name: name.clone() }.into());
            }
            let format = match args.format {
                ImportFormat::Auto => {
                    let format = detect(&files.inputs)?;
                    eprintln!("detected format: {}", format.name());
                    format
                }
                ImportFormat::Named(format) => format,
            };
            (format, files)
        }
    };
    let root = root(files);
    let imported = format.import(&files.inputs, root.as_deref())?;
    let trace = imported.checked_trace()?;
    // Notes and session lines quote the transcript (paths, tool names, reasons).
    for note in &imported.notes {
        eprintln!("warning: {}", crate::terminal::line(note));
    }
    for line in imported.session_lines() {
        eprintln!("{}", crate::terminal::line(&line));
    }
    eprintln!("{}", imported.summary());
    match &files.out {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                check_output_dir(dir)?;
                std::fs::create_dir_all(dir)
                    .io_context(|| format!("cannot create '{}'", dir.display()))?;
            }
            // Refuses a device or FIFO at `path` (see `write_atomic`).
            write_atomic(path, trace.as_bytes())?;
            eprintln!("trace written to {}", path.display());
        }
        None => super::output::print(&trace)?,
    }
    Ok(exit_code::OK)
}

fn root(files: &ImportFiles) -> Option<String> {
    files
        .root
        .as_ref()
        .map(|r| r.to_string_lossy().into_owned())
}
