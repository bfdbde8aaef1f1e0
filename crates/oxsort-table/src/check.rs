//! The table sort's own check, outside the engine: the rows written are the rows read (a count
//! and an order-independent sum of each encoded row's CRC32), in strictly increasing order.

/// The count and order-independent checksum of a set of encoded rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowSum {
    /// Rows counted.
    pub rows: u64,
    /// The wrapping sum of each row's CRC32.
    pub sum: u64,
}

impl RowSum {
    /// Counts one encoded row ([`RowSum::add_all`] counts many).
    #[cfg(test)]
    pub(crate) fn add(&mut self, row: &[u8]) {
        self.rows += 1;
        self.sum = self.sum.wrapping_add(u64::from(crc32fast::hash(row)));
    }

    /// Counts `rows` (the CRC32s summed on the CPU's carry-less multiply where it has one:
    /// rows are short, and a call per row was most of the cost).
    pub(crate) fn add_all(&mut self, rows: &[&[u8]]) {
        self.rows += rows.len() as u64;
        // The low 64 bits of the sum of the CRCs: what `add` of each gives.
        self.sum = self.sum.wrapping_add(oxsort_kernels::crc32_sum(rows.iter().copied()) as u64);
    }

    /// Adds another set's count and sum.
    pub(crate) fn merge(&mut self, other: RowSum) {
        self.rows += other.rows;
        self.sum = self.sum.wrapping_add(other.sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_do_not_depend_on_order_but_on_every_byte() {
        let (mut a, mut b) = (RowSum::default(), RowSum::default());
        for r in [&b"x"[..], b"yy", b"zzz"] {
            a.add(r);
        }
        for r in [&b"zzz"[..], b"x", b"yy"] {
            b.add(r);
        }
        assert_eq!(a, b);
        let mut c = RowSum::default();
        for r in [&b"x"[..], b"yz", b"zzz"] {
            c.add(r);
        }
        assert_ne!(a, c);
        let mut d = RowSum::default();
        d.add_all(&[&b"x"[..], b"yy", b"zzz"]);
        assert_eq!(d, a);
    }
}
