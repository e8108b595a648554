//! `Id`: a request id that keeps its exact JSON text.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::json::unescape;

/// The three kinds of id JSON-RPC 2.0 allows.
///
/// ```
/// use rpcwire_wire::{Id, IdKind};
/// assert_eq!(Id::from(7u64).kind(), IdKind::Number);
/// assert_eq!(Id::from("a").kind(), IdKind::String);
/// assert_eq!(Id::null().kind(), IdKind::Null);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// `null`.
    Null,
    /// A JSON number, kept as its text (`1`, `-7`, `1.5e3`, `18446744073709551616`).
    Number,
    /// A JSON string.
    String,
}

/// What an id's text is: the text itself is kept in one `Cow` whatever the kind (so that a
/// parsed message drops its id with one check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// The text is `null`.
    Null,
    /// Validated JSON number text.
    Number,
    /// The string's JSON text between the quotes (escapes intact); `escaped` says whether it
    /// contains any backslash escape.
    String { escaped: bool },
}

/// A request id, kept as the exact JSON text it arrived as, so that it echoes byte for byte.
///
/// Numbers keep their text (`18446744073709551616`, `-7` and `1.5e3` stay exactly that),
/// strings keep their escapes. Two ids are equal when they are of the same kind and either
/// the same number text or the same string value (after unescaping).
///
/// ```
/// use rpcwire_wire::Id;
/// let id = Id::from(42u64);
/// assert_eq!(id.as_u64(), Some(42));
/// assert_eq!(id.raw(), "42");
///
/// let id = Id::from("req-1");
/// assert_eq!(id.as_str().as_deref(), Some("req-1"));
/// assert_eq!(id.raw(), "req-1");
/// ```
#[derive(Clone, Debug)]
pub struct Id<'a> {
    shape: Shape,
    text: Cow<'a, str>,
}

impl<'a> Id<'a> {
    /// The `null` id.
    ///
    /// ```
    /// assert!(rpcwire_wire::Id::null().is_null());
    /// ```
    pub const fn null() -> Id<'static> {
        Id {
            shape: Shape::Null,
            text: Cow::Borrowed("null"),
        }
    }

    /// Builds a numeric id from JSON number text, checking the JSON number grammar.
    ///
    /// Returns `None` when `text` is not a JSON number.
    ///
    /// ```
    /// use rpcwire_wire::Id;
    /// assert_eq!(Id::number("1.5e3").unwrap().raw(), "1.5e3");
    /// assert!(Id::number("01").is_none());
    /// ```
    pub fn number(text: impl Into<Cow<'a, str>>) -> Option<Id<'a>> {
        let text = text.into();
        if crate::json::number::is_json_number(text.as_bytes()) {
            Some(Id {
                shape: Shape::Number,
                text,
            })
        } else {
            None
        }
    }

    /// Builds a string id from its value; quotes and control characters are escaped as JSON
    /// requires.
    ///
    /// ```
    /// use rpcwire_wire::Id;
    /// let id = Id::string("a\"b");
    /// assert_eq!(id.raw(), r#"a\"b"#);
    /// assert_eq!(id.as_str().unwrap(), "a\"b");
    /// ```
    pub fn string(value: impl Into<Cow<'a, str>>) -> Id<'a> {
        let value = value.into();
        match crate::json::escape::escape_json_str(&value) {
            None => Id {
                shape: Shape::String { escaped: false },
                text: value,
            },
            Some(escaped) => Id {
                shape: Shape::String { escaped: true },
                text: Cow::Owned(escaped),
            },
        }
    }

    /// A number id from its JSON text, which the caller has validated as a JSON number (it is
    /// written as it is: `1.50` stays `1.50`). What a parser that read the number makes.
    ///
    /// ```
    /// let id = rpcwire_wire::Id::from_number_text("1.50");
    /// assert_eq!(id.kind(), rpcwire_wire::IdKind::Number);
    /// assert_eq!(id.raw(), "1.50");
    /// ```
    pub fn from_number_text(text: &'a str) -> Id<'a> {
        Id {
            shape: Shape::Number,
            text: Cow::Borrowed(text),
        }
    }

    /// Parser entry: the raw text between the quotes of a validated JSON string.
    pub(crate) fn from_string_text(raw: &'a str, escaped: bool) -> Id<'a> {
        Id {
            shape: Shape::String { escaped },
            text: Cow::Borrowed(raw),
        }
    }

    /// Which kind of id this is.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Id::from(-1i64).kind(), rpcwire_wire::IdKind::Number);
    /// ```
    pub fn kind(&self) -> IdKind {
        match self.shape {
            Shape::Null => IdKind::Null,
            Shape::Number => IdKind::Number,
            Shape::String { .. } => IdKind::String,
        }
    }

    /// `true` for the `null` id.
    ///
    /// ```
    /// assert!(!rpcwire_wire::Id::from(1u64).is_null());
    /// ```
    pub fn is_null(&self) -> bool {
        self.shape == Shape::Null
    }

    /// The id as an unsigned integer, when it is a number written as one that fits.
    ///
    /// ```
    /// use rpcwire_wire::Id;
    /// assert_eq!(Id::from(7u64).as_u64(), Some(7));
    /// assert_eq!(Id::number("18446744073709551616").unwrap().as_u64(), None);
    /// assert_eq!(Id::number("1.5e3").unwrap().as_u64(), None);
    /// ```
    pub fn as_u64(&self) -> Option<u64> {
        match self.shape {
            Shape::Number => self.text.parse().ok(),
            _ => None,
        }
    }

    /// The id as a signed integer, when it is a number written as one that fits.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Id::number("-7").unwrap().as_i64(), Some(-7));
    /// ```
    pub fn as_i64(&self) -> Option<i64> {
        match self.shape {
            Shape::Number => self.text.parse().ok(),
            _ => None,
        }
    }

    /// The string value of a string id, unescaped (borrowed when it had no escapes).
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Id::from(1u64).as_str(), None);
    /// ```
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        match self.shape {
            Shape::String { escaped: false } => Some(Cow::Borrowed(&self.text)),
            Shape::String { escaped: true } => Some(Cow::Owned(unescape::unescape(&self.text))),
            _ => None,
        }
    }

    /// The id's JSON text without the quotes of a string: `42`, `1.5e3`, `null`, or the
    /// escaped content of a string id — so the string `"42"` and the number `42` both read
    /// `42` here; [`json_parts`](Id::json_parts) and [`kind`](Id::kind) tell them apart.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::Id::null().raw(), "null");
    /// ```
    pub fn raw(&self) -> &str {
        &self.text
    }

    /// Writes the id as JSON text (strings with their quotes) to `out`.
    ///
    /// ```
    /// let mut s = String::new();
    /// rpcwire_wire::Id::from("x").write_json(&mut s);
    /// assert_eq!(s, "\"x\"");
    /// ```
    pub fn write_json(&self, out: &mut String) {
        for piece in self.json_parts() {
            out.push_str(piece);
        }
    }

    /// The id's exact JSON text in three pieces, to be written one after the other without
    /// allocating: a string's quotes around its raw content (escapes intact), empty pieces
    /// around a number's text or `null`. Unlike [`raw`](Id::raw), the string `"42"` and the
    /// number `42` differ here.
    ///
    /// ```
    /// let string = rpcwire_wire::Id::from("42");
    /// let number = rpcwire_wire::Id::from(42u64);
    /// assert_eq!(string.json_parts().concat(), "\"42\"");
    /// assert_eq!(number.json_parts().concat(), "42");
    /// ```
    #[inline]
    pub fn json_parts(&self) -> [&str; 3] {
        match self.shape {
            Shape::String { .. } => ["\"", &self.text, "\""],
            Shape::Null | Shape::Number => ["", &self.text, ""],
        }
    }

    /// Detaches the id from the buffer it was parsed from.
    ///
    /// ```
    /// let owned: rpcwire_wire::Id<'static> = rpcwire_wire::Id::from("x").into_owned();
    /// assert_eq!(owned.raw(), "x");
    /// ```
    pub fn into_owned(self) -> Id<'static> {
        let text = match self.shape {
            // `null` keeps its static text: no allocation.
            Shape::Null => Cow::Borrowed("null"),
            _ => Cow::Owned(self.text.into_owned()),
        };
        Id {
            shape: self.shape,
            text,
        }
    }

    /// A borrowed copy of this id (no allocation).
    ///
    /// ```
    /// let id = rpcwire_wire::Id::from("x");
    /// assert_eq!(id.borrowed(), id);
    /// ```
    pub fn borrowed(&self) -> Id<'_> {
        Id {
            shape: self.shape,
            text: Cow::Borrowed(&self.text),
        }
    }
}

impl PartialEq for Id<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self.shape, other.shape) {
            (Shape::Null, Shape::Null) => true,
            (Shape::Number, Shape::Number)
            | (Shape::String { escaped: false }, Shape::String { escaped: false }) => self.text == other.text,
            (Shape::String { .. }, Shape::String { .. }) => self.as_str() == other.as_str(),
            _ => false,
        }
    }
}

impl Eq for Id<'_> {}

impl Hash for Id<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind().hash(state);
        match self.shape {
            Shape::Null => {}
            Shape::Number => self.text.hash(state),
            Shape::String { .. } => self.as_str().hash(state),
        }
    }
}

impl fmt::Display for Id<'_> {
    /// Formats the id as JSON text: `42`, `"abc"`, `null`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.json_parts().iter().try_for_each(|piece| f.write_str(piece))
    }
}

impl From<u64> for Id<'static> {
    fn from(n: u64) -> Self {
        Id {
            shape: Shape::Number,
            text: Cow::Owned(n.to_string()),
        }
    }
}

impl From<u32> for Id<'static> {
    fn from(n: u32) -> Self {
        Id::from(u64::from(n))
    }
}

impl From<i64> for Id<'static> {
    fn from(n: i64) -> Self {
        Id {
            shape: Shape::Number,
            text: Cow::Owned(n.to_string()),
        }
    }
}

impl From<i32> for Id<'static> {
    fn from(n: i32) -> Self {
        Id::from(i64::from(n))
    }
}

impl<'a> From<&'a str> for Id<'a> {
    fn from(s: &'a str) -> Self {
        Id::string(s)
    }
}

impl From<String> for Id<'static> {
    fn from(s: String) -> Self {
        Id::string(s)
    }
}
