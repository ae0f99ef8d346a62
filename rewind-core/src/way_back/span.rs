//! Spans of time as people read and write them: `3 h 12 min from now`, `90m`, `1h30m`.

use chrono::Duration;

/// `3 h 12 min from now`, `12 min ago`.
pub fn from_now(d: Duration) -> String {
    if d >= Duration::zero() {
        format!("{} from now", span(d))
    } else {
        format!("{} ago", span(-d))
    }
}

/// A span of time in the largest two units that say it: `2 d 4 h`, `3 h 12 min`, `45 min`, `20 s`.
pub fn span(d: Duration) -> String {
    let s = d.num_seconds().max(0);
    let (days, hours, minutes) = (s / 86_400, s / 3600 % 24, s / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

/// Reads a span as people write it: `90m`, `2h`, `1d`, `1h30m`, `45s`, or a bare number of
/// minutes.
pub fn parse_span(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if let Ok(minutes) = t.parse::<i64>() {
        return Ok(Duration::minutes(minutes.max(0)));
    }
    let mut total = Duration::zero();
    let mut number = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: i64 = number
            .parse()
            .map_err(|_| format!("{t:?} is not a span; write it like 30m, 2h, 1d or 1h30m"))?;
        number.clear();
        total += match c {
            's' => Duration::seconds(n),
            'm' => Duration::minutes(n),
            'h' => Duration::hours(n),
            'd' => Duration::days(n),
            'w' => Duration::weeks(n),
            _ => {
                return Err(format!(
                    "{t:?}: {c:?} is not a unit; use s, m, h, d or w (like 30m, 2h, 1d)"
                ));
            }
        };
    }
    if !number.is_empty() || t.is_empty() {
        return Err(format!(
            "{t:?} is not a span; write it like 30m, 2h, 1d or 1h30m"
        ));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_people_write_them() {
        assert_eq!(parse_span("2h"), Ok(Duration::hours(2)));
        assert_eq!(parse_span("1h30m"), Ok(Duration::minutes(90)));
        assert_eq!(parse_span("1d"), Ok(Duration::days(1)));
        assert_eq!(parse_span("45"), Ok(Duration::minutes(45)));
        assert!(parse_span("2x").unwrap_err().contains("not a unit"));
        assert!(parse_span("h").unwrap_err().contains("not a span"));
        assert!(parse_span("").is_err());
    }

    #[test]
    fn spans_are_said_in_their_two_largest_units() {
        assert_eq!(span(Duration::seconds(20)), "20 s");
        assert_eq!(span(Duration::minutes(45)), "45 min");
        assert_eq!(span(Duration::minutes(192)), "3 h 12 min");
        assert_eq!(span(Duration::hours(52)), "2 d 4 h");
    }
}
