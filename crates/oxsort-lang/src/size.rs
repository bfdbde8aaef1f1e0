//! Sizes as users write them: `4096`, `64K`, `512M`, `1.5G`, `2T`.

/// Why a size did not read. The texts name the size, not where it was given: each front end
/// adds its own option name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SizeError {
    /// No number where the size starts.
    #[error("'{text}' is not a size (like 512M or 2G)")]
    NotASize {
        /// The text given.
        text: String,
    },
    /// A unit other than B, K, M, G or T.
    #[error("'{text}': unknown size unit '{unit}' (use K, M, G or T)")]
    UnknownUnit {
        /// The text given.
        text: String,
        /// The unit, lowercased.
        unit: String,
    },
    /// More bytes than a `u64` holds.
    #[error("'{text}' is out of range")]
    OutOfRange {
        /// The text given.
        text: String,
    },
}

/// Bytes from `4096`, `64K`, `512M`, `1G`, `1.5G`, `2T` (binary units; `KB`/`KiB`/`k` alike).
///
/// ```
/// assert_eq!(oxsort_lang::parse_bytes("1.5K"), Ok(1536));
/// assert!(oxsort_lang::parse_bytes("5X").is_err());
/// ```
pub fn parse_bytes(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| SizeError::NotASize { text: s.to_string() })?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        u => return Err(SizeError::UnknownUnit { text: s.to_string(), unit: u.to_string() }),
    };
    let bytes = v * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(SizeError::OutOfRange { text: s.to_string() });
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("13500M"), Ok(13500 << 20));
        assert_eq!(parse_bytes("90g"), Ok(90 << 30));
        assert_eq!(parse_bytes("1.5K"), Ok(1536));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
    }
}
