//! The 128-bit linear congruential generator of gensort, with jump-ahead.
//!
//! `X_0 = 0`, `X_{k+1} = A·X_k + C (mod 2^128)`. Record `n` uses `X_{n+1} .. X_{n+10}`.
//! Jump-ahead uses the affine maps `f^(2^i)(x) = A_i·x + C_i`, computed here at compile time by
//! repeated squaring: `A_{i+1} = A_i²`, `C_{i+1} = A_i·C_i + C_i`.

/// The multiplier `A` (from L'Ecuyer's table of LCG multipliers).
pub const MULTIPLIER: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;
/// The increment `C` (its bytes read "JimGrayRIP", spaces and 0x01).
pub const INCREMENT: u128 = 0x4a69_6d47_7261_7952_4950_2020_2020_2001;

/// `JUMP[i] = (A_i, C_i)` with `f^(2^i)(x) = A_i·x + C_i (mod 2^128)`.
const JUMP: [(u128, u128); 128] = build_jump_table();

const fn build_jump_table() -> [(u128, u128); 128] {
    let mut table = [(0u128, 0u128); 128];
    let mut a = MULTIPLIER;
    let mut c = INCREMENT;
    let mut i = 0;
    while i < 128 {
        table[i] = (a, c);
        // f^(2^(i+1)) = f^(2^i) ∘ f^(2^i): x -> a(ax + c) + c.
        c = a.wrapping_mul(c).wrapping_add(c);
        a = a.wrapping_mul(a);
        i += 1;
    }
    table
}

/// Returns `X_n`, the generator state after `n` steps from the seed 0, for any `n`.
///
/// ```
/// use oxsort_gensort::rng::state;
/// assert_eq!(state(1), 0x4a696d47726179524950202020202001);
/// assert_eq!(state(123_456_790), 0xe972efd66ef4fd6127cc6061fe148572);
/// ```
pub const fn state(n: u128) -> u128 {
    let mut x = 0u128;
    let mut i = 0;
    while i < 128 {
        if (n >> i) & 1 == 1 {
            x = JUMP[i].0.wrapping_mul(x).wrapping_add(JUMP[i].1);
        }
        i += 1;
    }
    x
}

/// One step of the generator: returns `A·x + C (mod 2^128)`.
#[inline(always)]
pub const fn step(x: u128) -> u128 {
    MULTIPLIER.wrapping_mul(x).wrapping_add(INCREMENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_states() {
        assert_eq!(state(0), 0);
        assert_eq!(state(1), 0x4a696d47726179524950202020202001);
        assert_eq!(state(2), 0x95e0e48262b3edfe04479485c755b646);
        assert_eq!(state(3), 0x45979353dbed5329365cf795f12984df);
        assert_eq!(state(10), 0x84c0992f3b94fd25acb0a8f0800251fe);
        assert_eq!(state(123_456_790), 0xe972efd66ef4fd6127cc6061fe148572);
        assert_eq!(state(1 << 64), 0xf0b1944bfd71a97f0000000000000000);
        assert_eq!(state((1 << 64) + 1), 0x7cc5d0c2ed18328d4950202020202001);
        assert_eq!(JUMP[1].0, 0x17bce35bdf69743c529ed9eb20e0ae99);
        assert_eq!(JUMP[1].1, state(2));
    }

    #[test]
    fn jump_matches_stepping() {
        let mut x = state(0);
        for n in 1..2000u128 {
            x = step(x);
            assert_eq!(x, state(n));
        }
        let mut x = state(u128::MAX - 5);
        for k in 1..20u128 {
            x = step(x);
            assert_eq!(x, state((u128::MAX - 5).wrapping_add(k)));
        }
    }
}
