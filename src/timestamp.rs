//! Times other programs wrote: RFC 3339 timestamps (run manifests, transcripts) and
//! the civil-calendar arithmetic behind them, in one place.

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Nanoseconds since the Unix epoch of an RFC 3339 time
/// (`2025-06-01T10:00:00.123Z`, `2025-06-01T12:00:00+02:00`); `None` when it is not one.
pub fn rfc3339_nanos(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().all(u8::is_ascii_digit).then(|| {
            digits
                .iter()
                .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'))
        })
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    let mut nanos: i128 = 0;
    if sep(at, b".") {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        let frac = &s[start..at];
        if frac.is_empty() {
            return None;
        }
        let padded: String = frac.chars().chain(std::iter::repeat('0')).take(9).collect();
        nanos = padded.parse().ok()?;
    }
    let offset_minutes = match b.get(at) {
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == b.len() && sep(at + 3, b":") => {
            let m = num(at + 1, 2)? * 60 + num(at + 4, 2)?;
            if *sign == b'-' { -m } else { m }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month as u32, day as u32);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(i128::from(secs) * 1_000_000_000 + nanos)
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2026-11-03T09:00:00Z`,
/// `2026-11-03T10:00:00.5+01:00`); None when it does not parse.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    rfc3339_nanos(text)
        .map(|nanos| i64::try_from(nanos.div_euclid(1_000_000_000)).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_compare_across_offsets_and_precisions() {
        assert_eq!(rfc3339_nanos("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            rfc3339_nanos("1970-01-02T00:00:00.5Z"),
            Some(86_400_500_000_000)
        );
        assert_eq!(
            rfc3339_nanos("2025-06-01T12:00:00+02:00"),
            rfc3339_nanos("2025-06-01T10:00:00.000Z")
        );
        assert!(rfc3339_nanos("2025-06-01T10:00:00.001Z") > rfc3339_nanos("2025-06-01T10:00:00Z"));
        assert_eq!(
            rfc3339_nanos("2024-03-01T00:00:00Z"),
            Some(1_709_251_200 * 1_000_000_000)
        );
        for bad in [
            "",
            "2025-06-01",
            "2025-13-01T00:00:00Z",
            "2025-06-01T10:00:00",
            "2025-06-01T10:00:00.Z",
            "ünïcödé-ish string",
        ] {
            assert_eq!(rfc3339_nanos(bad), None, "{bad}");
        }
    }
}
