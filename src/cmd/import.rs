//! `loopbench import [FORMAT] INPUT... [--format auto] [--root DIR] [--out FILE]`: converts
//! Claude Code, Codex and aider transcripts into a trace, on stdout or into a file.

use super::args::{ImportArgs, ImportCommand, ImportFiles, ImportFormat};
use crate::error::{Error, IoContext, Result};
use crate::exit_code;
use crate::fsutil::write_atomic;
use crate::import::detect::detect;
use crate::import::format::Format;
use crate::import::{aider, claude_code, codex, stream_json};
use crate::store::check_output_dir;

/// Runs the command; returns the exit code.
pub fn run(args: &ImportArgs) -> Result<i32> {
    let (format, files) = match &args.command {
        Some(ImportCommand::ClaudeCode(files)) => (Format::ClaudeCode, files),
        Some(ImportCommand::StreamJson(files)) => (Format::StreamJson, files),
        Some(ImportCommand::Codex(files)) => (Format::Codex, files),
        Some(ImportCommand::Aider(files)) => (Format::Aider, files),
        None => {
            let files = &args.files;
            // `import --root DIR codex PATH` reads "codex" as a path: the format goes first.
            if let Some(name) = files
                .inputs
                .iter()
                .find(|p| !p.exists() && Format::ALL.iter().any(|f| p.as_os_str() == f.name()))
            {
                return Err(Error::BadInput(format!(
                    "'{}' is a format, not a transcript: name the format before the options (`loopbench import {} --root DIR PATH...`) or pass --format {}",
                    name.display(),
                    name.display(),
                    name.display()
                )));
            }
            let format = match args.format {
                ImportFormat::Auto => {
                    let format = detect(&files.inputs)?;
                    eprintln!("detected format: {}", format.name());
                    format
                }
                ImportFormat::ClaudeCode => Format::ClaudeCode,
                ImportFormat::StreamJson => Format::StreamJson,
                ImportFormat::Codex => Format::Codex,
                ImportFormat::Aider => Format::Aider,
            };
            (format, files)
        }
    };
    let root = root(files);
    let root = root.as_deref();
    let imported = match format {
        Format::ClaudeCode => claude_code::import(&files.inputs, root)?,
        Format::StreamJson => stream_json::import(&files.inputs, root)?,
        Format::Codex => codex::import(&files.inputs, root)?,
        Format::Aider => aider::import(&files.inputs, root)?,
    };
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
