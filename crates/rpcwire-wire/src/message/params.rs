//! `Params`: a view of a request's params, an array or an object of validated JSON.

use std::borrow::Cow;

use serde::Deserialize;

use super::RawJson;
use crate::json::iter::{ArrayIter, MemberIter};
use crate::json::unescape;

/// A view of the params of a request or notification: validated JSON text that is an array
/// (positional params) or an object (named params). Nothing is decoded until asked.
///
/// ```
/// let parsed = rpcwire_wire::parse(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":[true]}}"#).unwrap();
/// let message = parsed.single().unwrap();
/// let rpcwire_wire::Message::Request(req) = message else { panic!() };
/// let params = req.params().unwrap();
/// assert!(params.is_object());
/// assert_eq!(params.get("b").unwrap().get(), "[true]");
/// assert!(params.get("c").is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params<'p> {
    text: &'p str,
}

impl<'p> Params<'p> {
    /// The params whose text is `text`, a JSON array or object the caller has validated (a
    /// parser's slice): not checked again; on text that is not one, lookups find nothing.
    ///
    /// ```
    /// let params = rpcwire_wire::Params::new(r#"{"uri":"mem://a"}"#);
    /// assert_eq!(params.get("uri").unwrap().get(), r#""mem://a""#);
    /// ```
    pub fn new(text: &'p str) -> Params<'p> {
        Params { text }
    }

    /// The params as JSON text.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[1]).unwrap();
    /// assert_eq!(req.params().unwrap().raw().get(), "[1]");
    /// ```
    pub fn raw(&self) -> RawJson<'p> {
        RawJson::from_validated(self.text)
    }

    /// The params as text.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[1]).unwrap();
    /// assert_eq!(req.params().unwrap().as_str(), "[1]");
    /// ```
    pub fn as_str(&self) -> &'p str {
        self.text
    }

    /// `true` for positional params (a JSON array).
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[1]).unwrap();
    /// assert!(req.params().unwrap().is_array());
    /// ```
    pub fn is_array(&self) -> bool {
        self.first_byte() == Some(b'[')
    }

    /// `true` for named params (a JSON object).
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&serde_json::json!({})).unwrap();
    /// assert!(req.params().unwrap().is_object());
    /// ```
    pub fn is_object(&self) -> bool {
        self.first_byte() == Some(b'{')
    }

    fn first_byte(&self) -> Option<u8> {
        self.text.trim_start().as_bytes().first().copied()
    }

    /// Decodes the params into `T` with serde (positional params into a tuple, a `Vec` or a
    /// tuple struct; named params into a struct or a map), borrowing strings where it can.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct Subtract { minuend: i64, subtrahend: i64 }
    /// let req = rpcwire_wire::Request::new(1u64, "subtract")
    ///     .with_params(&serde_json::json!({"minuend": 42, "subtrahend": 23})).unwrap();
    /// let p: Subtract = req.params().unwrap().decode().unwrap();
    /// assert_eq!(p.minuend - p.subtrahend, 19);
    /// ```
    pub fn decode<T: Deserialize<'p>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.text)
    }

    /// The value of the named member `name` (compared after unescaping); `None` when the
    /// params are an array or have no such member.
    ///
    /// The parser rejects duplicate members of the message itself, but not inside params
    /// (that is the handler's data). When a name appears more than once, `get` returns the
    /// last one, as `serde_json::Value` does (a serde-derived struct rejects the duplicate).
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&serde_json::json!({"k": "v"})).unwrap();
    /// assert_eq!(req.params().unwrap().get("k").unwrap().decode::<String>().unwrap(), "v");
    /// ```
    pub fn get(&self, name: &str) -> Option<RawJson<'p>> {
        MemberIter::new(self.text)
            .filter(|&((key, escaped), _)| {
                if escaped {
                    unescape::unescape(key) == name
                } else {
                    key == name
                }
            })
            .last()
            .map(|(_, value)| RawJson::from_validated(value))
    }

    /// Positional element `index`; `None` when the params are an object or too short.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[10, 20]).unwrap();
    /// assert_eq!(req.params().unwrap().at(1).unwrap().get(), "20");
    /// ```
    pub fn at(&self, index: usize) -> Option<RawJson<'p>> {
        self.iter().nth(index)
    }

    /// The positional elements of array params in order; nothing for object params.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[1, 2, 3]).unwrap();
    /// let sum: u32 = req.params().unwrap().iter().map(|v| v.decode::<u32>().unwrap()).sum();
    /// assert_eq!(sum, 6);
    /// ```
    pub fn iter(&self) -> ParamsIter<'p> {
        ParamsIter {
            inner: ArrayIter::new(self.text),
        }
    }

    /// The members of object params in order, keys unescaped; nothing for array params.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&serde_json::json!({"a": 1})).unwrap();
    /// let members: Vec<_> = req.params().unwrap().members().map(|(k, v)| (k.into_owned(), v.get().to_owned())).collect();
    /// assert_eq!(members, [("a".to_owned(), "1".to_owned())]);
    /// ```
    pub fn members(&self) -> impl Iterator<Item = (Cow<'p, str>, RawJson<'p>)> {
        MemberIter::new(self.text).map(|((key, escaped), value)| {
            let key = if escaped {
                Cow::Owned(unescape::unescape(key))
            } else {
                Cow::Borrowed(key)
            };
            (key, RawJson::from_validated(value))
        })
    }

    /// The number of positional elements or named members.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[1, 2]).unwrap();
    /// assert_eq!(req.params().unwrap().len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        if self.is_array() {
            self.iter().count()
        } else {
            MemberIter::new(self.text).count()
        }
    }

    /// `true` for `[]` and `{}`.
    ///
    /// ```
    /// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&[0u8; 0]).unwrap();
    /// assert!(req.params().unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Iterator over positional params, see [`Params::iter`].
///
/// ```
/// let req = rpcwire_wire::Request::new(1u64, "m").with_params(&["a"]).unwrap();
/// let mut iter: rpcwire_wire::ParamsIter<'_> = req.params().unwrap().iter();
/// assert_eq!(iter.next().unwrap().get(), "\"a\"");
/// ```
pub struct ParamsIter<'p> {
    inner: ArrayIter<'p>,
}

impl<'p> Iterator for ParamsIter<'p> {
    type Item = RawJson<'p>;

    fn next(&mut self) -> Option<RawJson<'p>> {
        self.inner.next().map(RawJson::from_validated)
    }
}
