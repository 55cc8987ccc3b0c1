//! A confined command's container: what a [`crate::sandbox::Layout`] shows, lets write
//! and limits, made into one fresh container of the task's image (an agent's session,
//! its wrapper's sandbox query). The work directory appears at the task's `workdir`;
//! every other place the layout names (the program, the harness's binary, the prompt,
//! the effects channel, the trial's HOME, state directory and git configuration,
//! `sandbox_ro`, `sandbox_rw`) at its own path, read-only or writable as the layout
//! says, and nothing else of the host. Never the network, whatever the task allows:
//! only a check's container may reach it. The environment is the one the caller built,
//! with the task's own `env` under it and the work directory's host path spelled where
//! it appears inside; the engine's client keeps the harness's own environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::run::{Container, Mount, Ran};
use super::task::TaskContainer;
use crate::sandbox::{INHERITED, Layout};

/// One confined command's container, named and not yet started.
#[derive(Debug)]
pub struct ConfinedContainer {
    container: Container,
    words: Vec<OsString>,
    /// The task's own `env`, laid under the environment the caller builds.
    task_env: Vec<(String, OsString)>,
    /// The work directory on the host, and where it appears inside.
    host_work: PathBuf,
    workdir: PathBuf,
}

impl ConfinedContainer {
    /// The container of `layout` in `task`'s image (what the layout's places are
    /// handed over to the sandbox's user before is the caller's).
    pub fn new(layout: &Layout, task: &TaskContainer) -> std::io::Result<ConfinedContainer> {
        let workdir = PathBuf::from(&task.workdir);
        let same = |p: &PathBuf, writable: bool| Mount {
            host: p.clone(),
            target: p.clone(),
            writable,
        };
        let mut mounts = vec![Mount {
            host: layout.work_dir.clone(),
            target: workdir.clone(),
            writable: true,
        }];
        mounts.extend(
            layout
                .writable_files
                .iter()
                .chain(&layout.writable_dirs)
                .chain(&layout.declared_rw)
                .filter(|p| p.exists())
                .map(|p| same(p, true)),
        );
        mounts.extend(
            layout
                .readable
                .iter()
                .filter(|p| p.exists())
                .map(|p| same(p, false)),
        );
        let mut run = task.run(mounts, Vec::new(), false);
        // The task's env is laid under the caller's environment (`set_env`), not beside it.
        let task_env = std::mem::take(&mut run.env);
        let start = layout
            .start_dir
            .as_deref()
            .and_then(|d| d.strip_prefix(&layout.work_dir).ok())
            .map_or_else(|| workdir.clone(), |rel| workdir.join(rel));
        run.workdir = start.to_string_lossy().into_owned();
        run.stdin = true;
        run.tmp_bytes = Some(layout.tmp_bytes);
        let (words, container) = run.prepare()?;
        Ok(ConfinedContainer {
            container,
            words,
            task_env,
            host_work: layout.work_dir.clone(),
            workdir,
        })
    }

    /// The words that start the container (the engine's program first), to be followed
    /// by the program and its arguments.
    pub fn words(&self) -> &[OsString] {
        &self.words
    }

    /// Gives the container `env` (built by the caller) over the task's own `env`: the
    /// task's values replace only the inherited basics (`PATH`, `LANG`, `TERM`) and
    /// add what `env` lacks. A value naming the work directory's host path (or the
    /// directory above it, git's ceiling) names where it appears inside instead.
    pub fn set_env(&self, env: &[(String, OsString)]) -> std::io::Result<()> {
        let mut all: Vec<(String, OsString)> = env
            .iter()
            .map(|(k, v)| (k.clone(), self.inside(v)))
            .collect();
        for (k, v) in &self.task_env {
            let basic = INHERITED.contains(&k.as_str());
            match all.iter_mut().find(|(e, _)| e == k) {
                Some(slot) if basic => slot.1 = v.clone(),
                Some(_) => {}
                None => all.push((k.clone(), v.clone())),
            }
        }
        self.container.write_env(&all)
    }

    /// The file the environment is written to.
    #[cfg(test)]
    fn container_env_file(&self) -> &Path {
        self.container.env_file()
    }

    /// `value` with the work directory's host path (or the directory above it) spelled
    /// as it appears inside.
    fn inside(&self, value: &OsString) -> OsString {
        let path = Path::new(value);
        if let Ok(rel) = path.strip_prefix(&self.host_work) {
            return if rel.as_os_str().is_empty() {
                self.workdir.clone().into_os_string()
            } else {
                self.workdir.join(rel).into_os_string()
            };
        }
        match (self.host_work.parent(), self.workdir.parent()) {
            (Some(host), Some(inside)) if path == host => inside.as_os_str().to_owned(),
            _ => value.clone(),
        }
    }

    /// How the command went, from the engine's report on the container: `Err` with the
    /// reason when the program never ran (asked only of a client that `exited` by
    /// itself: a killed one's container may still be starting or running), else the
    /// limits it reached, each as a sentence.
    pub fn ended(&self, exited: bool) -> std::result::Result<Vec<String>, String> {
        match self.container.ran() {
            Ran::Never(why) if exited => Err(why),
            Ran::Exited { oom: true, .. } => Ok(vec![
                "reached the container's memory limit: the engine reports its program \
                 killed out of memory"
                    .to_string(),
            ]),
            _ => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Hidden;
    use crate::sandbox::container::{ContainerLimits, Engine, EngineName, ReadyImage};
    use std::sync::Arc;

    fn task() -> TaskContainer {
        TaskContainer {
            engine: Engine {
                name: EngineName::Podman,
                program: "/usr/bin/podman".into(),
            },
            image: ReadyImage {
                reference: "loopbench-task:x".into(),
                id: "sha256:abc".into(),
                built: false,
            },
            workdir: "/app".into(),
            env: vec![
                ("PATH".into(), "/opt/tool/bin:/usr/bin:/bin".into()),
                ("TASK_ONLY".into(), "t".into()),
                ("HOME".into(), "/task-home".into()),
            ],
            limits: ContainerLimits {
                pids: 64,
                memory: 1 << 28,
                cpus: None,
            },
            allow_internet: true,
        }
    }

    #[test]
    fn a_layout_becomes_a_container_showing_its_places_and_never_the_network() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("work");
        let home = root.path().join("own/home");
        let program = root.path().join("agent.sh");
        let gone = root.path().join("absent");
        for dir in [&work, &home] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let mut layout = Hidden::default()
            .in_image(Arc::new(task()))
            .layout(&work, &[], &[&home]);
        layout.readable.extend([program.clone(), gone.clone()]);
        layout.run_as = None;
        let container = ConfinedContainer::new(&layout, layout.image.as_ref().unwrap()).unwrap();
        let words: Vec<String> = container
            .words()
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        assert_eq!(words[0], "/usr/bin/podman");
        assert_eq!(words.last().unwrap(), "sha256:abc");
        let shown = |host: &Path, target: &str, ro: bool| {
            format!(
                "type=bind,source={},target={target}{}",
                host.display(),
                if ro { ",readonly" } else { "" }
            )
        };
        for want in [
            shown(&work, "/app", false),
            shown(&home, &home.display().to_string(), false),
            shown(&program, &program.display().to_string(), true),
            "--network=none".to_string(),
            "--interactive=true".to_string(),
            "--workdir=/app".to_string(),
            "--cap-drop=ALL".to_string(),
            "--pids-limit=64".to_string(),
        ] {
            assert!(words.contains(&want), "{want} in {words:?}");
        }
        assert!(!words.iter().any(|w| w.contains("absent")), "{words:?}");
        assert!(
            words.iter().any(|w| w.starts_with("--tmpfs=/tmp:")),
            "{words:?}"
        );
    }

    #[test]
    fn the_built_environment_names_the_work_directory_inside_over_the_tasks_own() {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let layout = Hidden::default()
            .in_image(Arc::new(task()))
            .layout(&work, &[], &[]);
        let container = ConfinedContainer::new(&layout, layout.image.as_ref().unwrap()).unwrap();
        let env: Vec<(String, OsString)> = vec![
            ("PATH".into(), "/usr/bin".into()),
            ("HOME".into(), "/trial/home".into()),
            ("GIT_CEILING_DIRECTORIES".into(), root.path().into()),
            ("WHERE".into(), work.join("src").into()),
        ];
        container.set_env(&env).unwrap();
        let text = std::fs::read_to_string(container.container_env_file()).unwrap();
        assert_eq!(
            text,
            "PATH=/opt/tool/bin:/usr/bin:/bin\nHOME=/trial/home\nGIT_CEILING_DIRECTORIES=/\n\
             WHERE=/app/src\nTASK_ONLY=t\n"
        );
    }
}
