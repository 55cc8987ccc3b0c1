//! Multiple-comparison adjustment of p-values (Holm step-down).

use super::error::{Result, invalid};

/// Holm–Bonferroni adjusted p-values, returned in the input order.
///
/// Convention: statsmodels `multipletests(p, method="holm")[1]`: sort
/// ascending, multiply the i-th smallest (0-based) by `m - i`, take the
/// running maximum (so the adjusted values are monotone in the raw ones) and
/// cap at 1. Tied raw p-values get equal adjusted values. An empty input
/// gives an empty output.
///
/// Errors: a p-value that is NaN or outside [0, 1].
pub fn holm(p: &[f64]) -> Result<Vec<f64>> {
    if let Some(bad) = p.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        return invalid(format!("p-values must be in [0, 1], got {bad}"));
    }
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![0.0; m];
    let mut running_max = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        running_max = running_max.max(p[i] * (m - rank) as f64);
        adjusted[i] = running_max.min(1.0);
    }
    Ok(adjusted)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASES: [&[f64]; 5] = [
        &[0.01, 0.04, 0.03, 0.005],
        &[0.5, 0.5, 0.5],
        &[1e-12, 0.3, 0.3],
        &[0.6, 0.01, 0.02, 0.7, 0.0],
        &[0.04],
    ];

    #[test]
    fn adjusted_values_are_at_least_the_raw_ones_and_at_most_one() {
        for p in CASES {
            for (raw, adj) in p.iter().zip(holm(p).unwrap()) {
                assert!(adj >= *raw && adj <= 1.0);
            }
        }
    }

    #[test]
    fn adjusted_values_keep_the_order_of_the_raw_ones() {
        for p in CASES {
            let adj = holm(p).unwrap();
            for i in 0..p.len() {
                for j in 0..p.len() {
                    if p[i] <= p[j] {
                        assert!(adj[i] <= adj[j], "{p:?} -> {adj:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_single_p_value_is_unchanged_and_empty_input_is_empty() {
        assert_eq!(holm(&[0.04]).unwrap(), vec![0.04]);
        assert!(holm(&[]).unwrap().is_empty());
    }

    #[test]
    fn out_of_range_p_values_are_errors() {
        assert!(holm(&[0.1, f64::NAN]).is_err());
        assert!(holm(&[1.5]).is_err());
        assert!(holm(&[-0.1]).is_err());
    }
}
