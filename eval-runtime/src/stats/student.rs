//! Student's t and the normal quantiles the intervals and tests need.

use statrs::distribution::{ContinuousCDF, Normal};

/// The `p` quantile of the standard normal distribution.
pub(crate) fn z_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// The `p` quantile of Student's t with `df` degrees of freedom (infinite
/// when `df` is not positive; `−∞` and `∞` at `p` 0 and 1).
///
/// Accuracy, measured against 40-digit values (the root of the t CDF as
/// the regularised incomplete beta function, mpmath 1.3 `betainc` and
/// `findroot`) at df 1 to 1000 (every integer, and halves), 1500, 2000,
/// 5000, 30,000, 10⁵, 10⁶, 10⁷, 10⁹ and 10¹², and p (and 1 − p) 10⁻³⁰⁰,
/// 10⁻¹⁰⁰, 10⁻³⁰, 10⁻¹⁶ … 0.45, 0.5 − 10⁻⁷: relative error at most
/// 5.1·10⁻¹⁴ (at p = 10⁻³⁰⁰), 1.1·10⁻¹⁴ for p from 10⁻¹⁰⁰ to
/// 1 − 10⁻¹⁰⁰, 3.9·10⁻¹⁵ at p = 0.975. `statrs`' `StudentsT::inverse_cdf`,
/// used before, is off by 3.3·10⁻⁷ at df 30,000 (p 0.975), 6.1·10⁻⁵ at
/// 10⁶ (2.9·10⁻⁴ at p 0.9), 2.8·10⁻⁹ at df 971 (p 0.8) and 79% at df 1,
/// p 1 − 10⁻⁹. How:
///
/// * df 1 and 2: the closed forms `cot(π·q)` and `(1 − 2q)/√(2q(1 − q))`
///   (q the upper tail, `1 − p` for p > ½).
/// * large df: the expansion of the t quantile in powers of 1/df around
///   the normal quantile x (Abramowitz & Stegun 26.7.5, through 1/df⁴,
///   with the next term of the same expansion, Fisher & Cornish 1960);
///   used when that last term is below 10⁻¹² of x, so the terms left out
///   (the next is about 1/df smaller) are below double precision: from
///   df 207 at p 0.975, 319 at 0.995, 483 at 0.9995.
/// * otherwise: Newton's method on the t CDF, as the regularised
///   incomplete beta function (A&S 26.7.1: the upper tail
///   `½·I_{df/(df+t²)}(df/2, ½)`) by its continued fraction (DLMF
///   8.17.22): the tail probability computed directly beyond
///   `t² = 1.5·df/(df/2 + 1)`, where that fraction converges fast, the
///   central one (`½·I_{t²/(df+t²)}(½, df/2)`) below, so neither loses
///   digits to `1 − …`; started from the normal approximation, kept within
///   a bracket of the root.
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::INFINITY;
    }
    if p.is_nan() {
        return f64::NAN;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    if df == f64::INFINITY {
        return z_quantile(p);
    }
    // The upper tail q = P(T > |t|) and the central c = P(0 < T < |t|) of
    // the answer's magnitude: both exact in floating point (Sterbenz).
    let (q, c, sign) = if p >= 0.5 {
        (1.0 - p, p - 0.5, 1.0)
    } else {
        (p, 0.5 - p, -1.0)
    };
    if c == 0.0 {
        return 0.0;
    }
    sign * upper_t(q, c, df)
}

/// The t (≥ 0) with upper tail `q` and central probability `c = ½ − q`.
fn upper_t(q: f64, c: f64, df: f64) -> f64 {
    use std::f64::consts::PI;
    if df == 1.0 {
        // Cauchy: P(T > t) = ½ − atan(t)/π.
        return if q < 0.25 {
            1.0 / (PI * q).tan()
        } else {
            (PI * c).tan()
        };
    }
    if df == 2.0 {
        // P(T > t) = ½ − t / (2√(2 + t²)).
        return 2.0 * c / (2.0 * q * (1.0 - q)).sqrt();
    }
    t_by_expansion(q, df).unwrap_or_else(|| t_by_newton(q, c, df))
}

/// A&S 26.7.5: `t = x + g1/ν + g2/ν² + g3/ν³ + g4/ν⁴ + …`, x the normal
/// quantile, `g1 = (x³ + x)/4`, `g2 = (5x⁵ + 16x³ + 3x)/96`,
/// `g3 = (3x⁷ + 19x⁵ + 17x³ − 15x)/384`,
/// `g4 = (79x⁹ + 776x⁷ + 1482x⁵ − 1920x³ − 945x)/92160`; and the next
/// term, `g5/ν⁵`, `g5 = (27x¹¹ + 339x⁹ + 930x⁷ − 1782x⁵ − 765x³ +
/// 17955x)/368640` (with it the series matches 50-digit roots to 22 digits
/// at df 30,000). `None` when the last term is not negligible (small df,
/// far tails) or x is not finite.
fn t_by_expansion(q: f64, df: f64) -> Option<f64> {
    let x = -z_quantile(q);
    if !x.is_finite() {
        return None;
    }
    let x2 = x * x;
    let g1 = x * (x2 + 1.0) / 4.0;
    let g2 = x * ((5.0 * x2 + 16.0) * x2 + 3.0) / 96.0;
    let g3 = x * (((3.0 * x2 + 19.0) * x2 + 17.0) * x2 - 15.0) / 384.0;
    let g4 = x * ((((79.0 * x2 + 776.0) * x2 + 1482.0) * x2 - 1920.0) * x2 - 945.0) / 92160.0;
    let g5 = x * (((((27.0 * x2 + 339.0) * x2 + 930.0) * x2 - 1782.0) * x2 - 765.0) * x2 + 17955.0)
        / 368640.0;
    let v = 1.0 / df;
    if g5.abs() * v.powi(5) > 1e-12 * x {
        return None;
    }
    Some(x + v * (g1 + v * (g2 + v * (g3 + v * (g4 + v * g5)))))
}

/// `ln Γ(a + ½) − ln Γ(a)`, a > 0: its asymptotic series in 1/a
/// (`½ ln a − 1/(8a) + 1/(192a³) − 1/(640a⁵) + 17/(14336a⁷) −
/// 31/(18432a⁹)`) at a ≥ 32, where the terms left out are below 10⁻¹⁷,
/// reached from a smaller `a` by `Γ(a + 1) = a·Γ(a)`.
fn ln_gamma_half_ratio(a: f64) -> f64 {
    let (mut a, mut shift) = (a, 0.0);
    while a < 32.0 {
        shift += (0.5 / a).ln_1p();
        a += 1.0;
    }
    let v = 1.0 / a;
    let v2 = v * v;
    let series = v
        * (-1.0 / 8.0
            + v2 * (1.0 / 192.0
                + v2 * (-1.0 / 640.0 + v2 * (17.0 / 14336.0 - v2 * 31.0 / 18432.0))));
    0.5 * a.ln() + series - shift
}

/// The continued fraction of the regularised incomplete beta function
/// (DLMF 8.17.22): `I_x(a, b) = x^a (1 − x)^b / (a·B(a, b)) / K`, with
/// `K = 1 + d1/(1 + d2/(1 + …))`, `d(2m+1) = −(a + m)(a + b + m)x /
/// ((a + 2m)(a + 2m + 1))`, `d(2m) = m(b − m)x / ((a + 2m − 1)(a + 2m))`;
/// returns K, evaluated by the modified Lentz method. It converges fast
/// for `x < (a + 1)/(a + b + 2)`.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (mut k, mut cc, mut dd) = (1.0f64, 1.0f64, 0.0f64);
    for j in 1..=100_000u32 {
        let m = f64::from(j / 2);
        let d = if j % 2 == 1 {
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
        } else {
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        };
        dd = 1.0 / guard(1.0 + d * dd);
        cc = guard(1.0 + d / cc);
        let delta = cc * dd;
        k *= delta;
        if (delta - 1.0).abs() <= f64::EPSILON / 2.0 {
            break;
        }
    }
    k
}

/// The regularised incomplete beta function `I_x(a, b)` (a, b > 0), by its
/// continued fraction ([`beta_fraction`]) on the side where it converges
/// fast (`1 − I_{1−x}(b, a)` on the other), to as many terms as it takes:
/// statrs' `beta_reg` stops at 140, which leaves a binomial tail at a
/// million trials off by 10⁻² (Clopper–Pearson's interval of a million
/// samples then misses by a quarter of its width).
pub(crate) fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x.is_nan() || a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    use statrs::function::gamma::ln_gamma;
    let ln_beta = ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b);
    let ln_front = a * x.ln() + b * (-x).ln_1p() - ln_beta;
    if x < (a + 1.0) / (a + b + 2.0) {
        (ln_front.exp() / a / beta_fraction(a, b, x)).clamp(0.0, 1.0)
    } else {
        (1.0 - ln_front.exp() / b / beta_fraction(b, a, 1.0 - x)).clamp(0.0, 1.0)
    }
}

/// `(ln P(T > t), ln P(0 < T < t), ln f(t))` for t > 0, f the density;
/// `r` is `ln Γ(a + ½) − ln Γ(a)`, `a = df/2`. The smaller of the two
/// probabilities is computed directly (A&S 26.7.1: the upper tail is
/// `½·I_x(a, ½)`, `x = df/(df + t²)`, and the central part
/// `½·I_{1−x}(½, a)`), the other as ½ minus it.
fn t_tails(t: f64, df: f64, a: f64, r: f64) -> (f64, f64, f64) {
    use std::f64::consts::{LN_2, PI};
    // t²/df and ln(1 + t²/df), by logarithms where t² overflows.
    let ratio = t * t / df;
    let (ln_ratio, ln_1p_ratio) = if ratio.is_finite() {
        (ratio.ln(), ratio.ln_1p())
    } else {
        let l = 2.0 * t.ln() - df.ln();
        (l, l + (-l).exp().ln_1p())
    };
    let ln_x = -ln_1p_ratio; // ln(df / (df + t²))
    let ln_y = ln_x + ln_ratio; // ln(t² / (df + t²))
    let x = ln_x.exp();
    let y = 1.0 / (1.0 + 1.0 / ratio);
    let ln_beta = 0.5 * PI.ln() - r; // ln B(a, ½)
    let ln_f = r - 0.5 * (df * PI).ln() - (a + 0.5) * ln_1p_ratio;
    // ln(½ − e^l), for the complement of a probability whose log is l.
    let rest = |l: f64| (-2.0 * l.exp()).ln_1p() - LN_2;
    if x < (a + 1.0) / (a + 2.5) {
        let ln_i = a * ln_x + 0.5 * ln_y - a.ln() - ln_beta - beta_fraction(a, 0.5, x).ln();
        let ln_q = ln_i - LN_2;
        (ln_q, rest(ln_q), ln_f)
    } else {
        let ln_i = 0.5 * ln_y + a * ln_x + LN_2 - ln_beta - beta_fraction(0.5, a, y).ln();
        let ln_c = ln_i - LN_2;
        (rest(ln_c), ln_c, ln_f)
    }
}

/// Newton's method for the t with upper tail `q` (central probability
/// `c`), on the logarithm of whichever of the two is the smaller at the
/// root, with multiplicative steps (`t·e^−δ`, δ the Newton step in ln t)
/// inside a bracket of the root that every evaluation narrows (a step
/// leaving it bisects it instead).
fn t_by_newton(q: f64, c: f64, df: f64) -> f64 {
    use std::f64::consts::PI;
    let a = df / 2.0;
    let r = ln_gamma_half_ratio(a);
    // Below t_s the central probability is the one computed directly.
    let t_s = (1.5 * df / (a + 1.0)).sqrt();
    let tail = q.ln() < t_tails(t_s, df, a, r).0;
    // g(t): increasing in t, zero at the root; and t·g'(t).
    let g = |t: f64| {
        let (ln_q, ln_c, ln_f) = t_tails(t, df, a, r);
        if tail {
            (q.ln() - ln_q, (t.ln() + ln_f - ln_q).exp())
        } else {
            (ln_c - c.ln(), (t.ln() + ln_f - ln_c).exp())
        }
    };
    // Start: the normal quantile with the first correction of A&S 26.7.5,
    // or in the far tail `P(T > t) ≈ (df/t²)^a / (2a·B(a, ½))`, the larger;
    // near the centre, `c / f(0)`.
    let mut t = if tail {
        let x = -z_quantile(q);
        let normal = x * (1.0 + (x * x + 1.0) / (4.0 * df));
        let far = (0.5 * df.ln() - ((2.0 * q).ln() + a.ln() + 0.5 * PI.ln() - r) / df).exp();
        match (
            normal.is_finite() && normal > 0.0,
            far.is_finite() && far > 0.0,
        ) {
            (true, true) => normal.max(far),
            (true, false) => normal,
            (false, true) => far,
            (false, false) => 1.0,
        }
    } else {
        c / (r - 0.5 * (df * PI).ln()).exp()
    };
    let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
    let mut best = (f64::INFINITY, t);
    for _ in 0..1000 {
        let (value, slope) = g(t);
        if value.abs() < best.0 {
            best = (value.abs(), t);
        }
        if value == 0.0 {
            return t;
        }
        if value < 0.0 {
            lo = lo.max(t);
        } else {
            hi = hi.min(t);
        }
        let step = (value / slope).clamp(-3.0, 3.0);
        let newton = t * (-step).exp();
        if step.abs() <= 4.0 * f64::EPSILON {
            return newton;
        }
        let next = if newton > lo && newton < hi {
            newton
        } else {
            match (lo > 0.0, hi.is_finite()) {
                (true, true) => (lo * hi).sqrt(),
                (true, false) => lo * 20.0,
                (false, true) => hi / 20.0,
                (false, false) => t,
            }
        };
        let next = match next {
            n if n.is_finite() => n,
            // The root is beyond the largest float.
            _ if t == f64::MAX => return f64::INFINITY,
            _ => f64::MAX,
        };
        if next == t {
            return best.1;
        }
        t = next;
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_incomplete_beta_matches_scipy_at_any_size() {
        // scipy 1.17.1 `special.betainc(a, b, x)`.
        for (a, b, x, want) in [
            (2.0, 3.0, 0.4, 0.5247999999999999),
            (0.5, 10.0, 0.03, 0.5591958464042414),
            (30.0, 1.0, 0.9, 0.04239115827521624),
            (600000.0, 400001.0, 0.5995, 0.15400870123028054),
            (600001.0, 400000.0, 0.6006, 0.8895233520245679),
        ] {
            let got = incomplete_beta(a, b, x);
            assert!(
                (got - want).abs() < 1e-9,
                "I({x}; {a}, {b}) = {got}, want {want}"
            );
        }
        assert_eq!(incomplete_beta(2.0, 3.0, 0.0), 0.0);
        assert_eq!(incomplete_beta(2.0, 3.0, 1.0), 1.0);
        assert!(incomplete_beta(0.0, 3.0, 0.5).is_nan());
    }

    /// Relative error of `got` against `want`.
    fn rel(got: f64, want: f64) -> f64 {
        ((got - want) / want).abs()
    }

    #[test]
    fn t_quantiles_are_accurate_at_large_df() {
        // References: the t with the upper tail 1 − p (p the double given),
        // solved to 50 digits in the regularised incomplete beta function
        // (A&S 26.7.1, mpmath 1.3 `betainc` and `findroot`), the same to 22
        // digits as the A&S 26.7.5 series in 1/df through g5 at 50 digits;
        // written rounded to the nearest double. statrs' inverse_cdf was off
        // by 3.3e-7 (30,000, 0.975), 6.1e-5 (10⁶, 0.975) and 2.9e-4 (10⁶, 0.9).
        for (p, df, want) in [
            (0.975, 30_000.0, 1.9600430633839347),
            (0.995, 30_000.0, 2.5759931982857065),
            (0.9995, 30_000.0, 3.290851084886027),
            (0.975, 1e6, 1.9599663568141066),
            (0.995, 1e6, 2.575834220105334),
            (0.9995, 1e6, 3.2905364612487222),
            (0.9, 1e6, 1.2815524121299386),
            (0.6, 5000.0, 0.2533605839692316),
        ] {
            let got = t_quantile(p, df);
            assert!(rel(got, want) <= 1e-13, "t({p}, {df}) = {got}, want {want}");
            // Lower quantiles mirror upper ones (1 − p is exact here).
            assert_eq!(t_quantile(1.0 - p, df), -got, "t({}, {df})", 1.0 - p);
        }
        // Far beyond any sample: the normal quantile, z(0.975) = 1.959963984540054.
        assert!(rel(t_quantile(0.975, 1e18), 1.959_963_984_540_054) <= 1e-15);
        assert_eq!(t_quantile(0.975, f64::INFINITY), z_quantile(0.975));
    }

    #[test]
    fn t_quantiles_are_accurate_at_small_df_and_far_tails() {
        // References as above (50-digit roots of the incomplete beta).
        for (p, df, want) in [
            // df 1: cot(π·q); 2: (1 − 2q)/√(2q(1 − q)).
            (0.975, 1.0, 12.706204736174694),
            (1e-9, 1.0, -318309886.1837906),
            (0.975, 2.0, 4.302652729749462),
            (0.975, 4.0, 2.7764451051977934),
            (0.975, 30.0, 2.0422724563012378),
            // statrs: off by 2.8e-9.
            (0.8, 971.0, 0.841991566219958),
            (2.5e-5, 200.0, -4.145815565759142),
            (1e-30, 3.0, -10331108360.44653),
            // p = 1 − 2⁻⁵³, the largest double below 1.
            (1.0 - f64::EPSILON / 2.0, 1000.0, 8.351968337868854),
        ] {
            let got = t_quantile(p, df);
            assert!(rel(got, want) <= 1e-13, "t({p}, {df}) = {got}, want {want}");
        }
        // Where both apply, the series and Newton's method agree.
        for (df, tails) in [
            (300.0, &[0.3, 0.025][..]),
            (2000.0, &[0.3, 0.025, 0.0005, 1e-6]),
        ] {
            for &q in tails {
                let series = t_by_expansion(q, df).expect("the series applies");
                let newton = t_by_newton(q, 0.5 - q, df);
                assert!(
                    rel(newton, series) <= 1e-13,
                    "{df} {q}: {newton} vs {series}"
                );
            }
        }
        // The ends.
        assert_eq!(t_quantile(0.5, 7.0), 0.0);
        assert_eq!(t_quantile(0.0, 7.0), f64::NEG_INFINITY);
        assert_eq!(t_quantile(1.0, 7.0), f64::INFINITY);
        assert_eq!(t_quantile(0.975, 0.0), f64::INFINITY);
        assert_eq!(t_quantile(0.975, f64::NAN), f64::INFINITY);
        assert!(t_quantile(f64::NAN, 7.0).is_nan());
        // A quantile beyond the largest float: df 0.5, 1e-300 (t ≈ 10⁶⁰⁰).
        assert_eq!(t_quantile(1e-300, 0.5), f64::NEG_INFINITY);
    }
}
