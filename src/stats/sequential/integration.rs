//! The numerical integration behind the sequential boundaries: the sub-density of the
//! statistic carried from look to look on Jennison & Turnbull's grid with Simpson weights
//! (as gsDesign's `gridpts`/`h1`/`hupdate` do), and the Illinois root finder that solves
//! each boundary and the drift of a given power.

use statrs::function::erf::erfc;

/// Grid points per unit of gsDesign's grid (its default `r`).
const GRID_R: usize = 18;

/// Boundaries are searched in `[0, BOUNDARY_CAP]`; a look whose spending is too small to
/// place a boundary below it never stops (its boundary is infinite).
pub(super) const BOUNDARY_CAP: f64 = 40.0;

/// A spending increment below this is treated as nothing to spend (infinite boundary):
/// `Φ̄(37)` is about 6e-300.
const NOTHING_TO_SPEND: f64 = 1e-300;

/// `Φ̄(x)`, the standard normal upper tail, with full relative precision far out.
pub(super) fn upper_tail(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

/// `φ(x)`, the standard normal density.
fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The sub-density of the statistic at one look over the continuation region, as
/// Simpson-weighted point masses: `mass[i] = weight[i] · f(z[i])`, where `f` is the
/// density of `Z_k` on runs that have not stopped. Before the first look it is a unit
/// mass at `z = 0` with `t = 0`, which makes the first look's formulas the general ones.
pub(super) struct Density {
    z: Vec<f64>,
    mass: Vec<f64>,
}

impl Density {
    pub(super) fn start() -> Self {
        Density {
            z: vec![0.0],
            mass: vec![1.0],
        }
    }

    /// `(P(not stopped, Z_t ≥ c), P(not stopped, Z_t ≤ −c))` for the next look at `t`:
    /// given `Z_prev = z`, `Z_t √t ~ N(z √t_prev + drift (t − t_prev), t − t_prev)`.
    pub(super) fn tails(&self, t_prev: f64, t: f64, drift: f64, c: f64) -> (f64, f64) {
        if c.is_infinite() {
            return (0.0, 0.0);
        }
        let (st, sp, sd) = (t.sqrt(), t_prev.sqrt(), (t - t_prev).sqrt());
        let step = drift * (t - t_prev);
        let mut upper = 0.0;
        let mut lower = 0.0;
        for (&z, &m) in self.z.iter().zip(&self.mass) {
            let shift = z * sp + step;
            upper += m * upper_tail((c * st - shift) / sd);
            lower += m * upper_tail((c * st + shift) / sd);
        }
        (upper, lower)
    }

    /// The `c` with `P(not stopped, Z_t ≥ c) = target` under H0, found on the log of the
    /// probability (which is concave in `c`) so that tiny targets are met to full
    /// relative precision.
    pub(super) fn upper_boundary(&self, t_prev: f64, t: f64, target: f64) -> f64 {
        if target.is_nan() || target < NOTHING_TO_SPEND {
            return f64::INFINITY;
        }
        let log_target = target.ln();
        let gap = |c: f64| {
            let (upper, _) = self.tails(t_prev, t, 0.0, c);
            upper.max(f64::MIN_POSITIVE).ln() - log_target
        };
        let (f0, f_cap) = (gap(0.0), gap(BOUNDARY_CAP));
        if f0 <= 0.0 {
            // More is to be spent than the continuing runs above 0 hold: stop them all.
            return 0.0;
        }
        if f_cap >= 0.0 {
            return f64::INFINITY;
        }
        illinois(gap, 0.0, BOUNDARY_CAP, f0, f_cap, 1e-13)
    }

    /// The density at the look at `t` over `(−c, c)`, from this one at `t_prev`.
    pub(super) fn next(&self, t_prev: f64, t: f64, drift: f64, c: f64) -> Density {
        if c <= 0.0 {
            return Density {
                z: Vec::new(),
                mass: Vec::new(),
            };
        }
        let (st, sp, sd) = (t.sqrt(), t_prev.sqrt(), (t - t_prev).sqrt());
        let step = drift * (t - t_prev);
        let shifts: Vec<f64> = self.z.iter().map(|&z| (z * sp + step) / sd).collect();
        let (z, w) = grid_points(drift * st, -c, c);
        let scale = st / sd;
        let mass = z
            .iter()
            .zip(&w)
            .map(|(&zj, &wj)| {
                let x = zj * scale;
                let sum: f64 = shifts
                    .iter()
                    .zip(&self.mass)
                    .map(|(&s, &m)| m * normal_pdf(x - s))
                    .sum();
                wj * scale * sum
            })
            .collect();
        Density { z, mass }
    }
}

/// Jennison & Turnbull's grid for integrating against a normal density centred at `mu`,
/// truncated to `[a, b]`, with Simpson weights: gsDesign's `gridpts(r = 18, mu, a, b)`.
/// `6r − 1` points: `r − 1` in each tail at `mu ± (3 + 4 ln(r / i))`, `4r + 1` evenly
/// over `mu ± 3`; those outside `(a, b)` are replaced by the end points, and Simpson's
/// rule adds the midpoints.
fn grid_points(mu: f64, a: f64, b: f64) -> (Vec<f64>, Vec<f64>) {
    let r = GRID_R;
    let rf = r as f64;
    let tail = |i: usize| 3.0 + 4.0 * (rf / (i as f64 + 1.0)).ln();
    let mut x: Vec<f64> = Vec::with_capacity(6 * r + 1);
    x.extend((0..r - 1).map(|i| mu - tail(i)));
    x.extend((0..=4 * r).map(|i| mu - 3.0 + 3.0 * i as f64 / (2.0 * rf)));
    x.extend((0..r - 1).rev().map(|i| mu + tail(i)));
    if x[0] < a {
        x.retain(|&v| v > a);
        x.insert(0, a);
    }
    if x[x.len() - 1] > b {
        x.retain(|&v| v < b);
        x.push(b);
    }
    let m = x.len();
    let mut z = Vec::with_capacity(2 * m - 1);
    let mut w = Vec::with_capacity(2 * m - 1);
    for i in 0..m {
        z.push(x[i]);
        let left = if i == 0 { x[0] } else { x[i - 1] };
        let right = if i + 1 == m { x[m - 1] } else { x[i + 1] };
        w.push((right - left) / 6.0);
        if i + 1 < m {
            z.push(0.5 * (x[i] + x[i + 1]));
            w.push(4.0 * (x[i + 1] - x[i]) / 6.0);
        }
    }
    (z, w)
}

/// A root of a monotone `f` bracketed by `[lo, hi]` (`f_lo`, `f_hi` of opposite signs)
/// by the Illinois variant of regula falsi, which keeps the bracket and converges
/// superlinearly; stops when the bracket is narrower than `tol` (absolute) or `f` is 0.
pub(super) fn illinois(
    mut f: impl FnMut(f64) -> f64,
    mut lo: f64,
    mut hi: f64,
    mut f_lo: f64,
    mut f_hi: f64,
    tol: f64,
) -> f64 {
    let mut side = 0i8;
    for _ in 0..200 {
        if (hi - lo).abs() <= tol {
            break;
        }
        let mut x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        if !(x > lo.min(hi) && x < lo.max(hi)) {
            x = 0.5 * (lo + hi);
        }
        let fx = f(x);
        if fx == 0.0 {
            return x;
        }
        if (fx < 0.0) == (f_lo < 0.0) {
            lo = x;
            f_lo = fx;
            if side == -1 {
                f_hi *= 0.5;
            }
            side = -1;
        } else {
            hi = x;
            f_hi = fx;
            if side == 1 {
                f_lo *= 0.5;
            }
            side = 1;
        }
    }
    0.5 * (lo + hi)
}
