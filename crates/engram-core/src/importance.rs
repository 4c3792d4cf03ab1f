//! Importance is 0–1 inside engram. Seed B's users speak 1–10, so an integer above 1 is read
//! on that scale: `7` means 0.7, while `0.7` and `1` mean what they say.

use crate::InputError;

/// Reads an importance given as text (CLI) on either scale.
pub fn parse_importance(raw: &str) -> Result<f64, InputError> {
    let t = raw.trim();
    let is_integer = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let v: f64 = t.parse().map_err(|_| {
        InputError::new(
            "importance",
            format!("{raw:?} is not a number; give 0–1, or an integer 1–10"),
        )
    })?;
    from_number(v, is_integer)
}

/// Reads an importance given as a JSON number; `is_integer` says whether it was written without a fraction.
pub fn from_number(v: f64, is_integer: bool) -> Result<f64, InputError> {
    if !v.is_finite() {
        return Err(InputError::new("importance", "must be a finite number"));
    }
    if is_integer && v > 1.0 {
        if v <= 10.0 {
            return Ok(v / 10.0);
        }
        return Err(InputError::new(
            "importance",
            format!("{v} is out of range: give 0–1, or an integer 1–10"),
        ));
    }
    if !(0.0..=1.0).contains(&v) {
        return Err(InputError::new(
            "importance",
            format!("{v} is out of range: give 0–1, or an integer 1–10"),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_scales() {
        assert_eq!(parse_importance("0.7").unwrap(), 0.7);
        assert_eq!(parse_importance("7").unwrap(), 0.7);
        assert_eq!(parse_importance("10").unwrap(), 1.0);
        assert_eq!(parse_importance("1").unwrap(), 1.0);
        assert_eq!(parse_importance("0").unwrap(), 0.0);
        assert!(parse_importance("11").is_err());
        assert!(parse_importance("1.5").is_err());
        assert!(parse_importance("-0.1").is_err());
        assert!(parse_importance("NaN").is_err());
        assert!(parse_importance("high").is_err());
        assert_eq!(parse_importance("x").unwrap_err().field, "importance");
    }
}
