//! Everything loopbench writes into a results directory or to `--out` gets the mode the
//! user's umask gives (0644 files and 0755 directories under umask 022), never the
//! 0600 of a temporary file.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::command::{arm, script, sh_suite};
use common::{Trace, loopbench_with_umask, sh_task};

/// Every file and directory under `root` whose mode differs from what `umask` gives.
fn wrong_modes(root: &Path, umask: u32) -> Vec<String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(Result::unwrap)
        .filter_map(|e| {
            let mode = e.metadata().unwrap().permissions().mode() & 0o777;
            let want = if e.file_type().is_dir() { 0o777 } else { 0o666 } & !umask;
            (mode != want).then(|| format!("{:o} (want {want:o}) {}", mode, e.path().display()))
        })
        .collect()
}

#[test]
fn results_of_run_replay_report_weekly_and_import_get_the_mode_the_umask_gives() {
    for (umask_text, umask) in [("022", 0o022), ("027", 0o027)] {
        let tmp = tempfile::tempdir().unwrap();
        let fixtures = tmp.path().join("fixtures");
        std::fs::create_dir(&fixtures).unwrap();
        script(
            &fixtures,
            "agent.sh",
            "echo '{\"type\":\"result\",\"subtype\":\"success\",\"num_turns\":1}'\n",
        );
        let agents = "[agents.a]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
        let suite = sh_suite(&fixtures, agents, &arm("a", "a", 1, ""));
        let results = tmp.path().join("results");
        let run = |args: &[&std::ffi::OsStr]| {
            loopbench_with_umask(umask_text)
                .args(args)
                .assert()
                .success();
        };
        let ran = results.join("ran");
        run(&[
            "run".as_ref(),
            suite.as_os_str(),
            "--quiet".as_ref(),
            "--out".as_ref(),
            ran.as_os_str(),
        ]);
        let trace = Trace::new()
            .session(1)
            .write("src/f1.txt", "one\n")
            .end("completed")
            .save(&fixtures);
        let task = sh_task(&fixtures);
        let replayed = results.join("replayed");
        run(&[
            "replay".as_ref(),
            trace.as_os_str(),
            "--task".as_ref(),
            task.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
            "--out".as_ref(),
            replayed.as_os_str(),
        ]);
        run(&["report".as_ref(), replayed.as_os_str()]);
        let weekly = results.join("weekly");
        run(&[
            "weekly".as_ref(),
            results.as_os_str(),
            "--out".as_ref(),
            weekly.as_os_str(),
        ]);
        let imported = results.join("imported/trace.jsonl");
        run(&[
            "import".as_ref(),
            "stream-json".as_ref(),
            ran.join("agents/a:shtask:0").as_os_str(),
            "--out".as_ref(),
            imported.as_os_str(),
        ]);
        for expected in [
            "ran/manifest.json",
            "ran/sessions.csv",
            "ran/summary.md",
            "ran/agents/a:shtask:0/session-1.stdout",
            "replayed/trials.csv",
            "replayed/summary.json",
            "replayed/plots/premature_done.svg",
            "weekly/weekly.csv",
            "imported/trace.jsonl",
        ] {
            assert!(
                results.join(expected).is_file(),
                "{expected} was not written"
            );
        }
        let wrong = wrong_modes(&results, umask);
        assert!(
            wrong.is_empty(),
            "under umask {umask_text}:\n{}",
            wrong.join("\n")
        );
    }
}
