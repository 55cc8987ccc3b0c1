//! The seam between the code that runs what an agent wrote and the sandboxes that
//! confine it. Above it (the engine, the command agent, verify, a replayed trace's
//! `run` actions, `check-task`, the suite, the plan and the manifest) a sandbox is a
//! [`SandboxKind`], asked whether it works here, and a [`super::Confined`] start of one
//! command from its [`super::Layout`]; below it, each kind is its own implementation.
//!
//! The kinds: `none` (the command runs on the host, contained as far as `process` can)
//! and `bwrap` (bubblewrap over the host's own system: `layout.rs`, `launch.rs`,
//! `probe.rs`, `batch.rs`) and `container` (a fresh container of the task's image for
//! each session and each check, through docker or podman: `container/`). A further kind
//! is a variant here, its own implementation beside these, and its arm in each `match`
//! below; nothing above the seam changes for it.

use std::fmt;

use crate::error::Result;

/// Which sandbox confines the code an agent wrote (its session, its checks, a replayed
/// trace's `run` actions), as a suite, the plan and the manifest name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum SandboxKind {
    /// No sandbox: on the host.
    #[default]
    None,
    /// bubblewrap: the host's system read only, the work directory writable, no
    /// network.
    Bwrap,
    /// A fresh container of the task's image for each session and each check, through
    /// an OCI engine (docker or podman): the work directory mounted at the task's
    /// `workdir`, no network, the engine's limits.
    Container,
}

impl SandboxKind {
    /// Every kind, in the order messages list them (confining kinds first).
    pub const ALL: &'static [SandboxKind] = &[
        SandboxKind::Bwrap,
        SandboxKind::Container,
        SandboxKind::None,
    ];

    /// The name a suite, the command line and the manifest use.
    pub fn name(self) -> &'static str {
        match self {
            SandboxKind::None => "none",
            SandboxKind::Bwrap => "bwrap",
            SandboxKind::Container => "container",
        }
    }

    /// The kind named `word`, if any.
    pub fn from_name(word: &str) -> Option<SandboxKind> {
        SandboxKind::ALL.iter().copied().find(|k| k.name() == word)
    }

    /// The kind a manifest of an earlier version meant by its boolean (`verify_sandboxed`):
    /// bubblewrap was then the only sandbox.
    pub fn from_sandboxed(sandboxed: bool) -> SandboxKind {
        if sandboxed {
            SandboxKind::Bwrap
        } else {
            SandboxKind::None
        }
    }

    /// What the kind is called in a sentence ("the checks run under bubblewrap").
    pub fn title(self) -> &'static str {
        match self {
            SandboxKind::None => "no sandbox",
            SandboxKind::Bwrap => "bubblewrap",
            SandboxKind::Container => "a container",
        }
    }

    /// What a person does to make this kind work on this machine.
    pub fn install_hint(self) -> &'static str {
        match self {
            SandboxKind::None => "",
            SandboxKind::Bwrap => "install bubblewrap",
            SandboxKind::Container => {
                "install podman (with runc) or docker, so that `podman info` or `docker info` \
                 answers"
            }
        }
    }

    /// Whether the kind confines anything (every kind but `none`).
    pub fn confines(self) -> bool {
        self != SandboxKind::None
    }

    /// `"bwrap"`, or `"a" or "b"`: the names of `kinds`, quoted, for messages.
    pub fn quoted(kinds: impl IntoIterator<Item = SandboxKind>) -> String {
        let quoted: Vec<String> = kinds
            .into_iter()
            .map(|k| format!("\"{}\"", k.name()))
            .collect();
        match quoted.split_last() {
            None => String::new(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// The names of the kinds that confine, quoted: what a key that needs a sandbox
    /// asks for.
    pub fn confining_names() -> String {
        SandboxKind::quoted(SandboxKind::ALL.iter().copied().filter(|k| k.confines()))
    }

    /// Whether this kind can confine a command on this machine (`none` always can);
    /// probed once. Nothing about what a started sandbox holds: [`SandboxKind::check`].
    pub fn works_here(self) -> bool {
        match self {
            SandboxKind::None => true,
            SandboxKind::Bwrap => super::host::bwrap_works(),
            SandboxKind::Container => super::container::Engine::find(None).is_ok(),
        }
    }

    /// The strongest sandbox over the host's own system that works here, `none` where
    /// none does: where a command that may run either way (`check-task --sandbox auto`,
    /// `replay`) runs. A container needs a task's image, so it is only ever asked for.
    pub fn strongest_here() -> SandboxKind {
        SandboxKind::ALL
            .iter()
            .copied()
            .find(|k| k.confines() && !k.needs_image() && k.works_here())
            .unwrap_or(SandboxKind::None)
    }

    /// Whether the kind runs a task's image rather than the host's own system.
    pub fn needs_image(self) -> bool {
        self == SandboxKind::Container
    }

    /// Checks, before anything runs, that this kind works here and that a sandbox of it
    /// is confined as it must be (no capability, the sandbox's user under a root
    /// harness). `needs` says what asked for it ("agent 'x' uses sandbox = \"bwrap\"");
    /// the error (exit 2) starts with it and says how to fix the machine.
    pub fn check(self, needs: &str) -> Result<()> {
        match self {
            SandboxKind::None => Ok(()),
            SandboxKind::Bwrap => super::probe::check_bwrap_for(needs),
            SandboxKind::Container => {
                super::container::Engine::find(None)
                    .map(drop)
                    .map_err(|why| {
                        crate::error::SandboxError::Unavailable {
                            needs: needs.to_string(),
                            why,
                        }
                        .into()
                    })
            }
        }
    }
}

impl fmt::Display for SandboxKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for SandboxKind {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for SandboxKind {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let word = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        SandboxKind::from_name(&word).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "sandbox must be {}, got '{word}'",
                SandboxKind::quoted(SandboxKind::ALL.iter().copied())
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for kind in SandboxKind::ALL {
            assert_eq!(SandboxKind::from_name(kind.name()), Some(*kind));
            let json = serde_json::to_string(kind).unwrap();
            assert_eq!(json, format!("\"{kind}\""));
            assert_eq!(serde_json::from_str::<SandboxKind>(&json).unwrap(), *kind);
        }
        assert_eq!(SandboxKind::from_name("docker"), None);
    }

    #[test]
    fn an_unknown_name_lists_every_kind() {
        let err = serde_json::from_str::<SandboxKind>("\"docker\"").unwrap_err();
        assert!(
            err.to_string()
                .contains("sandbox must be \"bwrap\", \"container\" or \"none\", got 'docker'"),
            "{err}"
        );
    }

    #[test]
    fn an_earlier_manifest_meant_bubblewrap_by_sandboxed() {
        assert_eq!(SandboxKind::from_sandboxed(true), SandboxKind::Bwrap);
        assert_eq!(SandboxKind::from_sandboxed(false), SandboxKind::None);
        assert!(!SandboxKind::None.confines());
        assert!(SandboxKind::None.works_here());
        assert_eq!(SandboxKind::confining_names(), "\"bwrap\" or \"container\"");
    }
}
