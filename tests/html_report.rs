//! report.html in a real browser: headless Chromium loads the page from disk, and the
//! DOM its script builds is checked against the CSV files of the same run.

use crate::common;
use crate::common::csvgen;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{loopbench, read_csv, repo_root};
use csvgen::{ArmSpec, write_csvs, write_manifest};

/// The Chromium binary, or None when this machine has none (CI installs it, and there a
/// missing browser fails the test instead of skipping it).
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no chromium: .ci/run installs it"
        );
        eprintln!("skipped: no chromium on this machine");
    }
    found
}

/// What the page looks like once its script ran, and what the browser logged.
struct Loaded {
    dom: String,
    log: String,
}

/// Opens `page` (with `fragment`, the page's filter state) in headless Chromium and
/// dumps the DOM after the load.
fn open(browser: &Path, page: &Path, fragment: &str, profile: &Path) -> Loaded {
    open_with(browser, page, fragment, profile, &[])
}

/// `open`, with `flags` added to Chromium's command line.
fn open_with(
    browser: &Path,
    page: &Path,
    fragment: &str,
    profile: &Path,
    flags: &[&str],
) -> Loaded {
    let url = format!("file://{}#{fragment}", page.display());
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(&url)
        .output()
        .expect("chromium starts");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Loaded {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        log: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The console messages of the page (Chromium logs each as `CONSOLE(line)] "..."`).
fn console_messages(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// The value of attribute `name` in the opening tag `tag` (the text from `<` to `>`).
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// Every opening tag of the DOM whose class list holds all of `classes`.
fn tags_with_classes<'a>(dom: &'a str, classes: &[&str]) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut rest = dom;
    while let Some(start) = rest.find('<') {
        let Some(len) = rest[start..].find('>') else {
            break;
        };
        let tag = &rest[start..start + len + 1];
        if let Some(class) = attribute(tag, "class") {
            let have: BTreeSet<&str> = class.split_whitespace().collect();
            if classes.iter().all(|c| have.contains(c)) {
                found.push(tag);
            }
        }
        rest = &rest[start + len + 1..];
    }
    found
}

/// The element with id `id`, as its opening tag.
fn tag_with_id<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!(" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the page"));
    let start = dom[..at].rfind('<').unwrap();
    let len = dom[start..].find('>').unwrap();
    &dom[start..=start + len]
}

#[test]
fn a_filter_for_one_arm_and_metric_lists_exactly_the_sessions_counted_in_it() {
    let Some(browser) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    loopbench()
        .arg("run")
        .arg(repo_root().join("suites/seed-replication"))
        .args([
            "--arms",
            "json,markdown",
            "--replicates",
            "4",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let page = out.join("report.html");
    assert!(page.is_file(), "run writes report.html");

    // What the CSVs say: markdown's coding sessions with a premature claim.
    let sessions = read_csv(&out.join("sessions.csv"));
    let counted: BTreeSet<(String, String)> = sessions
        .iter()
        .filter(|r| r["arm"] == "markdown" && r["kind"] == "coding")
        .filter(|r| r["premature_claims"].parse::<u64>().is_ok_and(|n| n > 0))
        .map(|r| (r["trial_id"].clone(), r["session"].clone()))
        .collect();
    assert!(!counted.is_empty(), "the run has premature claims to find");
    let summary = read_csv(&out.join("summary.csv"));
    let k = &summary
        .iter()
        .find(|r| r["arm"] == "markdown" && r["metric"] == "premature_done")
        .unwrap()["k"];
    assert_eq!(
        k,
        &counted.len().to_string(),
        "summary.csv counts the same sessions"
    );

    let profile = tmp.path().join("profile");
    let filtered = open(
        &browser,
        &page,
        "arm=markdown&metric=premature_done&per=all",
        &profile,
    );
    assert_eq!(
        console_messages(&filtered.log),
        Vec::<&str>::new(),
        "console"
    );
    assert!(
        filtered.dom.contains("data-ready=\"1\""),
        "the page's script finished: {}",
        &filtered.dom[..filtered.dom.len().min(2000)]
    );
    let shown: BTreeSet<(String, String)> = tags_with_classes(&filtered.dom, &["session", "hit"])
        .iter()
        .map(|tag| {
            (
                attribute(tag, "data-trial").unwrap().to_string(),
                attribute(tag, "data-session").unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(shown, counted, "the sessions the page marks");
    let count = tag_with_id(&filtered.dom, "match-count");
    assert_eq!(attribute(count, "data-hits"), Some(k.as_str()));
    for trial in tags_with_classes(&filtered.dom, &["trial"]) {
        assert_eq!(attribute(trial, "data-arm"), Some("markdown"), "{trial}");
    }

    // Unfiltered, every session of the run is on the page.
    let all = open(&browser, &page, "per=all", &profile);
    assert_eq!(console_messages(&all.log), Vec::<&str>::new(), "console");
    let every = tags_with_classes(&all.dom, &["session"]);
    assert_eq!(
        every.len(),
        sessions.len(),
        "one block per row of sessions.csv"
    );
    assert!(tags_with_classes(&all.dom, &["hit"]).is_empty());

    // The suite has two tasks: beside the pooled table, the per-task one, whose k add
    // up to the pooled k and match sessions.csv task by task.
    let by_task = table_rows(&all.dom, "premature_done:by_task");
    let tasks: Vec<&str> = by_task.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(tasks, ["invoicer", "todo"], "{by_task:?}");
    for row in &by_task {
        assert_eq!(row[0], "markdown", "{row:?}");
        let in_task = counted
            .iter()
            .filter(|(trial, _)| trial.contains(&format!(":{}:", row[1])))
            .count();
        assert_eq!(row[2], in_task.to_string(), "{row:?}");
    }
    let pooled = table_rows(&all.dom, "premature_done");
    assert!(
        pooled.iter().all(|r| r.len() == 14),
        "the pooled table has the stratified columns: {pooled:?}"
    );
}

#[test]
fn a_large_runs_page_loads_the_timelines_it_shows_from_the_files_beside_it() {
    let Some(browser) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    // More trials than report.html holds itself (MAX_TRIALS_IN_PAGE, 2,000).
    write_csvs(
        &run,
        &[
            ArmSpec::new("json", 1100, 2).with("premature_claims", 30),
            ArmSpec::new("markdown", 1100, 2).with("premature_claims", 60),
        ],
    );
    write_manifest(&run, &["json", "markdown"], "2026-11-02T08:00:00Z", false);
    let sessions = read_csv(&run.join("sessions.csv"));
    let counted: BTreeSet<(String, String)> = sessions
        .iter()
        .filter(|r| r["arm"] == "markdown" && r["kind"] == "coding")
        .filter(|r| r["premature_claims"].parse::<u64>().is_ok_and(|n| n > 0))
        .map(|r| (r["trial_id"].clone(), r["session"].clone()))
        .collect();
    assert_eq!(counted.len(), 60);
    // The evidence of one counted session, in the record the page reads it from: a
    // real session record of the sim agent, renamed to it.
    let sim = tmp.path().join("sim");
    loopbench()
        .arg("run")
        .arg(repo_root().join("suites/seed-replication"))
        .args([
            "--arms",
            "markdown",
            "--replicates",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&sim)
        .assert()
        .success();
    let (trial, session) = counted.iter().last().unwrap().clone();
    let text = std::fs::read_to_string(sim.join("sessions.jsonl")).unwrap();
    let mut record: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let original = (
        record["trial_id"].as_str().unwrap().to_string(),
        record["session"].clone(),
    );
    let replicate: u64 = trial.rsplit(':').next().unwrap().parse().unwrap();
    record["trial_id"] = trial.clone().into();
    record["task"] = "ledgerly".into();
    record["replicate"] = replicate.into();
    record["session"] = session.parse::<u64>().unwrap().into();
    record["evidence"]["premature"] = serde_json::json!(["feature-from-the-side-file"]);
    record["evidence"]["newly_claimed"] = serde_json::json!(["feature-from-the-side-file"]);
    // Its trajectory: the sim session's own, renamed, ending in the write of the list
    // that marked that feature passing.
    let mut line: serde_json::Value = std::fs::read_to_string(sim.join("trajectories.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["trial_id"] == original.0.as_str() && l["session"] == original.1)
        .expect("the sim session's trajectory");
    line["trial_id"] = trial.clone().into();
    line["session"] = record["session"].clone();
    line["trajectory"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "kind": "edit", "path": "features.md", "op": "write",
            "new": "- [x] **feature-from-the-side-file** done\n",
        }));
    std::fs::write(run.join("sessions.jsonl"), format!("{record}\n")).unwrap();
    std::fs::write(run.join("trajectories.jsonl"), format!("{line}\n")).unwrap();
    loopbench()
        .arg("report")
        .arg(&run)
        .arg("--html")
        .assert()
        .success();
    let page = run.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("feature-from-the-side-file"),
        "the sessions are not in the page"
    );
    let side = run.join("report-timelines");
    let (steps, files): (BTreeSet<String>, BTreeSet<String>) = std::fs::read_dir(&side)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .partition(|name| name.starts_with("steps-"));
    assert_eq!(files.len(), 22, "100 trials a file: {files:?}");
    assert!(files.contains("0000.js") && files.contains("0021.js"));
    assert_eq!(steps.len(), 1, "one trial has steps: {steps:?}");

    let profile = tmp.path().join("profile");
    let filtered = open(
        &browser,
        &page,
        "arm=markdown&metric=premature_done&per=all",
        &profile,
    );
    assert_eq!(
        console_messages(&filtered.log),
        Vec::<&str>::new(),
        "console"
    );
    assert!(filtered.dom.contains("data-ready=\"1\""));
    let shown: BTreeSet<(String, String)> = tags_with_classes(&filtered.dom, &["session", "hit"])
        .iter()
        .map(|tag| {
            (
                attribute(tag, "data-trial").unwrap().to_string(),
                attribute(tag, "data-session").unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        shown, counted,
        "the sessions the page marks, from the side files"
    );
    assert!(
        filtered.dom.contains("feature-from-the-side-file"),
        "the evidence came with its session"
    );
    assert!(
        tags_with_classes(&filtered.dom, &["loading"]).is_empty(),
        "every timeline shown was loaded"
    );
    // The steps are loaded only when their trial is opened.
    assert!(step_marks(&filtered.dom).is_empty());
    let opened = open_offline(
        &browser,
        &page,
        &format!(
            "arm=markdown&metric=premature_done&open={}",
            trial.replace(':', "%3A")
        ),
        &profile,
    );
    assert_eq!(console_messages(&opened.log), Vec::<&str>::new(), "console");
    assert!(
        tags_with_classes(&opened.dom, &["loading"]).is_empty(),
        "the opened trial's steps were loaded"
    );
    // The step that marked the feature passing, with its evidence (and the session's
    // other marks, as its record gives them).
    let marks = step_marks(&opened.dom);
    let passing = (
        "premature_claims".to_string(),
        "feature-from-the-side-file".to_string(),
        "premature_claims: feature-from-the-side-file: passes false → true: marked passing \
         here; its feature is not verified"
            .to_string(),
    );
    assert!(
        marks.contains(&passing),
        "the marked step, from the file beside the page: {marks:?}"
    );
    let at = opened.dom.find("marked passing here").unwrap();
    let session_at = opened.dom[..at].rfind("data-session=").unwrap();
    let tag_end = session_at + opened.dom[session_at..].find('>').unwrap();
    assert!(
        opened.dom[session_at..tag_end].contains(&format!("data-session=\"{session}\"")),
        "in the timeline of its session"
    );
    let unfolded = tags_with_classes(&opened.dom, &["trajectory"]);
    assert_eq!(unfolded.len(), 1, "the one session with steps");
    assert!(unfolded[0].contains(" open="), "unfolded: {unfolded:?}");

    // A page of 20 trials needs one file; the run's trials are all counted.
    let first = open(&browser, &page, "", &profile);
    let count = tag_with_id(&first.dom, "match-count");
    assert_eq!(attribute(count, "data-trials"), Some("2200"));
    assert_eq!(
        tags_with_classes(&first.dom, &["session"]).len(),
        20 * 3,
        "20 trials of 3 sessions"
    );

    // Below the threshold the page holds its timelines again, and the files go.
    write_csvs(&run, &[ArmSpec::new("json", 30, 2)]);
    write_manifest(&run, &["json"], "2026-11-02T08:00:00Z", false);
    std::fs::remove_file(run.join("sessions.jsonl")).unwrap();
    loopbench()
        .arg("report")
        .arg(&run)
        .arg("--html")
        .assert()
        .success();
    assert!(!side.exists(), "no timelines beside a page that holds them");
}

/// The rows of the table `data-table="ID"` as cell texts.
fn table_rows(dom: &str, id: &str) -> Vec<Vec<String>> {
    let start = dom
        .find(&format!("data-table=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let body = &dom[start..];
    let body = &body[body.find("<tbody").expect("a tbody")..body.find("</tbody>").unwrap()];
    body.split("<tr")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let text = &cell[cell.find('>').unwrap() + 1..];
                    let text = &text[..text.find("</td>").unwrap_or(text.len())];
                    strip_tags(text)
                })
                .collect()
        })
        .collect()
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

#[test]
fn the_weekly_page_shows_each_week_and_flags_the_regression() {
    let Some(browser) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    for (name, started, premature) in [
        ("a", "2026-10-19T08:00:00Z", 22),
        ("b", "2026-10-27T08:00:00Z", 20),
        ("c", "2026-11-06T23:30:00Z", 60),
    ] {
        let dir = root.join("seed-replication").join(name);
        write_csvs(
            &dir,
            &[
                ArmSpec::new("json", 20, 12).with("premature_claims", premature),
                ArmSpec::new("yaml", 20, 12).with("premature_claims", 37),
            ],
        );
        write_manifest(&dir, &["json", "yaml"], started, false);
    }
    let out = tmp.path().join("weekly");
    loopbench()
        .arg("weekly")
        .arg(&root)
        .arg("--html")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let csv: Vec<Vec<String>> = read_csv(&out.join("weekly.csv"))
        .into_iter()
        .filter(|r| r["metric"] == "premature_done")
        .map(|r| {
            let flag = if r["regression"] == "true" {
                "REGRESSION"
            } else {
                ""
            };
            vec![
                r["week"].clone(),
                r["arm"].clone(),
                r["k"].clone(),
                flag.to_string(),
            ]
        })
        .collect();
    assert_eq!(csv.len(), 6, "three weeks by two arms");

    let page = open(
        &browser,
        &out.join("weekly.html"),
        "",
        &tmp.path().join("profile"),
    );
    assert_eq!(console_messages(&page.log), Vec::<&str>::new(), "console");
    assert!(
        page.dom.contains("data-ready=\"1\""),
        "the page's script finished"
    );
    let shown: Vec<Vec<String>> = table_rows(&page.dom, "weekly:premature_done")
        .into_iter()
        .map(|cells| {
            vec![
                cells[0].clone(),
                cells[1].clone(),
                cells[3].clone(),
                cells[9].clone(),
            ]
        })
        .collect();
    assert_eq!(shown, csv, "the page's rows are weekly.csv's");
    assert!(
        shown
            .iter()
            .any(|r| r == &["2026-W45", "json", "60", "REGRESSION"].map(String::from))
    );
    assert!(page.dom.contains("<img"), "the trend plots are on the page");
}

#[test]
fn the_page_shows_invisible_characters_an_agent_wrote_as_escapes() {
    let Some(browser) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let task = common::sh_task(tmp.path());
    let list = "[{\"id\": \"F1\u{200b}\", \"description\": \"file 1 exists\u{200b}\u{202e}\", \"passes\": true}, {\"id\": \"F2\"}, {\"id\": \"F3\"}]";
    let trace = common::Trace::new()
        .session(1)
        .write("feature_list.json", list)
        .commit()
        .end("completed");
    let out = tmp.path().join("run");
    loopbench()
        .arg("replay")
        .arg(trace.save(tmp.path()))
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    loopbench()
        .arg("report")
        .arg(&out)
        .arg("--html")
        .assert()
        .success();
    let loaded = open(
        browser.as_path(),
        &out.join("report.html"),
        "",
        &tmp.path().join("profile"),
    );
    // What the page shows, without the data its script reads.
    let mut shown = loaded.dom.clone();
    while let (Some(start), Some(end)) = (shown.find("<script"), shown.find("</script>")) {
        if end < start {
            break;
        }
        shown.replace_range(start..end + "</script>".len(), "");
    }
    assert!(
        shown.contains("file 1 exists\\u{200b}\\u{202e}"),
        "the description is not shown escaped:\n{shown}"
    );
    assert!(
        !shown.contains(['\u{200b}', '\u{202e}']),
        "an invisible character is shown raw:\n{shown}"
    );
}

/// The marks of the page's steps (`div.mark`), as (metric, feature, text).
fn step_marks(dom: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let mut rest = dom;
    while let Some(at) = rest.find("<div class=\"mark\"") {
        let tag_end = at + rest[at..].find('>').unwrap();
        let tag = &rest[at..=tag_end];
        let close = tag_end + rest[tag_end..].find("</div>").unwrap();
        found.push((
            attribute(tag, "data-metric").unwrap_or("").to_string(),
            attribute(tag, "data-feature").unwrap_or("").to_string(),
            rest[tag_end + 1..close].to_string(),
        ));
        rest = &rest[close..];
    }
    found
}

/// Opens `page` with every trial listed, offline (any request for the network goes to
/// a closed port and would be logged), and returns what the browser showed.
fn open_offline(browser: &Path, page: &Path, fragment: &str, profile: &Path) -> Loaded {
    open_with(
        browser,
        page,
        &format!("per=all&{fragment}"),
        profile,
        &[
            "--proxy-server=http://127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ],
    )
}

#[test]
fn a_sessions_steps_open_from_its_timeline_with_the_step_that_marked_a_feature_passing() {
    let Some(browser) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The default suite (two of its arms), and an imported Claude Code project replayed.
    let sim = tmp.path().join("sim");
    loopbench()
        .arg("run")
        .arg(repo_root().join("suites/seed-replication"))
        .args([
            "--arms",
            "json,markdown",
            "--replicates",
            "1",
            "--seed",
            "5",
            "--quiet",
        ])
        .arg("--out")
        .arg(&sim)
        .assert()
        .success();
    let imported = loopbench()
        .args(["import", "claude-code", "tests/data/claude-code/latefees"])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(imported.status.success());
    let trace = tmp.path().join("trace.jsonl");
    std::fs::write(&trace, &imported.stdout).unwrap();
    let replayed = tmp.path().join("replayed");
    loopbench()
        .arg("replay")
        .arg(&trace)
        .arg("--task")
        .arg(repo_root().join("suites/examples/tasks/latefees"))
        .args(["--format", "json", "--quiet", "--out"])
        .arg(&replayed)
        .assert()
        .success();
    for (run, feature) in [(&sim, None), (&replayed, Some("F1"))] {
        loopbench()
            .arg("report")
            .arg(run)
            .arg("--html")
            .assert()
            .success();
        let page = run.join("report.html");
        // One trial opened: its sessions unfolded into their steps.
        let trial = read_csv(&run.join("trials.csv"))[0]["trial_id"].clone();
        let fragment = format!("open={}", trial.replace(':', "%3A"));
        let loaded = open_offline(&browser, &page, &fragment, &tmp.path().join("profile"));
        assert_eq!(console_messages(&loaded.log), Vec::<&str>::new(), "console");
        // Each session's timeline opens into its steps.
        let folded = tags_with_classes(&loaded.dom, &["trajectory"]);
        let sessions = read_csv(&run.join("sessions.csv")).len();
        assert_eq!(folded.len(), sessions, "a trajectory per session");
        let of_trial = read_csv(&run.join("sessions.csv"))
            .iter()
            .filter(|s| s["trial_id"] == trial)
            .count();
        let unfolded = folded.iter().filter(|t| t.contains(" open=")).count();
        assert_eq!(unfolded, of_trial, "the opened trial's sessions unfold");
        // The step where a feature was marked passing, with its evidence.
        let marks = step_marks(&loaded.dom);
        let passing: Vec<&(String, String, String)> = marks
            .iter()
            .filter(|(_, f, text)| {
                text.contains("passes false → true: marked passing here")
                    && feature.is_none_or(|id| f == id)
            })
            .collect();
        assert!(!passing.is_empty(), "{marks:?}");
        if feature.is_some() {
            assert!(
                passing[0].2.contains("its check"),
                "the mark names the check's verdict: {passing:?}"
            );
        }
        // The step is in the timeline of its session, inside its folded trajectory.
        let at = loaded.dom.find("marked passing here").unwrap();
        let trajectory = loaded.dom[..at].rfind("class=\"trajectory\"").unwrap();
        let session = loaded.dom[..at].rfind("data-session=").unwrap();
        assert!(session < trajectory);
        assert!(tags_with_classes(&loaded.dom, &["step", "counted"]).len() >= passing.len());
        // The filter of counted steps is there.
        assert!(loaded.dom.contains("only the entries a metric counted"));
    }
}
