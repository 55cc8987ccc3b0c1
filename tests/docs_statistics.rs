//! The worked example of "Stratified by task" in docs/statistics.md is recomputed: every
//! number the text gives must be what `loopbench::stats` computes for its counts.

use crate::common;

use loopbench::stats::{Alternative, Stratum, fisher_exact, newcombe_diff, stratified};

/// The example's counts, (k1, n1, k0, n0) per task: easy, hard.
const TASKS: [(u64, u64, u64, u64); 2] = [(36, 40, 280, 400), (140, 400, 4, 40)];

fn percent(k: u64, n: u64) -> String {
    format!("{k} / {n} ({:.1}%)", 100.0 * k as f64 / n as f64)
}

/// Percentage points with a sign, one decimal, as the text writes them (− for minus).
fn pp(x: f64) -> String {
    let s = format!("{:+.1}", 100.0 * x);
    s.replace('-', "−")
}

/// Two significant digits in scientific notation: 3.0e-5.
fn sci(x: f64) -> String {
    format!("{x:.1e}")
}

#[test]
fn the_stratified_worked_example_in_docs_statistics_md_is_what_the_code_computes() {
    let text = std::fs::read_to_string(common::repo_root().join("docs/statistics.md")).unwrap();
    let start = text
        .find("### Worked example: Simpson's paradox")
        .expect("the worked example");
    let example = &text[start..];
    let end = example[4..].find("\n## ").map_or(example.len(), |i| i + 4);
    let example = &example[..end];
    let mut want: Vec<String> = Vec::new();

    for (name, (k1, n1, k0, n0)) in ["easy", "hard"].iter().zip(TASKS) {
        let d = k1 as f64 / n1 as f64 - k0 as f64 / n0 as f64;
        let w = (n1 * n0) as f64 / (n1 + n0) as f64;
        want.push(format!(
            "| {name} | {} | {} | {} pp | {w:.1} |",
            percent(k1, n1),
            percent(k0, n0),
            pp(d)
        ));
    }
    let (k1, n1, k0, n0) = TASKS.iter().fold((0, 0, 0, 0), |t, s| {
        (t.0 + s.0, t.1 + s.1, t.2 + s.2, t.3 + s.3)
    });
    let pooled = k1 as f64 / n1 as f64 - k0 as f64 / n0 as f64;
    want.push(format!(
        "| pooled | {} | {} | {} pp | |",
        percent(k1, n1),
        percent(k0, n0),
        pp(pooled)
    ));
    want.push(format!("looks {:.1} points worse", -100.0 * pooled));
    let newcombe = newcombe_diff(k1, n1, k0, n0, 0.95).unwrap();
    want.push(format!(
        "Newcombe 95% {} to {} pp",
        pp(newcombe.low),
        pp(newcombe.high)
    ));
    let fisher = fisher_exact([[k1, n1 - k1], [k0, n0 - k0]], Alternative::TwoSided).unwrap();
    want.push(format!("Fisher p =\n{}", sci(fisher)));

    let strata: Vec<Stratum> = TASKS
        .iter()
        .map(|&(a, b, c, d)| Stratum::new(a, b, c, d).unwrap())
        .collect();
    let s = stratified(&strata, 0.95).unwrap();
    let diff = s.diff.unwrap();
    want.push(format!("it is {:.1} points better", 100.0 * diff.estimate));
    want.push(format!("`diff_mh` = {} pp", pp(diff.estimate)));
    want.push(format!(
        "(Greenland–Robins 95% {} to {} pp)",
        pp(diff.ci.low),
        pp(diff.ci.high)
    ));
    let cmh = s.cmh.unwrap();
    want.push(format!(
        "CMH statistic {:.2} (z = {:.2})",
        cmh.statistic, cmh.z
    ));
    want.push(format!("`p_cmh` = {}", sci(cmh.p)));
    want.push(format!(
        "one-sided p (the arm is higher) {}",
        sci(cmh.p_value(Alternative::Greater))
    ));
    let or = s.odds_ratio.unwrap();
    want.push(format!(
        "MH odds ratio {:.2} (95% {:.2}\nto {:.2})",
        or.estimate, or.ci.low, or.ci.high
    ));
    let bd = s.homogeneity.unwrap();
    want.push(format!(
        "Breslow–Day {:.3}, `p_homogeneity` = {:.2}",
        bd.statistic, bd.p
    ));

    // The text wraps lines; compare with every run of whitespace as one space.
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let example = flat(example);
    let missing: Vec<String> = want
        .iter()
        .map(|w| flat(w))
        .filter(|w| !example.contains(w.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/statistics.md's worked example lacks (or has other numbers than):\n{}",
        missing.join("\n")
    );
}
