//! Writing a page's data as JSON a piece at a time: into the page itself, or into a
//! script file beside it that calls one of the page's functions with it
//! (`report-timelines/NNNN.js`, `report-timelines/steps-NNNNN.js`), which the page loads
//! with a `<script>` element, from `file://` too.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use serde::Serialize;

use super::script_json::ScriptJsonWriter;
use crate::error::{Error, IoContext, Result};

/// A script file beside the page being written: its head (`fname(N,{...,"rows":[`),
/// items separated by commas, and its tail; the JSON escaped as in the page.
pub struct ScriptFile {
    path: PathBuf,
    out: ScriptJsonWriter<BufWriter<File>>,
    items: usize,
}

impl ScriptFile {
    /// Creates `path`, beginning with `head`.
    pub fn create(path: PathBuf, head: &str) -> Result<ScriptFile> {
        let file =
            File::create(&path).io_context(|| format!("cannot create '{}'", path.display()))?;
        let mut file = ScriptFile {
            path,
            out: ScriptJsonWriter::new(BufWriter::new(file)),
            items: 0,
        };
        file.write(head.as_bytes())?;
        Ok(file)
    }

    /// Adds one item, after a comma unless it is the first.
    pub fn item(&mut self, json: &str) -> Result<()> {
        if self.items > 0 {
            self.write(b",")?;
        }
        self.items += 1;
        self.write(json.as_bytes())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .io_context(|| format!("cannot write '{}'", self.path.display()))
    }

    /// Ends the file with `tail`.
    pub fn finish(mut self, tail: &[u8]) -> Result<()> {
        self.write(tail)?;
        let path = self.path;
        self.out
            .finish()
            .and_then(|mut out| out.flush())
            .io_context(|| format!("cannot write '{}'", path.display()))
    }
}

/// `value` as JSON.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|e| Error::Tool(format!("cannot encode the page's data: {e}")))
}

/// Writes `bytes` of the page.
pub fn write(out: &mut dyn Write, bytes: &[u8]) -> Result<()> {
    out.write_all(bytes)
        .map_err(|e| Error::io("cannot write the page", e))
}
