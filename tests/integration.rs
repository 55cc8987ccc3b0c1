//! Every integration test of the binary, in one test executable: each file of `tests/`
//! is a module of it (`autotests = false` in Cargo.toml), so that a change to the library
//! links one test binary instead of one per file. `registered_test_files` holds that no
//! file of `tests/` is left out.

mod common;

mod agent_stop;
mod agent_wrappers;
mod arm_keys;
mod atif_round_trip;
mod batched_checks;
mod calibration;
mod check_task;
mod claims_as_read;
mod clean_tree;
mod cli_conventions;
mod cli_examples;
mod command_agent;
mod command_trajectories;
mod compare_cli;
mod container_agent;
mod container_runs;
mod container_sandbox;
mod csv_formulas;
mod csv_input_cli;
mod declared_interruptions;
mod doc_examples;
mod docs_formats;
mod docs_metrics;
mod docs_real_ab;
mod docs_scale_out;
mod docs_shell_blocks;
mod docs_statistics;
mod docs_writing_tasks;
mod engine_events;
mod evidence;
mod example_ab;
mod export_cli;
mod forged_checks;
mod forged_imports;
mod gate_replay;
mod harbor_tasks;
mod harness_failures;
mod hostile_agents;
mod hostile_bounds;
mod hostile_captures;
mod hostile_descriptors;
mod hostile_effects;
mod hostile_failures;
mod hostile_keyrings;
mod hostile_paths;
mod hostile_query;
mod hostile_sandbox;
mod html_report;
mod import_aider;
mod import_atif;
mod import_atif_codex;
mod import_atif_converted;
mod import_cli;
mod import_codex;
mod import_formats;
mod import_fuzz;
mod infra_failures;
mod keep_repos;
mod layers;
mod markdown_commonmark;
mod patched_runner;
mod power_cli;
mod python_interop;
mod readers;
mod real_cli;
mod real_cli_faults;
mod reference_run;
mod replay_cli;
mod replay_engine;
mod replay_many;
mod replay_metrics;
mod repo_stands_alone;
mod report_cli;
mod result_modes;
mod results_dir_cli;
mod resume_shard;
mod run_cli;
mod sandbox_network;
mod sandbox_sessions;
mod scratch_leftovers;
mod seed_patterns;
mod sequential_run;
mod sequential_sim;
mod sequential_vectors;
mod show_cli;
mod signals_cli;
mod sim_ground_truth;
mod special_files;
mod stats_vectors;
mod status_replay;
mod stratified_cli;
mod stratified_sim;
mod tally_agreement;
mod task_environment;
mod trajectories;
mod unobservable_sessions;
mod weekly_cli;
mod weekly_forged_runs;

/// A file of `tests/` that no `mod` line above names would never be compiled, and its
/// tests would silently never run.
#[test]
fn registered_test_files() {
    let root = common::repo_root().join("tests");
    let this = std::fs::read_to_string(root.join("integration.rs")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs")
            && stem != "integration"
            && !this.lines().any(|l| l == format!("mod {stem};"))
        {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/integration.rs does not name these files of tests/ (add `mod NAME;`): {missing:?}"
    );
}
