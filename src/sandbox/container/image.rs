//! A task's image, made ready once per process: a reference the engine must already
//! have (`image inspect`; pulling is the engine's business, never the harness's), or a
//! Dockerfile built with pulling disabled and tagged by the hash of its whole build
//! context (`loopbench-task:<hash>`), so that an unchanged context is never rebuilt and
//! a changed one always is. What a run records of it is the image's id, the digest of
//! what ran.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::engine::{Engine, EngineName};

/// How long building one image may take.
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How long `image inspect` may take.
const INSPECT_TIMEOUT: Duration = Duration::from_secs(60);
/// The repository part of every image the harness builds.
pub const TAG_REPOSITORY: &str = "loopbench-task";

/// Where a task's image comes from (the sandbox's own copy of what the task says).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ImageSource {
    /// A reference the engine has.
    Reference(String),
    /// A Dockerfile; its directory is the build context.
    Dockerfile(PathBuf),
}

/// An image ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyImage {
    /// What the containers are started from: the reference, or the tag built.
    pub reference: String,
    /// The engine's id of the image (`sha256:…`): the digest the manifest records.
    pub id: String,
    /// Whether this process built it (no image of its context hash existed).
    pub built: bool,
}

/// Makes `source` ready with `engine`, once per process and source. `Err` says what
/// went wrong in the engine's own words (an image it does not have, a build that
/// failed), for a message that names the task and the engine.
pub fn ready(engine: &Engine, source: &ImageSource) -> std::result::Result<ReadyImage, String> {
    type Memo = HashMap<(EngineName, ImageSource), std::result::Result<ReadyImage, String>>;
    static READY: OnceLock<Mutex<Memo>> = OnceLock::new();
    let memo = READY.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (engine.name, source.clone());
    if let Some(found) = memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return found;
    }
    // Built outside the lock: another task's image need not wait for this one.
    let made = make_ready(engine, source);
    if let Ok(mut m) = memo.lock() {
        m.entry(key).or_insert_with(|| made.clone());
    }
    made
}

fn make_ready(engine: &Engine, source: &ImageSource) -> std::result::Result<ReadyImage, String> {
    match source {
        ImageSource::Reference(reference) => match inspect_id(engine, reference)? {
            Some(id) => Ok(ReadyImage {
                reference: reference.clone(),
                id,
                built: false,
            }),
            None => Err(format!(
                "{} has no image '{reference}' (loopbench never pulls one: `{} pull \
                 {reference}`, or build it)",
                engine.name, engine.name
            )),
        },
        ImageSource::Dockerfile(dockerfile) => {
            let context = dockerfile.parent().unwrap_or(Path::new("."));
            let tag = tag_of(dockerfile)?;
            if let Some(id) = inspect_id(engine, &tag)? {
                return Ok(ReadyImage {
                    reference: tag,
                    id,
                    built: false,
                });
            }
            build(engine, dockerfile, context, &tag)?;
            let id = inspect_id(engine, &tag)?
                .ok_or_else(|| format!("{} built '{tag}' but does not have it", engine.name))?;
            Ok(ReadyImage {
                reference: tag,
                id,
                built: true,
            })
        }
    }
}

/// `loopbench-task:<hash>`: the hash of every entry of the build context (paths,
/// types, modes, contents, link targets) and of which file in it is the Dockerfile.
pub fn tag_of(dockerfile: &Path) -> std::result::Result<String, String> {
    let context = dockerfile.parent().unwrap_or(Path::new("."));
    let tree = crate::fsutil::TreeSnapshot::read(context)
        .map_err(|e| format!("cannot read the build context '{}': {e}", context.display()))?;
    let mut h = blake3::Hasher::new();
    h.update(tree.hash.as_bytes());
    h.update(
        dockerfile
            .file_name()
            .map(|n| n.as_encoded_bytes())
            .unwrap_or_default(),
    );
    let hex = h.finalize().to_hex();
    Ok(format!("{TAG_REPOSITORY}:{}", &hex[..32]))
}

/// The engine's id of `reference`, `None` when it has no such image.
fn inspect_id(engine: &Engine, reference: &str) -> std::result::Result<Option<String>, String> {
    let called = engine
        .call(
            &["image", "inspect", "--format", "{{.Id}}", reference],
            INSPECT_TIMEOUT,
        )
        .map_err(|e| format!("cannot run {}: {e}", engine.name))?;
    if !called.ok() {
        return Ok(None);
    }
    let id = called.stdout.trim();
    Ok((!id.is_empty()).then(|| {
        if id.contains(':') {
            id.to_string()
        } else {
            format!("sha256:{id}")
        }
    }))
}

/// Builds `dockerfile` in `context` as `tag`, never pulling.
fn build(
    engine: &Engine,
    dockerfile: &Path,
    context: &Path,
    tag: &str,
) -> std::result::Result<(), String> {
    // Docker's `--pull` is a boolean: false still uses a base image it has.
    let no_pull = match engine.name {
        EngineName::Podman => "--pull=never",
        EngineName::Docker => "--pull=false",
    };
    let mut cmd = engine.command();
    cmd.args(["build", no_pull, "-t", tag, "-f"])
        .arg(dockerfile)
        .arg(context);
    let called = super::engine::call(&mut cmd, BUILD_TIMEOUT)
        .map_err(|e| format!("cannot run {}: {e}", engine.name))?;
    if called.ok() {
        return Ok(());
    }
    Err(format!(
        "{} could not build '{}': {}",
        engine.name,
        dockerfile.display(),
        called.reason()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_follows_every_byte_of_the_context() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("Dockerfile");
        std::fs::write(&file, "FROM scratch\n").unwrap();
        let first = tag_of(&file).unwrap();
        assert!(first.starts_with("loopbench-task:"), "{first}");
        assert_eq!(tag_of(&file).unwrap(), first, "an unchanged context");
        std::fs::write(dir.path().join("data.txt"), "x").unwrap();
        let second = tag_of(&file).unwrap();
        assert_ne!(second, first, "a file added to the context");
        std::fs::write(dir.path().join("data.txt"), "y").unwrap();
        assert_ne!(
            tag_of(&file).unwrap(),
            second,
            "a file of the context changed"
        );
    }
}
