//! Walking one JSON value without recording it: numbers, literals, and arrays and objects
//! with everything inside them (validated, with a depth limit and an explicit stack, so deep
//! input cannot overflow the call stack).
//!
//! Free functions over `(input, position)` returning the position after the value: the walk
//! keeps its position in a register instead of writing it back to a `Reader` at each step.

use super::error::{SyntaxError, SyntaxErrorKind};
use super::kernels::{with_blocks, Blocks, Span, Window, WithBlocks};
use super::number::number_end;
use super::string::{string_end, string_end_in};

/// One of the three literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Literal {
    True,
    False,
    Null,
}

/// `true` for the JSON whitespace bytes: space, tab, line feed, carriage return.
#[inline(always)]
fn is_ws(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first position at or after `pos` that is not whitespace.
#[inline(always)]
pub(crate) fn skip_ws_at(buf: &[u8], mut pos: usize) -> usize {
    // Compact JSON has no whitespace: one compare decides most calls.
    match buf.get(pos) {
        Some(&byte) if byte > b' ' => return pos,
        None => return pos,
        _ => {}
    }
    while let Some(&byte) = buf.get(pos) {
        if !is_ws(byte) {
            break;
        }
        pos += 1;
    }
    pos
}

/// [`skip_ws_at`] for where runs of whitespace are long (indentation): spaces eight bytes
/// at a time, the other whitespace bytes one at a time.
#[inline(never)]
fn skip_ws_run(buf: &[u8], mut pos: usize) -> usize {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    while let Some(eight) = buf.get(pos..).and_then(<[u8]>::first_chunk::<8>) {
        // The bytes that are not spaces, as non-zero bytes of the word.
        let others = u64::from_le_bytes(*eight) ^ SPACES;
        if others == 0 {
            pos += 8;
            continue;
        }
        pos += (others.trailing_zeros() / 8) as usize;
        if !is_ws(buf[pos]) {
            return pos;
        }
        pos += 1;
    }
    skip_ws_at(buf, pos)
}

/// "Unexpected byte" (or "unexpected end") at `pos`.
#[cold]
pub(crate) fn unexpected_at(buf: &[u8], pos: usize, expected: &'static str) -> SyntaxError {
    match buf.get(pos) {
        None => SyntaxError::new(SyntaxErrorKind::UnexpectedEnd, pos),
        Some(&byte) => SyntaxError::new(SyntaxErrorKind::UnexpectedByte { byte, expected }, pos),
    }
}

/// `true`, `false` or `null` at `pos`, and the position after it.
#[inline(always)]
pub(crate) fn literal_end(buf: &[u8], pos: usize) -> Result<(Literal, usize), SyntaxError> {
    // The usual case: one compare of four bytes (and one more byte for `false`).
    if let Some(four) = buf.get(pos..).and_then(<[u8]>::first_chunk::<4>) {
        match four {
            b"null" => return Ok((Literal::Null, pos + 4)),
            b"true" => return Ok((Literal::True, pos + 4)),
            b"fals" if buf.get(pos + 4) == Some(&b'e') => return Ok((Literal::False, pos + 5)),
            _ => {}
        }
    }
    Err(bad_literal(buf, pos))
}

/// What is wrong with the literal at `pos`: cut short by the end of the input, or misspelled.
#[cold]
fn bad_literal(buf: &[u8], pos: usize) -> SyntaxError {
    let rest = buf.get(pos..).unwrap_or_default();
    let text: &[u8] = match rest.first() {
        Some(b't') => b"true",
        Some(b'f') => b"false",
        _ => b"null",
    };
    if text.starts_with(rest) {
        SyntaxError::new(SyntaxErrorKind::UnexpectedEnd, buf.len())
    } else {
        SyntaxError::new(SyntaxErrorKind::InvalidLiteral, pos)
    }
}

/// The position after an object member's key and colon (and the whitespace after it);
/// `pos` is where the key's opening quote must be.
#[inline(always)]
fn key_end<K: Blocks>(buf: &[u8], pos: usize, window: &mut Window<K>) -> Result<usize, SyntaxError> {
    if buf.get(pos) != Some(&b'"') {
        return Err(unexpected_at(buf, pos, "a string key"));
    }
    key_rest(buf, pos + 1, window)
}

/// [`key_end`] from the key's first byte (its opening quote already checked).
#[inline(always)]
fn key_rest<K: Blocks>(buf: &[u8], start: usize, window: &mut Window<K>) -> Result<usize, SyntaxError> {
    let mut escaped = false;
    let mut pos = string_end_in(window, buf, start, &mut escaped)?;
    if buf.get(pos) != Some(&b':') {
        pos = skip_ws_at(buf, pos);
        if buf.get(pos) != Some(&b':') {
            return Err(unexpected_at(buf, pos, "':'"));
        }
    }
    Ok(skip_ws_at(buf, pos + 1))
}

/// The kinds of the open containers (`true` = object, `false` = array), innermost on top.
trait LevelStack {
    /// Opens a level; `false` when this stack has no room for it.
    fn push(&mut self, is_object: bool) -> bool;
    fn pop(&mut self);
    /// `true` when the innermost open container is an object.
    fn top_is_object(&self) -> bool;
}

/// Up to 64 levels as a shift register in one word, which stays in a register: the walk of
/// nearly every value.
struct WordStack {
    bits: u64,
    len: u32,
}

impl LevelStack for WordStack {
    #[inline(always)]
    fn push(&mut self, is_object: bool) -> bool {
        if self.len == u64::BITS {
            return false;
        }
        self.bits = (self.bits << 1) | u64::from(is_object);
        self.len += 1;
        true
    }

    #[inline(always)]
    fn pop(&mut self) {
        self.bits >>= 1;
        self.len -= 1;
    }

    #[inline(always)]
    fn top_is_object(&self) -> bool {
        self.bits & 1 != 0
    }
}

/// Any number of levels, on the heap (only for values nested deeper than 64 levels, with a
/// `max_depth` that allows it).
struct HeapStack(Vec<bool>);

impl LevelStack for HeapStack {
    fn push(&mut self, is_object: bool) -> bool {
        self.0.push(is_object);
        true
    }

    fn pop(&mut self) {
        self.0.pop();
    }

    fn top_is_object(&self) -> bool {
        self.0.last().copied().unwrap_or(false)
    }
}

/// What [`walk`] returns when its stack has no room for a level: not a position (inputs are
/// at most `u32::MAX` bytes).
const NO_ROOM: usize = usize::MAX;

/// The position after the value at `pos` (whitespace before it already skipped), inside
/// `enclosing` containers; arrays and objects are walked without recursion.
#[inline]
pub(crate) fn value_end(
    buf: &[u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
) -> Result<usize, SyntaxError> {
    let end = with_blocks(Walk {
        buf,
        pos,
        enclosing,
        max_depth,
    })?;
    if end != NO_ROOM {
        return Ok(end);
    }
    deep_value_end(buf, pos, enclosing, max_depth)
}

/// The value at `pos` (whitespace before it already skipped) inside `enclosing` containers:
/// its span and the position after it.
#[inline(always)]
pub(crate) fn value_span(
    buf: &[u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
) -> Result<(Span, usize), SyntaxError> {
    let end = value_end(buf, pos, enclosing, max_depth)?;
    Ok((Span::new(pos, end), end))
}

/// [`value_span`] with a fast path for the usual shape of positional params: `[` scalars
/// separated by `,` `]`, no whitespace. Anything else is walked from its start.
#[inline(always)]
pub(crate) fn params_span(
    buf: &[u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
) -> Result<(Span, usize), SyntaxError> {
    if enclosing < max_depth {
        if let Some(end) = flat_array_end(buf, pos) {
            return Ok((Span::new(pos, end), end));
        }
    }
    value_span(buf, pos, enclosing, max_depth)
}

/// The position after a flat array of scalars at `pos` (with or without whitespace between
/// them), or `None` for anything else. Whitespace is looked for only where a compact
/// array's next byte did not match, so that compact arrays pay nothing for it.
#[inline(always)]
fn flat_array_end(buf: &[u8], pos: usize) -> Option<usize> {
    if buf.get(pos) != Some(&b'[') {
        return None;
    }
    let mut pos = pos + 1;
    if buf.get(pos) == Some(&b']') {
        return Some(pos + 1);
    }
    loop {
        pos = match *buf.get(pos)? {
            b'"' => string_end(buf, pos + 1, &mut false).ok()?,
            b'-' | b'0'..=b'9' => number_end(buf, pos).ok()?,
            b't' | b'f' | b'n' => literal_end(buf, pos).ok()?.1,
            // One space after the comma (Python's `", "`) inline, longer runs out of line.
            b' ' if buf.get(pos + 1).is_some_and(|&next| next > b' ') => {
                pos += 1;
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {
                pos = skip_ws_run(buf, pos);
                continue;
            }
            _ => return None,
        };
        loop {
            match *buf.get(pos)? {
                b',' => break,
                b']' => return Some(pos + 1),
                b' ' | b'\t' | b'\n' | b'\r' => pos = skip_ws_run(buf, pos),
                _ => return None,
            }
        }
        pos += 1;
    }
}

/// [`value_end`] for a value nested deeper than 64 levels: the walk again from the start,
/// with its levels on the heap (every byte before the 65th level was valid, so the answer,
/// and any error, is the one a single walk would give).
#[cold]
#[inline(never)]
fn deep_value_end(buf: &[u8], pos: usize, enclosing: usize, max_depth: usize) -> Result<usize, SyntaxError> {
    walk(
        super::kernels::Baseline,
        buf,
        pos,
        enclosing,
        max_depth,
        HeapStack(Vec::new()),
    )
}

/// A value's walk with the levels in a [`WordStack`], for [`with_blocks`] to run with the
/// window masks this CPU computes fastest.
struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
}

impl WithBlocks for Walk<'_> {
    type Output = Result<usize, SyntaxError>;

    #[inline(always)]
    fn run<K: Blocks>(self, blocks: K) -> Self::Output {
        let stack = WordStack { bits: 0, len: 0 };
        walk(blocks, self.buf, self.pos, self.enclosing, self.max_depth, stack)
    }
}

/// The walk itself; [`NO_ROOM`] when `stack` cannot hold a level.
#[inline(always)]
fn walk<K: Blocks, S: LevelStack>(
    blocks: K,
    buf: &[u8],
    mut pos: usize,
    enclosing: usize,
    max_depth: usize,
    mut stack: S,
) -> Result<usize, SyntaxError> {
    let mut depth = enclosing;
    let mut window = Window::new(blocks);
    // The innermost open container's kind, cached out of the stack.
    let mut in_object = false;
    'value: loop {
        // At the start of a value, whitespace skipped.
        match buf.get(pos) {
            Some(b'"') => {
                let mut escaped = false;
                pos = string_end_in(&mut window, buf, pos + 1, &mut escaped)?;
            }
            Some(b'-' | b'0'..=b'9') => pos = number_end(buf, pos)?,
            Some(&open @ (b'{' | b'[')) => {
                depth += 1;
                if depth > max_depth {
                    return Err(SyntaxError::new(
                        SyntaxErrorKind::TooDeep { limit: max_depth },
                        pos,
                    ));
                }
                let is_object = open == b'{';
                pos = skip_ws_at(buf, pos + 1);
                let close = if is_object { b'}' } else { b']' };
                if buf.get(pos) == Some(&close) {
                    pos += 1;
                    depth -= 1;
                } else {
                    if !stack.push(is_object) {
                        return Ok(NO_ROOM);
                    }
                    in_object = is_object;
                    if is_object {
                        pos = key_end(buf, pos, &mut window)?;
                    }
                    continue 'value;
                }
            }
            Some(b't' | b'f' | b'n') => pos = literal_end(buf, pos)?.1,
            _ => return Err(unexpected_at(buf, pos, "a JSON value")),
        }
        // After a value: close containers until one continues with a comma.
        loop {
            if depth == enclosing {
                return Ok(pos);
            }
            // The usual case inside an object: a comma and the next key's quote.
            if in_object && buf.get(pos..).and_then(<[u8]>::first_chunk::<2>) == Some(b",\"") {
                pos = key_rest(buf, pos + 2, &mut window)?;
                continue 'value;
            }
            let mut next = buf.get(pos).copied();
            if matches!(next, Some(b' ' | b'\t' | b'\n' | b'\r')) {
                pos = skip_ws_at(buf, pos);
                next = buf.get(pos).copied();
            }
            match next {
                Some(b',') => {
                    pos = skip_ws_at(buf, pos + 1);
                    if in_object {
                        pos = key_end(buf, pos, &mut window)?;
                    }
                    continue 'value;
                }
                Some(b'}') if in_object => {}
                Some(b']') if !in_object => {}
                _ => {
                    let expected = if in_object { "',' or '}'" } else { "',' or ']'" };
                    return Err(unexpected_at(buf, pos, expected));
                }
            }
            pos += 1;
            stack.pop();
            in_object = stack.top_is_object();
            depth -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `levels` containers, alternating object and array from the outside in, around `1`;
    /// the closer at `wrong` levels from the inside (if any) is the other kind's.
    fn nested(levels: usize, wrong: Option<usize>) -> Vec<u8> {
        let mut text = Vec::new();
        for level in 0..levels {
            text.extend_from_slice(if level % 2 == 0 { b"{\"a\":" } else { b"[" });
        }
        text.push(b'1');
        for (from_inside, level) in (0..levels).rev().enumerate() {
            let object = (level % 2 == 0) != (wrong == Some(from_inside));
            text.push(if object { b'}' } else { b']' });
        }
        text
    }

    /// Both whitespace skips stop where a byte-at-a-time reference does: runs
    /// of every length and mix, ending at every kind of byte and at the input's end.
    #[test]
    fn whitespace_runs_end_where_a_byte_at_a_time_skip_ends() {
        let naive = |buf: &[u8], from: usize| from + buf[from..].iter().take_while(|&&b| is_ws(b)).count();
        let fills: [&[u8]; 4] = [b" ", b"\n  ", b" \t\r\n", b"\r\n    "];
        for fill in fills {
            for len in 0..40 {
                for end in [&b""[..], b"x", b"\"", b"\x0b", b"\x00", b"\xa0", b"\x1f!"] {
                    let mut buf: Vec<u8> = fill.iter().copied().cycle().take(len).collect();
                    buf.extend_from_slice(end);
                    for from in 0..=buf.len() {
                        let expected = naive(&buf, from);
                        assert_eq!(skip_ws_at(&buf, from), expected, "{buf:?} from {from}");
                        assert_eq!(skip_ws_run(&buf, from), expected, "{buf:?} from {from}");
                    }
                }
            }
        }
    }

    /// The walk compiled for the baseline masks and the one [`with_blocks`] picks on this CPU
    /// (AVX2 where it has it) give the same answer, error position included, on every
    /// mutation of values whose strings cross the window's edges.
    #[test]
    fn the_baseline_walk_agrees_with_the_selected_one() {
        let long = "0123456789abcdef".repeat(9);
        let texts = [
            format!(r#"{{"a":"{long}","bb":[1,-2.5e3,true,null,"{long}\n\u00e9é"],"c":{{}}}}"#),
            format!("[\n  \"{}\",\n  {{ \"k\" : \"v\" }} ]", &long[..60]),
            format!(r#"{{"x":"{}","y":"{}","z":false}}"#, &long[..62], &long[..63]),
        ];
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        for text in &texts {
            assert_eq!(value_end(text.as_bytes(), 0, 0, 128), Ok(text.len()), "{text}");
        }
        let agrees = |input: &[u8]| {
            let Some(start) = input.iter().position(|&b| b > b' ') else {
                return true;
            };
            let stack = WordStack { bits: 0, len: 0 };
            let baseline = walk(super::super::kernels::Baseline, input, start, 0, 128, stack);
            baseline == value_end(input, start, 0, 128)
        };
        let checked = crate::json::mutations::check_mutations(&texts, agrees);
        assert!(checked > 5_000, "{checked}");
    }

    #[test]
    fn each_level_kind_is_kept_in_the_word_and_past_it_on_the_heap() {
        for levels in [1, 2, 63, 64, 65, 66, 129, 200] {
            let good = nested(levels, None);
            assert_eq!(
                value_end(&good, 0, 0, usize::MAX).ok(),
                Some(good.len()),
                "{levels}"
            );
            for wrong in [0, levels / 2, levels - 1] {
                let bad = nested(levels, Some(wrong));
                let e = value_end(&bad, 0, 0, usize::MAX).unwrap_err();
                assert!(
                    matches!(e.kind(), SyntaxErrorKind::UnexpectedByte { .. }),
                    "{levels} {wrong}"
                );
                // Found at the wrong closer.
                assert_eq!(e.offset(), good.len() - levels + wrong, "{levels} {wrong}");
            }
        }
    }
}
