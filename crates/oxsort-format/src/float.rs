//! Order-preserving images of IEEE floats: the bytes `FL`/`LF` fields, `INCLUDE` constants
//! and GNU `-g` keys compare as.
//!
//! ```text
//!  negative          all bits flipped      -inf < -1 < -0.5
//!  zero (-0 and +0)  sign bit set          0
//!  positive          sign bit set          0.5 < 1 < +inf
//!  NaN (any)         all ones              after +inf
//! ```
//!
//! Kept apart, importing nothing, so that the normalizer, the filters and GNU's key kinds
//! (which the key model names) can each use it without importing one another.

/// The order-preserving image of a binary64's bits: negative values flipped entirely,
/// non-negative ones with the sign bit set; -0 maps like +0 and every NaN to all ones (after
/// +inf).
pub(crate) fn float64_key(bits: u64) -> u64 {
    let x = f64::from_bits(bits);
    if x.is_nan() {
        return u64::MAX;
    }
    let bits = if x == 0.0 { 0 } else { bits };
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// [`float64_key`] for binary32.
pub(crate) fn float32_key(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        return u32::MAX;
    }
    let bits = if x == 0.0 { 0 } else { bits };
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}
