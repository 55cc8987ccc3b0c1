//! loopbench's exports read by other tools' own Python packages, installed from PyPI
//! into cached virtual environments (`common::python`): the ATIF trajectories of the
//! default suite's run validated by the published ATIF models; the Inspect logs of the
//! same run loaded by Inspect's reader, its data frames and its viewer (in headless
//! Chromium). Slow the first time
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

/// Inspect AI, and what its data frames need, as the Inspect tests install them
/// (docs/formats.md pins the version).
const INSPECT_PACKAGES: &[&str] = &["inspect-ai==0.3.285", "pandas==3.1.1", "pyarrow==26.0.1"];

/// Loads every log under `argv[1]` with Inspect's reader and with `samples_df`, any
/// warning an error (but the one pandas deprecation `samples_df` itself triggers), any
/// logged warning recorded; prints each sample's trial, id, epoch and scores as each
/// read them.
const READ_INSPECT: &str = r#"
import json, logging, math, pathlib, sys, warnings
caught = []
class Catch(logging.Handler):
    def emit(self, record):
        caught.append(f"{record.name}: {record.getMessage()}")
logging.getLogger().addHandler(Catch(level=logging.WARNING))
warnings.simplefilter("error")
# samples_df's own call of DataFrame.drop_duplicates(inplace=...), which pandas 3.1
# deprecates: Inspect's, not the log's.
warnings.filterwarnings("ignore", message=r"The inplace keyword in DataFrame.drop_duplicates is deprecated")
from inspect_ai.log import read_eval_log
from inspect_ai.analysis import samples_df
files = sorted(str(p) for p in pathlib.Path(sys.argv[1]).glob("*.json"))
reader = []
for f in files:
    log = read_eval_log(f)
    assert log.status == "success", f
    for s in log.samples:
        reader.append({"log": pathlib.Path(f).name, "task": log.eval.task, "trial_id": s.metadata["trial_id"],
                       "id": s.id, "epoch": s.epoch, "scores": {k: v.value for k, v in s.scores.items()}})
df = samples_df(files, quiet=True)
frame = []
for row in df.to_dict(orient="records"):
    scores = {}
    for k, v in row.items():
        if k.startswith("score_") and v is not None and not (isinstance(v, float) and math.isnan(v)):
            scores[k[len("score_"):]] = v
    frame.append({"trial_id": row["metadata_trial_id"], "id": row["id"], "epoch": int(row["epoch"]), "scores": scores})
print(json.dumps({"files": [pathlib.Path(f).name for f in files], "reader": reader, "frame": frame, "warnings": caught}, default=float))
"#;

/// The scores of a trial the Inspect export must give, from `trials.csv` and
/// `sessions.csv`, each by its definition in docs/metrics.md.
fn expected_scores(
    trial: &std::collections::BTreeMap<String, String>,
    sessions: &[&std::collections::BTreeMap<String, String>],
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    let int = |row: &std::collections::BTreeMap<String, String>, c: &str| -> Option<i64> {
        row[c].parse().ok()
    };
    let coding: Vec<_> = sessions.iter().filter(|s| s["kind"] == "coding").collect();
    let count = |c: &str| {
        coding
            .iter()
            .filter(|s| int(s, c).is_some_and(|v| v > 0))
            .count()
    };
    let mut scores = serde_json::Map::new();
    scores.insert(
        "features_verified".into(),
        json!(int(trial, "features_verified").unwrap()),
    );
    scores.insert(
        "premature_victory".into(),
        json!(u8::from(trial["premature_victory"] == "true")),
    );
    scores.insert(
        "plan_omission".into(),
        json!(u8::from(
            int(trial, "plan_omissions").is_some_and(|v| v > 0)
        )),
    );
    scores.insert("tokens".into(), json!(int(trial, "tokens").unwrap()));
    if let Ok(cost) = trial["cost_usd"].parse::<f64>() {
        scores.insert("cost_usd".into(), json!(cost));
    }
    scores.insert("premature_done".into(), json!(count("premature_claims")));
    scores.insert("spurious_desc_edit".into(), json!(count("desc_edits")));
    scores.insert("spurious_step_edit".into(), json!(count("step_edits")));
    scores.insert("test_removal".into(), json!(count("tests_removed")));
    scores.insert("test_weakening".into(), json!(count("tests_weakened")));
    let resumed_ok = coding
        .iter()
        .filter(|s| s["resumed"] == "true" && s["resume_success"] == "true")
        .count();
    scores.insert("resume_success".into(), json!(resumed_ok));
    scores
}

/// A number of a score as read back (an int may come back as a float).
fn number(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn inspect_export_of_the_default_run_loads_in_inspects_reader_data_frames_and_viewer() {
    let test = "python_interop::inspect_export_of_the_default_run_loads_in_inspects_reader_data_frames_and_viewer";
    let Some(venv) = venv(test, "inspect", INSPECT_PACKAGES) else {
        return;
    };
    let run = common::shared_run::default_suite_run();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("inspect");
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "inspect", "--out"])
        .arg(&out)
        .assert()
        .success();
    let read: serde_json::Value =
        serde_json::from_str(&venv.run_script(READ_INSPECT, &[out.as_os_str()])).unwrap();
    assert_eq!(
        read["warnings"],
        serde_json::json!([]),
        "Inspect logged warnings"
    );
    let trials = common::read_csv(&run.join("trials.csv"));
    let sessions = common::read_csv(&run.join("sessions.csv"));
    let arms: std::collections::BTreeSet<&str> = trials.iter().map(|t| t["arm"].as_str()).collect();
    assert_eq!(
        read["files"].as_array().unwrap().len(),
        arms.len(),
        "one log per arm"
    );
    for source in ["reader", "frame"] {
        let samples = read[source].as_array().unwrap();
        assert_eq!(
            samples.len(),
            trials.len(),
            "{source}: one sample per trial"
        );
        let by_trial: std::collections::BTreeMap<&str, &serde_json::Value> = samples
            .iter()
            .map(|s| (s["trial_id"].as_str().unwrap(), s))
            .collect();
        assert_eq!(
            by_trial.len(),
            trials.len(),
            "{source}: a sample per trial, once"
        );
        for trial in &trials {
            let id = trial["trial_id"].as_str();
            let sample = by_trial
                .get(id)
                .unwrap_or_else(|| panic!("{source}: no sample of {id}"));
            assert_eq!(sample["id"], trial["task"].as_str(), "{source} {id}");
            let replicate: u64 = trial["replicate"].parse().unwrap();
            assert_eq!(sample["epoch"], replicate + 1, "{source} {id}");
            let of_trial: Vec<_> = sessions.iter().filter(|s| s["trial_id"] == id).collect();
            let scores = sample["scores"].as_object().unwrap();
            for (name, want) in expected_scores(trial, &of_trial) {
                let got = scores
                    .get(&name)
                    .unwrap_or_else(|| panic!("{source} {id}: no score {name}: {scores:?}"));
                assert_eq!(number(got), number(&want), "{source} {id}: {name}");
            }
            if trial["cost_usd"].is_empty() {
                assert!(
                    !scores.contains_key("cost_usd"),
                    "{source} {id}: a cost not reported"
                );
            }
        }
    }
    viewer_shows_the_samples(test, &venv, &out, &trials);
}

/// Drives headless Chromium over its DevTools protocol (with the aiohttp that Inspect
/// installs): opens `argv[2]`, clicks the element whose whole text is `argv[4]` once it
/// shows, and waits up to `argv[3]` seconds for every text of `argv[5:]` on the page.
/// Prints `{"found": ..., "text": ...}`; exits 3 when Chromium does not start.
const VIEW_PAGE: &str = r#"
import asyncio, json, os, shutil, subprocess, sys, tempfile, time
import aiohttp

async def main():
    chromium, url, timeout, click_text, expected = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]
    profile = tempfile.mkdtemp()
    browser = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=1400,1000", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
            if time.time() > deadline or browser.poll() is not None:
                print(f"{chromium} did not open its DevTools port", file=sys.stderr)
                sys.exit(3)
            await asyncio.sleep(0.1)
        port = open(port_file).read().split()[0]
        async with aiohttp.ClientSession() as http:
            async with http.put(f"http://127.0.0.1:{port}/json/new?{url}") as r:
                page = await r.json()
            async with http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                n = 0
                async def evaluate(expression):
                    nonlocal n
                    n += 1
                    await ws.send_json({"id": n, "method": "Runtime.evaluate",
                                        "params": {"expression": expression, "returnByValue": True}})
                    while True:
                        msg = await ws.receive_json()
                        if msg.get("id") == n:
                            return msg.get("result", {}).get("result", {}).get("value")
                text, clicked = "", False
                deadline = time.time() + timeout
                while time.time() < deadline:
                    text = await evaluate("document.body ? document.body.innerText : ''") or ""
                    if not clicked and click_text in text.split("\n"):
                        await evaluate("(() => { const el = [...document.querySelectorAll('*')].find("
                                       "e => e.children.length === 0 && e.textContent.trim() === %s);"
                                       " if (el) el.click(); })()" % json.dumps(click_text))
                        clicked = True
                    elif clicked and all(e in text for e in expected):
                        print(json.dumps({"found": True, "text": text}))
                        return
                    await asyncio.sleep(0.5)
                print(json.dumps({"found": False, "clicked": clicked, "text": text}))
    finally:
        browser.kill()
        browser.wait()
        shutil.rmtree(profile, ignore_errors=True)

asyncio.run(main())
"#;

/// `inspect view` of the logs in `out`, opened in headless Chromium: the log list shows
/// the first arm, and its page shows its samples (the first trial's id, and as many
/// rows as the arm has trials). Skipped, saying why, when Chromium is not installed or
/// the viewer or the browser does not start.
fn viewer_shows_the_samples(
    test: &str,
    venv: &common::python::Venv,
    out: &std::path::Path,
    trials: &[std::collections::BTreeMap<String, String>],
) {
    use std::process::{Command, Stdio};
    let Some(chromium) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(std::path::Path::new)
        .find(|p| p.exists())
    else {
        eprintln!(
            "SKIPPED the viewer part of {test}: no Chromium (/usr/bin/chromium) to open it in"
        );
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = out.with_extension("view.log");
    let mut view = Command::new(venv.program("inspect"))
        .args([
            "view",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--log-dir",
        ])
        .arg(out)
        .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
        .stderr(Stdio::from(
            std::fs::File::create(log.with_extension("err")).unwrap(),
        ))
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let listening = loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break true;
        }
        if view.try_wait().unwrap().is_some() || started.elapsed().as_secs() > 60 {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    if !listening {
        let _ = view.kill();
        let _ = view.wait();
        eprintln!(
            "SKIPPED the viewer part of {test}: `inspect view` did not start listening on port {port}: {}",
            std::fs::read_to_string(log.with_extension("err")).unwrap_or_default()
        );
        return;
    }
    let arm = trials[0]["arm"].as_str();
    let of_arm: Vec<_> = trials.iter().filter(|t| t["arm"] == arm).collect();
    // trials.csv is in canonical order: the arm's first trial is its log's first sample.
    let first = of_arm[0];
    let rows = format!("{} rows", of_arm.len());
    let url = format!("http://127.0.0.1:{port}/");
    let shown = Command::new(venv.python())
        .arg("-c")
        .arg(VIEW_PAGE)
        .arg(chromium)
        .args([
            url.as_str(),
            "90",
            arm,
            first["trial_id"].as_str(),
            rows.as_str(),
        ])
        .output()
        .unwrap();
    let _ = view.kill();
    let _ = view.wait();
    if shown.status.code() == Some(3) {
        eprintln!(
            "SKIPPED the viewer part of {test}: {}",
            String::from_utf8_lossy(&shown.stderr).trim()
        );
        return;
    }
    assert!(
        shown.status.success(),
        "the page script failed: {}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let page: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        page["found"],
        true,
        "Inspect's viewer did not show arm {arm}'s samples ({} and '{rows}'); the page said:\n{}",
        first["trial_id"],
        page["text"].as_str().unwrap_or("")
    );
}
