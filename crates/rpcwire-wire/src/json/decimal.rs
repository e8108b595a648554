//! Integers as decimal digits, written on the stack without `fmt`: for error codes in JSON
//! and for Content-Length headers.

/// The most digits a `u64` has (`u64::MAX` is 18446744073709551615).
pub(crate) const MAX_DIGITS: usize = 20;

/// The decimal digits of `n`, right-aligned in `buf`: the slice of `buf` that holds them.
#[inline]
pub(crate) fn digits(n: u64, buf: &mut [u8; MAX_DIGITS]) -> &[u8] {
    let mut at = MAX_DIGITS;
    let mut rest = n;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    &buf[at..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_to_string() {
        for n in [
            0,
            1,
            9,
            10,
            99,
            100,
            12345,
            u64::from(u32::MAX),
            u64::MAX / 10,
            u64::MAX,
        ] {
            let mut buf = [0; MAX_DIGITS];
            assert_eq!(digits(n, &mut buf), n.to_string().as_bytes(), "{n}");
        }
    }
}
