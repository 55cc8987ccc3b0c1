//! Deterministic number formatting shared by the reports: full precision for files that
//! programs read, short forms for tables that people read.

/// The shortest text that reads back as exactly `x` (the form `summary.json` uses), so
/// that CSV and JSON agree digit for digit. Non-finite values give an empty cell.
pub fn exact(x: f64) -> String {
    if x.is_finite() {
        serde_json::to_string(&x).unwrap_or_default()
    } else {
        String::new()
    }
}

/// `exact` of an optional value; `None` is an empty cell.
pub fn exact_opt(x: Option<f64>) -> String {
    x.map(exact).unwrap_or_default()
}

/// A rate as a percentage with one decimal: `0.12917` → `12.9%`.
pub fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A signed difference of rates in percentage points: `+4.2 pp`.
pub fn pp(x: f64) -> String {
    format!("{:+.1} pp", x * 100.0)
}

/// A p-value: three decimals down to 0.001, then two significant digits in
/// scientific form (`2.3e-6`).
pub fn pvalue(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// A confidence level as a percentage, to 0.1 point: 0.95 → `95%`, 0.999 → `99.9%`.
pub fn level(confidence: f64) -> String {
    format!("{}%", (confidence * 1000.0).round() / 10.0)
}

/// A plain number with `digits` decimals.
pub fn fixed(x: f64, digits: usize) -> String {
    format!("{x:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_numbers_round_trip_and_small_p_values_stay_short() {
        for x in [0.1, 1.0 / 3.0, 1.5640699973738203e-06, 0.0, 1e-300] {
            assert_eq!(exact(x).parse::<f64>().unwrap(), x);
        }
        assert_eq!(exact(f64::NAN), "");
        assert_eq!(pvalue(0.0412), "0.041");
        assert_eq!(pvalue(1.5640699973738203e-06), "1.6e-6");
        assert_eq!(pct(31.0 / 240.0), "12.9%");
        assert_eq!(pp(-0.0412), "-4.1 pp");
        assert_eq!(level(0.95), "95%");
        assert_eq!(level(0.999), "99.9%");
    }
}
