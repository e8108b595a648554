//! Iterators over the elements of a validated JSON array and the members of a validated JSON
//! object, as text slices of it (what `Params` hands out without decoding anything).
//!
//! They hold the text as `&str` already, so each element is sliced from it plainly.

use super::cursor::Cursor;
use super::error::SyntaxError;

/// The elements of a validated JSON array, as text.
pub(crate) struct ArrayIter<'a> {
    text: &'a str,
    reader: Cursor<'a>,
    first: bool,
    done: bool,
}

impl<'a> ArrayIter<'a> {
    /// `text` must be a validated JSON array.
    pub(crate) fn new(text: &'a str) -> ArrayIter<'a> {
        let mut reader = Cursor::new(text.as_bytes());
        reader.skip_ws();
        let done = reader.peek() != Some(b'[');
        reader.pos += 1;
        ArrayIter {
            text,
            reader,
            first: true,
            done,
        }
    }

    fn step(&mut self) -> Result<Option<&'a str>, SyntaxError> {
        self.reader.skip_ws();
        match self.reader.peek() {
            Some(b']') | None => return Ok(None),
            Some(b',') if !self.first => {
                self.reader.pos += 1;
                self.reader.skip_ws();
            }
            _ => {}
        }
        self.first = false;
        let start = self.reader.pos;
        self.reader.value(1, usize::MAX)?;
        Ok(self.text.get(start..self.reader.pos))
    }
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let item = self.step().ok().flatten();
        self.done = item.is_none();
        item
    }
}

/// One member of a validated JSON object: `((raw key, key has escapes), value text)`.
pub(crate) type RawMember<'a> = ((&'a str, bool), &'a str);

/// The members of a validated JSON object: key (raw, with escape flag) and value text.
pub(crate) struct MemberIter<'a> {
    text: &'a str,
    reader: Cursor<'a>,
    first: bool,
    done: bool,
}

impl<'a> MemberIter<'a> {
    /// `text` must be a validated JSON object.
    pub(crate) fn new(text: &'a str) -> MemberIter<'a> {
        let mut reader = Cursor::new(text.as_bytes());
        reader.skip_ws();
        let done = reader.peek() != Some(b'{');
        reader.pos += 1;
        MemberIter {
            text,
            reader,
            first: true,
            done,
        }
    }

    fn step(&mut self) -> Result<Option<RawMember<'a>>, SyntaxError> {
        self.reader.skip_ws();
        match self.reader.peek() {
            Some(b'}') | None => return Ok(None),
            Some(b',') if !self.first => {
                self.reader.pos += 1;
                self.reader.skip_ws();
            }
            _ => {}
        }
        self.first = false;
        let key = self.reader.member_key()?;
        let start = self.reader.pos;
        self.reader.value(1, usize::MAX)?;
        let text = self.text;
        let key_text = text.get(key.span.start()..key.span.end());
        Ok(key_text
            .zip(text.get(start..self.reader.pos))
            .map(|(key_text, value)| ((key_text, key.escaped), value)))
    }
}

impl<'a> Iterator for MemberIter<'a> {
    /// `((raw key, key has escapes), value text)`.
    type Item = RawMember<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step().ok().flatten();
        self.done = item.is_none();
        item
    }
}
