//! `loopbench import claude-code|stream-json INPUT... [--root DIR] [--out FILE]`: converts
//! Claude Code transcripts into a trace, on stdout or into a file.

use super::args::{ImportArgs, ImportCommand};
use crate::agent::trace::Trace;
use crate::error::{Error, IoContext, Result};
use crate::exit_code;
use crate::import::{Imported, claude_code, stream_json};
use crate::store::{check_output_dir, write_atomic};

/// Runs the command; returns the exit code.
pub fn run(args: &ImportArgs) -> Result<i32> {
    let (files, imported) = match &args.command {
        ImportCommand::ClaudeCode(files) => (
            files,
            claude_code::import(&files.inputs, root(files).as_deref())?,
        ),
        ImportCommand::StreamJson(files) => (
            files,
            stream_json::import(&files.inputs, root(files).as_deref())?,
        ),
    };
    let trace = checked_trace(&imported)?;
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
        None => super::report::print(&trace)?,
    }
    Ok(exit_code::OK)
}

fn root(files: &super::args::ImportFiles) -> Option<String> {
    files
        .root
        .as_ref()
        .map(|r| r.to_string_lossy().into_owned())
}

/// The trace text, parsed back once: an importer that wrote a trace replay refuses
/// would be a bug of the harness, not bad input.
fn checked_trace(imported: &Imported) -> Result<String> {
    let text = imported.to_trace();
    Trace::parse(std::path::Path::new("<imported trace>"), &text)
        .map_err(|e| Error::Tool(format!("import produced an invalid trace: {e}")))?;
    Ok(text)
}
