//! A task's `[environment]`: the container image it runs in, where the work directory
//! appears inside, the container's limits and what it may reach. A task that has one
//! runs only in the container sandbox ([`refuse_outside_container`] stops every other
//! run of it before anything runs), which [`Environment::container`] makes ready: the
//! engine found and the image inspected or built, or an exit-2 error naming the task
//! and the engine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::toml_error::config_error;
use crate::error::{Error, Result, SandboxError};
use crate::sandbox::SandboxKind;
use crate::sandbox::container::{
    ContainerLimits, Engine, EngineName, ImageSource, TaskContainer, ready,
};

/// Where the work directory appears in the container unless the task says otherwise.
pub const DEFAULT_WORKDIR: &str = "/app";

/// A validated `[environment]` table (or what a Harbor task says of its image).
#[derive(Debug, Clone, PartialEq)]
pub struct Environment {
    /// The image the task runs in.
    pub image: Image,
    /// Absolute path of the work directory inside the container.
    pub workdir: String,
    /// CPUs the container may use (the engine's `--cpus`); `None`: the suite's limits.
    pub cpus: Option<f64>,
    /// Memory of the container in MiB; `None`: the suite's `max_memory`.
    pub memory_mb: Option<u64>,
    /// Most processes in the container; `None`: the suite's `max_pids`.
    pub pids: Option<u64>,
    /// Whether the checks' containers may reach the network (never the agent's).
    pub allow_internet: bool,
    /// Added to the environment of the agent and the checks.
    pub env: BTreeMap<String, String>,
}

/// Where the image comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Image {
    /// An image reference the engine has or can pull.
    Reference(String),
    /// A Dockerfile inside the task directory; its directory is the build context.
    Dockerfile(PathBuf),
}

/// `[environment]` as written in a loopbench `task.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EnvironmentFile {
    image: Option<Spanned<String>>,
    dockerfile: Option<Spanned<String>>,
    workdir: Option<Spanned<String>>,
    cpus: Option<Spanned<f64>>,
    memory_mb: Option<Spanned<u64>>,
    pids: Option<Spanned<u64>>,
    #[serde(default)]
    allow_internet: bool,
    env: Option<Spanned<BTreeMap<String, String>>>,
}

/// The file a table was read from, for errors that point into it.
pub(super) struct At<'a> {
    /// The file.
    pub file: &'a Path,
    /// Its text.
    pub text: &'a str,
}

impl At<'_> {
    /// A configuration error at `span` (line 1 when `None`).
    pub fn err(&self, span: Option<std::ops::Range<usize>>, message: String) -> Error {
        config_error(self.file, self.text, span, message)
    }
}

impl EnvironmentFile {
    /// Checks the table (spanning `span` of the file) against itself and against the
    /// task directory `dir`.
    pub(super) fn validate(
        self,
        at: &At<'_>,
        span: std::ops::Range<usize>,
        dir: &Path,
    ) -> Result<Environment> {
        let image = match (self.image, self.dockerfile) {
            (Some(image), None) => Image::Reference(image_reference(at, image)?),
            (None, Some(dockerfile)) => Image::Dockerfile(dockerfile_in(at, &dockerfile, dir)?),
            (Some(_), Some(dockerfile)) => {
                return Err(at.err(
                    Some(dockerfile.span()),
                    "[environment] names both an image and a dockerfile: expected one of them"
                        .into(),
                ));
            }
            (None, None) => {
                return Err(at.err(
                    Some(span),
                    "[environment] names no image: expected `image = \"REFERENCE\"` or \
                     `dockerfile = \"PATH\"` (relative to the task)"
                        .into(),
                ));
            }
        };
        let workdir = match self.workdir {
            None => DEFAULT_WORKDIR.to_string(),
            Some(w) => workdir(at, &w)?,
        };
        Ok(Environment {
            image,
            workdir,
            cpus: self.cpus.map(|c| cpus(at, &c)).transpose()?,
            memory_mb: positive(at, self.memory_mb, "memory_mb")?,
            pids: positive(at, self.pids, "pids")?,
            allow_internet: self.allow_internet,
            env: self
                .env
                .map(|e| env_table(at, e))
                .transpose()?
                .unwrap_or_default(),
        })
    }
}

/// A non-empty image reference without whitespace.
pub(super) fn image_reference(at: &At<'_>, image: Spanned<String>) -> Result<String> {
    let text = image.get_ref();
    if text.is_empty() || text.chars().any(char::is_whitespace) {
        return Err(at.err(
            Some(image.span()),
            format!(
                "image '{text}' is not an image reference: expected e.g. \"ubuntu:24.04\", \
                 without spaces"
            ),
        ));
    }
    Ok(image.into_inner())
}

/// A Dockerfile given relative to the task, inside it, that exists.
fn dockerfile_in(at: &At<'_>, dockerfile: &Spanned<String>, dir: &Path) -> Result<PathBuf> {
    let rel = Path::new(dockerfile.get_ref());
    let inside = !rel.as_os_str().is_empty()
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !inside {
        return Err(at.err(
            Some(dockerfile.span()),
            format!(
                "dockerfile '{}' must be a path relative to the task directory, without '..'",
                dockerfile.get_ref()
            ),
        ));
    }
    let path = dir.join(rel);
    if !path.is_file() {
        return Err(at.err(
            Some(dockerfile.span()),
            format!(
                "dockerfile '{}' is not a file (looked for '{}')",
                dockerfile.get_ref(),
                path.display()
            ),
        ));
    }
    Ok(path)
}

/// An absolute path in the container, not its root.
pub(super) fn workdir(at: &At<'_>, w: &Spanned<String>) -> Result<String> {
    let text = w.get_ref();
    let path = Path::new(text);
    let plain = path.is_absolute()
        && path.components().count() > 1
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::RootDir | std::path::Component::Normal(_)
            )
        });
    if !plain {
        return Err(at.err(
            Some(w.span()),
            format!(
                "workdir '{text}' must be an absolute path inside the container other than \
                 '/', without '.' or '..' (default \"{DEFAULT_WORKDIR}\")"
            ),
        ));
    }
    Ok(text.clone())
}

/// A finite number of CPUs above zero.
pub(super) fn cpus(at: &At<'_>, c: &Spanned<f64>) -> Result<f64> {
    let n = *c.get_ref();
    if !(n.is_finite() && n > 0.0) {
        return Err(at.err(
            Some(c.span()),
            format!("cpus must be a number above 0, e.g. 2 or 0.5 (found {n})"),
        ));
    }
    Ok(n)
}

/// A limit of at least 1, when given.
pub(super) fn positive(at: &At<'_>, value: Option<Spanned<u64>>, key: &str) -> Result<Option<u64>> {
    match value {
        Some(v) if *v.get_ref() == 0 => {
            Err(at.err(Some(v.span()), format!("{key} must be at least 1")))
        }
        v => Ok(v.map(Spanned::into_inner)),
    }
}

/// Environment variable names a shell can export.
pub(super) fn env_table(
    at: &At<'_>,
    env: Spanned<BTreeMap<String, String>>,
) -> Result<BTreeMap<String, String>> {
    let bad = env.get_ref().keys().find(|k| !is_variable_name(k));
    if let Some(name) = bad {
        return Err(at.err(
            Some(env.span()),
            format!(
                "env: '{name}' is not an environment variable name: expected ASCII letters, \
                 digits and '_', not starting with a digit"
            ),
        ));
    }
    Ok(env.into_inner())
}

fn is_variable_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Refuses to run a task that needs a container anywhere but in the container
/// sandbox (`sandbox`: where its sessions' checks would run), and a task without an
/// image in it: a task never runs half on the host.
pub fn refuse_outside_container(
    task: &super::Task,
    sandbox: SandboxKind,
) -> std::result::Result<(), SandboxError> {
    match (task.needs_container(), sandbox) {
        (Some(why), kind) if kind != SandboxKind::Container => {
            Err(SandboxError::OutsideItsContainer {
                task: task.name.clone(),
                dir: task.dir.clone(),
                why: why.to_string(),
                checks_under: kind.title().to_string(),
            })
        }
        (None, SandboxKind::Container) => Err(SandboxError::NoImage {
            task: task.name.clone(),
            dir: task.dir.clone(),
        }),
        _ => Ok(()),
    }
}

impl Environment {
    /// Where the image comes from, as the container sandbox takes it.
    pub fn image_source(&self) -> ImageSource {
        match &self.image {
            Image::Reference(r) => ImageSource::Reference(r.clone()),
            Image::Dockerfile(p) => ImageSource::Dockerfile(p.clone()),
        }
    }

    /// The containers of task `task_name` made ready: the engine (`engine`, else
    /// whichever answers), the image inspected or built, the limits (the task's, else
    /// the suite's `limits`). An error (exit 2) names the task and the engine.
    pub fn container(
        &self,
        task_name: &str,
        engine: Option<EngineName>,
        limits: &crate::sandbox::Limits,
    ) -> Result<TaskContainer> {
        let engine = Engine::find(engine).map_err(|why| SandboxError::NoEngine {
            task: task_name.to_string(),
            why,
        })?;
        let image =
            ready(&engine, &self.image_source()).map_err(|why| SandboxError::ImageNotReady {
                task: task_name.to_string(),
                engine: engine.name.to_string(),
                why,
            })?;
        Ok(TaskContainer {
            engine,
            image,
            workdir: self.workdir.clone(),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.into()))
                .collect(),
            limits: ContainerLimits {
                pids: self.pids.unwrap_or(limits.max_pids),
                memory: self
                    .memory_mb
                    .map_or(limits.max_memory, |mb| mb.saturating_mul(1024 * 1024)),
                cpus: self.cpus,
            },
            allow_internet: self.allow_internet,
        })
    }
}

impl super::Suite {
    /// Refuses, before anything runs, each task of the run of `arms` (indices) that
    /// would run outside the container it needs, or in the container sandbox without
    /// an image ([`refuse_outside_container`]); the error (exit 2) names the arm too.
    pub fn refuse_misplaced_tasks(&self, arms: &[usize]) -> Result<()> {
        self.refuse_tasks(arms, |_| true)
    }

    /// The part of [`Self::refuse_misplaced_tasks`] that `validate` holds without a
    /// container engine: no arm runs a task without an image in the container sandbox.
    pub fn refuse_imageless_tasks(&self, arms: &[usize]) -> Result<()> {
        self.refuse_tasks(arms, |kind| kind == SandboxKind::Container)
    }

    fn refuse_tasks(&self, arms: &[usize], asked: impl Fn(SandboxKind) -> bool) -> Result<()> {
        for arm in arms.iter().filter_map(|&i| self.arms.get(i)) {
            let kind = self.verify_sandbox_of(arm);
            if !asked(kind) {
                continue;
            }
            for task in &self.tasks {
                refuse_outside_container(task, kind).map_err(|refusal| SandboxError::InArm {
                    arm: arm.name.clone(),
                    agent: arm.agent.clone(),
                    refusal: Box::new(refusal),
                })?;
            }
        }
        Ok(())
    }

    /// Before anything of a run of `arms` (indices) runs: refuses a task that would run
    /// outside the container it needs, or in the container sandbox without an image
    /// ([`refuse_outside_container`]), and makes the containers of the tasks that run
    /// in one ready (the engine found, each image inspected or built), or says why not
    /// (exit 2, naming the task and the engine).
    pub fn prepare_containers(&mut self, arms: &[usize]) -> Result<()> {
        self.refuse_misplaced_tasks(arms)?;
        let mut made = Vec::new();
        for (arm, task, env) in self.tasks_in_containers(arms) {
            if self.containers.contains_key(&task.name) || made.iter().any(|(n, _)| n == &task.name)
            {
                continue;
            }
            let container = env.container(&task.name, self.engine, &self.limits)?;
            // The simulated agent implements a feature with what its solve.sh writes:
            // made now, so that a solve.sh that fails stops the run before anything runs.
            if matches!(self.agent_of(arm), super::AgentDriver::Sim { .. })
                && super::has_container_gold(task)
            {
                super::container_gold(task, &container)?;
            }
            made.push((task.name.clone(), std::sync::Arc::new(container)));
        }
        self.containers.extend(made);
        Ok(())
    }

    /// What `validate` asks of the containers of a run of `arms` (indices): an engine
    /// that answers and each task's image ready (inspected, or built once for its
    /// context, so that the run builds nothing), or why not (exit 2, naming the task
    /// and the engine). Nothing of the task runs.
    pub fn ready_images(&self, arms: &[usize]) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for (_, task, env) in self.tasks_in_containers(arms) {
            if seen.insert(&task.name) {
                env.container(&task.name, self.engine, &self.limits)?;
            }
        }
        Ok(())
    }

    /// Each task with an image under each of `arms` (indices) whose checks run in the
    /// container sandbox, with the arm and the task's environment.
    fn tasks_in_containers<'a>(
        &'a self,
        arms: &'a [usize],
    ) -> impl Iterator<Item = (&'a super::Arm, &'a super::Task, &'a Environment)> + 'a {
        arms.iter()
            .filter_map(|&i| self.arms.get(i))
            .filter(|arm| self.verify_sandbox_of(arm) == SandboxKind::Container)
            .flat_map(move |arm| {
                self.tasks
                    .iter()
                    .filter_map(move |task| Some((arm, task, &**task.environment.as_ref()?)))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Task;

    fn task(extra: &str) -> (tempfile::TempDir, Task) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        std::fs::write(
            dir.path().join("task.toml"),
            format!(
                "name = \"t\"\ngoal = \"g\"\ntests = {{ glob = \"tests/*.sh\", count_pattern = 'x' }}\n\n\
                 [[feature]]\nid = \"F1\"\ndescription = \"one\"\nverify = \"true\"\n{extra}"
            ),
        )
        .unwrap();
        let task = Task::load(dir.path()).unwrap();
        (dir, task)
    }

    #[test]
    fn a_task_runs_in_its_container_only_and_the_container_sandbox_only_with_an_image() {
        let (_d, with_image) = task("\n[environment]\nimage = \"example:1\"\n");
        let err = refuse_outside_container(&with_image, SandboxKind::Bwrap).unwrap_err();
        assert_eq!(
            err,
            SandboxError::OutsideItsContainer {
                task: "t".into(),
                dir: with_image.dir.clone(),
                why: "has an [environment] table".into(),
                checks_under: SandboxKind::Bwrap.title().to_string(),
            }
        );
        assert!(refuse_outside_container(&with_image, SandboxKind::Container).is_ok());
        let (_d, plain) = task("");
        assert_eq!(
            refuse_outside_container(&plain, SandboxKind::Container).unwrap_err(),
            SandboxError::NoImage {
                task: "t".into(),
                dir: plain.dir.clone(),
            }
        );
        assert!(refuse_outside_container(&plain, SandboxKind::None).is_ok());
        // Every refusal is bad input, for the machine or the suite to be fixed first.
        let err = Error::from(SandboxError::InArm {
            arm: "a".into(),
            agent: "x".into(),
            refusal: Box::new(err),
        });
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
        assert!(!err.is_engine_failure());
    }
}
