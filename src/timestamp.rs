//! Times other programs wrote: RFC 3339 timestamps (run manifests, transcripts) and
//! the calendar weeks they fall in, read with a calendar library in one place.

/// Nanoseconds since the Unix epoch of an RFC 3339 time
/// (`2025-06-01T10:00:00.123Z`, `2025-06-01T12:00:00+02:00`); `None` when it is not
/// one, or names a day the calendar does not have (2025-02-31).
pub fn rfc3339_nanos(s: &str) -> Option<i128> {
    // jiff also reads ISO 8601 forms RFC 3339 does not have (`+0100`, a bare `+01`):
    // the offset must be `Z` or `±HH:MM`.
    let offset = s.rsplit_once(['Z', 'z', '+', '-']).map(|(_, tail)| tail)?;
    let zulu = s.ends_with(['Z', 'z']);
    let colon_offset = offset.len() == 5 && offset.as_bytes()[2] == b':';
    if !(zulu || colon_offset) || s.len() < 20 {
        return None;
    }
    s.parse::<jiff::Timestamp>().ok().map(|t| t.as_nanosecond())
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2026-11-03T09:00:00Z`,
/// `2026-11-03T10:00:00.5+01:00`); None when it does not parse.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    rfc3339_nanos(text)
        .map(|nanos| i64::try_from(nanos.div_euclid(1_000_000_000)).unwrap_or(i64::MAX))
}

/// The ISO 8601 week-numbering year and week of a time in seconds since the epoch, in
/// UTC.
pub fn iso_week(secs: i64) -> Option<(i16, i8)> {
    let t = jiff::Timestamp::from_second(secs).ok()?;
    let week = jiff::tz::Offset::UTC.to_datetime(t).date().iso_week_date();
    Some((week.year(), week.week()))
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
            "2025-02-31T00:00:00Z",
            "2025-06-01T10:00:00+0100",
            "2025-06-01T10:00:00+01",
        ] {
            assert_eq!(rfc3339_nanos(bad), None, "{bad}");
        }
    }
}
