//! loopbench's exports read by other tools' own Python packages, installed from PyPI
//! into cached virtual environments (`common::python`): the ATIF trajectories of the
//! default suite's run validated by the published ATIF models. Slow the first time
//! (the environment is made); filter them with `-E 'test(/^python_interop::/)'`.

use crate::common;

use common::loopbench;
use common::python::venv;

/// The `atif` package the export is validated against (docs/formats.md pins it).
const ATIF_PACKAGE: &str = "atif==1.8.0";

/// Validates every file under `argv[1]` with `atif.Trajectory`, follows each
/// continuation to a file that exists, and prints how many files and chain heads.
const VALIDATE_ATIF: &str = r#"
import json, pathlib, sys, warnings
warnings.simplefilter("error")
from atif import Trajectory
root = pathlib.Path(sys.argv[1])
files = heads = 0
for path in sorted(root.rglob("*.json")):
    t = Trajectory.model_validate_json(path.read_text())
    if t.continued_trajectory_ref is not None:
        assert (path.parent / t.continued_trajectory_ref).is_file(), path
    if "trial_record" in t.extra["loopbench"]:
        heads += 1
    files += 1
print(json.dumps({"files": files, "heads": heads}))
"#;

#[test]
fn atif_export_of_the_default_run_validates_against_the_published_models() {
    let test =
        "python_interop::atif_export_of_the_default_run_validates_against_the_published_models";
    let Some(venv) = venv(test, "atif", &[ATIF_PACKAGE]) else {
        return;
    };
    let run = common::shared_run::default_suite_run();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("atif");
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "atif", "--out"])
        .arg(&out)
        .assert()
        .success();
    let counted: serde_json::Value =
        serde_json::from_str(&venv.run_script(VALIDATE_ATIF, &[out.as_os_str()])).unwrap();
    let sessions = common::read_jsonl(&run.join("sessions.jsonl")).len();
    let trials = common::read_jsonl(&run.join("trials.jsonl")).len();
    assert_eq!(counted["files"], sessions);
    assert_eq!(counted["heads"], trials);
}
