//! Iterators over the elements of a validated JSON array and the members of a validated JSON
//! object, as text slices of it (what `Params` hands out without decoding anything), and
//! where one member's value lies: for code that walks JSON text already validated (by the
//! parser, or [`validate`](super::validate)) without decoding it. Text that is not valid JSON
//! ends a walk early; it never panics.
//!
//! They hold the text as `&str` already, so each element is sliced from it plainly.

use super::cursor::Cursor;
use super::error::SyntaxError;

/// A walk through the items of one container: its text, the cursor, and where it stands.
struct Items<'a> {
    text: &'a str,
    cursor: Cursor<'a>,
    close: u8,
    first: bool,
    done: bool,
}

impl<'a> Items<'a> {
    /// The items of `text`, which must be a validated container opened by `open`.
    fn new(text: &'a str, open: u8, close: u8) -> Items<'a> {
        let mut cursor = Cursor::new(text.as_bytes());
        cursor.skip_ws();
        let done = cursor.peek() != Some(open);
        cursor.pos += 1;
        Items {
            text,
            cursor,
            close,
            first: true,
            done,
        }
    }

    /// Steps to the next item: `false` at the container's end.
    fn advance(&mut self) -> bool {
        self.cursor.skip_ws();
        match self.cursor.peek() {
            Some(byte) if byte == self.close => return false,
            None => return false,
            Some(b',') if !self.first => {
                self.cursor.pos += 1;
                self.cursor.skip_ws();
            }
            _ => {}
        }
        self.first = false;
        true
    }

    /// The value at the cursor, as text; the cursor is left after it.
    fn value(&mut self) -> Result<Option<&'a str>, SyntaxError> {
        let start = self.cursor.pos;
        self.cursor.value(1, usize::MAX)?;
        Ok(self.text.get(start..self.cursor.pos))
    }

    /// Runs `step` for the next item; the walk ends at the first `None` or error (neither
    /// happens in validated text).
    fn next_with<T>(&mut self, step: impl FnOnce(&mut Self) -> Result<Option<T>, SyntaxError>) -> Option<T> {
        if self.done {
            return None;
        }
        let item = if self.advance() {
            step(self).ok().flatten()
        } else {
            None
        };
        self.done = item.is_none();
        item
    }
}

/// The elements of a validated JSON array, as text.
///
/// ```
/// let elements: Vec<&str> = rpcwire_wire::json::iter::ArrayIter::new(r#"[1, "two", {"three":3}]"#).collect();
/// assert_eq!(elements, ["1", r#""two""#, r#"{"three":3}"#]);
/// ```
pub struct ArrayIter<'a>(Items<'a>);

impl<'a> ArrayIter<'a> {
    /// `text` must be a validated JSON array.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::json::iter::ArrayIter::new("[]").count(), 0);
    /// ```
    pub fn new(text: &'a str) -> ArrayIter<'a> {
        ArrayIter(Items::new(text, b'[', b']'))
    }
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.0.next_with(Items::value)
    }
}

/// One member of a validated JSON object: `((raw key, key has escapes), value text)`, the
/// key without its quotes and not unescaped.
///
/// ```
/// let member: rpcwire_wire::json::iter::RawMember<'_> = (("id", false), "1");
/// # let _ = member;
/// ```
pub type RawMember<'a> = ((&'a str, bool), &'a str);

/// The members of a validated JSON object: key (raw, with escape flag) and value text.
///
/// ```
/// let members: Vec<_> = rpcwire_wire::json::iter::MemberIter::new(r#"{"a":1,"\u0062":[2]}"#).collect();
/// assert_eq!(members, [(("a", false), "1"), (("\\u0062", true), "[2]")]);
/// ```
pub struct MemberIter<'a>(Items<'a>);

impl<'a> MemberIter<'a> {
    /// `text` must be a validated JSON object.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::json::iter::MemberIter::new("{}").count(), 0);
    /// ```
    pub fn new(text: &'a str) -> MemberIter<'a> {
        MemberIter(Items::new(text, b'{', b'}'))
    }
}

impl<'a> Iterator for MemberIter<'a> {
    /// `((raw key, key has escapes), value text)`.
    type Item = RawMember<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_with(|items| {
            let key = items.cursor.member_key()?;
            let key_text = items.text.get(key.span.start()..key.span.end());
            let value = items.value()?;
            Ok(key_text
                .zip(value)
                .map(|(key_text, value)| ((key_text, key.escaped), value)))
        })
    }
}

/// Where the value of the member called `name` lies in `text`, a validated JSON object (keys
/// compared after unescaping, so `"\u0069d"` is `id`; the last one when the name repeats);
/// `None` when there is no such member or `text` is not an object.
///
/// ```
/// let text = br#"{"jsonrpc":"2.0","\u0069d":7,"result":[1]}"#;
/// let range = rpcwire_wire::json::iter::member_value_range(text, "id").unwrap();
/// assert_eq!(&text[range], b"7");
/// assert!(rpcwire_wire::json::iter::member_value_range(text, "error").is_none());
/// ```
pub fn member_value_range(text: &[u8], name: &str) -> Option<std::ops::Range<usize>> {
    let text_str = std::str::from_utf8(text).ok()?;
    if !text_str.trim_start().starts_with('{') {
        return None;
    }
    let value = MemberIter::new(text_str)
        .filter(|((key, escaped), _)| {
            if *escaped {
                super::unescape::unescape(key) == name
            } else {
                *key == name
            }
        })
        .map(|(_, value)| value)
        .last()?;
    // The value is a slice of `text_str`: its place follows from its address.
    let start = value.as_ptr() as usize - text_str.as_ptr() as usize;
    Some(start..start + value.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_value_is_found_by_its_unescaped_name() {
        let text = br#" {"jsonrpc":"2.0","\u0069d":7,"error":{"code":1},"id":[8]} "#;
        let at = |name| member_value_range(text, name).map(|range| &text[range]);
        assert_eq!(at("id"), Some(&b"[8]"[..]));
        assert_eq!(at("error"), Some(&br#"{"code":1}"#[..]));
        assert_eq!(at("result"), None);
        assert_eq!(member_value_range(b"[1]", "id"), None);
        assert_eq!(member_value_range(b"\xff", "id"), None);
    }

    #[test]
    fn elements_and_members_as_text() {
        let elements: Vec<&str> = ArrayIter::new(r#" [ 1 , "a,b" , {"k":[2]} , null ] "#).collect();
        assert_eq!(elements, ["1", r#""a,b""#, r#"{"k":[2]}"#, "null"]);
        assert_eq!(ArrayIter::new("[]").count(), 0);
        assert_eq!(ArrayIter::new("{}").count(), 0);
        let members: Vec<RawMember<'_>> = MemberIter::new(r#"{ "a" : 1, "b\u0041" :[true]}"#).collect();
        assert_eq!(members, [(("a", false), "1"), ((r"b\u0041", true), "[true]")]);
        assert_eq!(MemberIter::new("[1]").count(), 0);
    }
}
