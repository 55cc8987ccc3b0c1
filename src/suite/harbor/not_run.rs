//! The parts of a Harbor task loopbench does not run (a Compose file, MCP servers,
//! GPUs, artifacts, healthchecks, ...), each named with its file and line so that
//! `validate` says so instead of ignoring them.

use std::path::Path;

use toml::Spanned;

use super::schema::{AgentFile, HarborFile, Noted, VerifierFile};
use crate::suite::toml_error::line_column;

/// Compose files that make a Harbor environment several containers.
const COMPOSE_FILES: [&str; 4] = [
    "docker-compose.yaml",
    "docker-compose.yml",
    "compose.yaml",
    "compose.yml",
];

/// The parts of the file loopbench does not run, each named with its file and line.
pub(super) struct Notes<'a> {
    file: &'a Path,
    text: &'a str,
    /// One sentence per part, `FILE:LINE: ...`.
    pub not_run: Vec<String>,
}

impl<'a> Notes<'a> {
    /// No part named yet, in `file` (holding `text`).
    pub fn new(file: &'a Path, text: &'a str) -> Notes<'a> {
        Notes {
            file,
            text,
            not_run: Vec::new(),
        }
    }

    /// Every part of `raw` (and of the task directory) loopbench does not run.
    pub fn parts(&mut self, raw: &HarborFile, dir: &Path) {
        for name in COMPOSE_FILES {
            let compose = dir.join("environment").join(name);
            if compose.is_file() {
                self.not_run.push(format!(
                    "{}:1: a multi-container environment (Docker Compose): loopbench runs one \
                     container of the task's image",
                    compose.display()
                ));
            }
        }
        if let Some(env) = raw.environment.as_ref().map(Spanned::get_ref) {
            self.note(&env.mcp_servers, "[environment] mcp_servers: MCP servers");
            self.note(&env.gpus, "[environment] gpus: GPUs");
            self.note(&env.gpu_types, "[environment] gpu_types: GPUs");
            self.note(&env.tpu, "[environment] tpu: TPUs");
            self.note(&env.healthcheck, "[environment] healthcheck: a healthcheck");
            self.note(&env.skills_dir, "[environment] skills_dir: agent skills");
            self.note(&env.storage_mb, "[environment] storage_mb: a storage limit");
            self.note(&env.storage, "[environment] storage: a storage limit");
            self.note(
                &env.memory,
                "[environment] memory: the earlier spelling of memory_mb",
            );
            self.note(
                &env.allowed_hosts,
                "[environment] allowed_hosts: a network allowlist",
            );
            if let Some(os) = env
                .os
                .as_ref()
                .filter(|os| !os.get_ref().eq_ignore_ascii_case("linux"))
            {
                self.at(
                    os.span(),
                    &format!(
                        "[environment] os = \"{}\": a container that is not Linux",
                        os.get_ref()
                    ),
                );
            }
        }
        self.note(&raw.artifacts, "artifacts: collected artifacts");
        self.note(
            &raw.multi_step_reward_strategy,
            "multi_step_reward_strategy: a trial reward over steps (loopbench judges each step as a feature)",
        );
        self.agent(&raw.agent, "[agent]");
        self.verifier(&raw.verifier, "[verifier]");
        for step in raw.steps.iter().flatten() {
            let name = step.name.get_ref();
            self.note(
                &step.healthcheck,
                &format!("step '{name}' healthcheck: a healthcheck"),
            );
            self.note(
                &step.artifacts,
                &format!("step '{name}' artifacts: collected artifacts"),
            );
            if let Some(v) = step.min_reward.as_ref().filter(|v| v.get_ref().is_table()) {
                self.at(
                    v.span(),
                    &format!("step '{name}' min_reward: thresholds per reward key (judged as min_reward = 1)"),
                );
            }
            self.agent(&step.agent, &format!("step '{name}' agent"));
            self.verifier(&step.verifier, &format!("step '{name}' verifier"));
        }
    }

    fn agent(&mut self, agent: &AgentFile, table: &str) {
        self.note(
            &agent.timeout_sec,
            &format!(
                "{table} timeout_sec: an agent time limit (the suite's budgets limit sessions)"
            ),
        );
        self.note(
            &agent.user,
            &format!("{table} user: an agent user (the sandbox chooses it)"),
        );
        self.note(
            &agent.allowed_hosts,
            &format!("{table} allowed_hosts: a network allowlist"),
        );
        if let Some(mode) = agent
            .network_mode
            .as_ref()
            .filter(|m| m.get_ref() != "no-network")
        {
            self.at(mode.span(), &format!("{table} network_mode = \"{}\": network for the agent (its container never has any)", mode.get_ref()));
        }
    }

    fn verifier(&mut self, verifier: &VerifierFile, table: &str) {
        self.note(&verifier.user, &format!("{table} user: a verifier user"));
        self.note(
            &verifier.environment_mode,
            &format!("{table} environment_mode: (each check always runs in a fresh container)"),
        );
        self.note(
            &verifier.environment,
            &format!("{table} environment: a verifier image of its own"),
        );
        self.note(
            &verifier.continuous,
            &format!("{table} continuous: verification while the agent works"),
        );
        self.note(
            &verifier.collect,
            &format!("{table} collect: commands in compose services"),
        );
        self.note(
            &verifier.allowed_hosts,
            &format!("{table} allowed_hosts: a network allowlist"),
        );
        if let Some(mode) = verifier
            .network_mode
            .as_ref()
            .filter(|m| m.get_ref() == "allowlist")
        {
            self.at(
                mode.span(),
                &format!("{table} network_mode = \"allowlist\": a network allowlist"),
            );
        }
    }

    fn note(&mut self, value: &Noted, what: &str) {
        if let Some(v) = value {
            self.at(v.span(), what);
        }
    }

    fn at(&mut self, span: std::ops::Range<usize>, what: &str) {
        let (line, _) = line_column(self.text, span.start);
        self.not_run.push(format!(
            "{}:{line}: {what}, which loopbench does not run",
            self.file.display()
        ));
    }
}
