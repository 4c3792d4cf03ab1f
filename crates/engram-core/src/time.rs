//! RFC 3339 for Unix milliseconds, written here so the core needs no date crate.
//! Civil-date conversion uses the proleptic Gregorian calendar (days-from-civil arithmetic).

use crate::Millis;

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `2026-11-29T23:38:32.123Z`.
pub fn format(ms: Millis) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, frac) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{frac:03}Z")
}

/// Parses `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by `Z` or `±HH:MM`
/// (a space may stand for `T`; a missing zone means UTC).
pub fn parse(raw: &str) -> Option<Millis> {
    let s = raw.trim();
    let num = |t: &str| -> Option<i64> {
        (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    let (date, rest) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let mut dp = date.split('-');
    let (y, mo, d) = (num(dp.next()?)?, num(dp.next()?)?, num(dp.next()?)?);
    if dp.next().is_some()
        || !(0..=9999).contains(&y)
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    if rest.is_empty() {
        return Some(ms);
    }
    let (clock, offset_ms) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (c, z) = rest.split_at(i);
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let mut zp = z[1..].split(':');
        let zh = num(zp.next()?)?;
        let zm = zp.next().map(num).unwrap_or(Some(0))?;
        (c, sign * (zh * 3_600_000 + zm * 60_000))
    } else {
        (rest, 0)
    };
    let mut cp = clock.split(':');
    let h = num(cp.next()?)?;
    let mi = num(cp.next()?)?;
    let (sec, frac) = match cp.next() {
        Some(sf) => match sf.split_once('.') {
            Some((s, f)) => {
                let f3: String = f.chars().chain("000".chars()).take(3).collect();
                (num(s)?, num(&f3)?)
            }
            None => (num(sf)?, 0),
        },
        None => (0, 0),
    };
    if cp.next().is_some() || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    ms += h * 3_600_000 + mi * 60_000 + sec * 1000 + frac;
    Some(ms - offset_ms)
}

/// Serde adapter: `Millis` as RFC 3339 text.
pub mod rfc3339 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ms: &crate::Millis, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format(*ms))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<crate::Millis, D::Error> {
        let raw = String::deserialize(d)?;
        super::parse(&raw)
            .ok_or_else(|| serde::de::Error::custom(format!("not an RFC 3339 time: {raw:?}")))
    }
}

/// Serde adapter: `Option<Millis>` as RFC 3339 text or null.
pub mod rfc3339_opt {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ms: &Option<crate::Millis>, s: S) -> Result<S::Ok, S::Error> {
        match ms {
            Some(v) => s.serialize_str(&super::format(*v)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<crate::Millis>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(raw) => super::parse(&raw)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom(format!("not an RFC 3339 time: {raw:?}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(format(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format(1_796_082_912_123), "2026-11-30T23:55:12.123Z");
        assert_eq!(format(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn round_trips_and_offsets() {
        for ms in [0, 1, 951_782_400_000, 1_796_082_912_123, 4_102_444_800_000] {
            assert_eq!(parse(&format(ms)), Some(ms));
        }
        assert_eq!(parse("2000-02-29"), Some(951_782_400_000));
        assert_eq!(parse("2000-02-29T09:00:00+09:00"), Some(951_782_400_000));
        assert_eq!(parse("2000-02-28T19:00:00-05:00"), Some(951_782_400_000));
        assert_eq!(parse("2000-02-29 00:00"), Some(951_782_400_000));
        assert_eq!(parse("2000-13-01"), None);
        assert_eq!(parse("yesterday"), None);
        assert_eq!(
            parse("99999999999999999-01-01"),
            None,
            "no overflow on absurd years"
        );
        assert_eq!(parse(""), None);
    }
}
