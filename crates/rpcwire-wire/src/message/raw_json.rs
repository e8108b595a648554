//! `RawJson`: validated JSON text, kept as text until someone decodes it.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::json::SyntaxError;

/// Validated JSON text: the `params` of a request, the `result` of a response, the `data`
/// of an error. It plays the part of serde_json's `RawValue`, with a lifetime: borrowed from
/// the parsed buffer, or owned when built.
///
/// The text is always one complete, valid JSON value (checked when it was parsed or built).
///
/// ```
/// use rpcwire_wire::RawJson;
/// let raw = RawJson::from_value(&vec![1, 2, 3]).unwrap();
/// assert_eq!(raw.get(), "[1,2,3]");
/// let back: Vec<u32> = raw.decode().unwrap();
/// assert_eq!(back, [1, 2, 3]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawJson<'a> {
    text: Cow<'a, str>,
}

impl<'a> RawJson<'a> {
    /// Text the caller has validated as one JSON value without surrounding whitespace (what
    /// a parser hands out): not checked again ([`new`](RawJson::new) checks), so text that
    /// is not JSON makes output that is not JSON (never undefined behaviour).
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::RawJson::from_validated("{}").get(), "{}");
    /// ```
    pub fn from_validated(text: &'a str) -> RawJson<'a> {
        RawJson {
            text: Cow::Borrowed(text),
        }
    }

    /// [`from_validated`](RawJson::from_validated) for owned text (serde_json's output).
    ///
    /// ```
    /// let text = serde_json::to_string(&[1, 2]).unwrap();
    /// assert_eq!(rpcwire_wire::RawJson::from_validated_owned(text).get(), "[1,2]");
    /// ```
    pub fn from_validated_owned(text: String) -> RawJson<'static> {
        RawJson {
            text: Cow::Owned(text),
        }
    }

    /// Validates `text` as one JSON value and wraps it; surrounding whitespace is allowed
    /// and dropped.
    ///
    /// ```
    /// use rpcwire_wire::RawJson;
    /// assert_eq!(RawJson::new(" [1] ").unwrap().get(), "[1]");
    /// assert!(RawJson::new("{\"a\": [1, 2.5, null]}").is_ok());
    /// assert!(RawJson::new("{\"a\": }").is_err());
    /// ```
    pub fn new(text: impl Into<Cow<'a, str>>) -> Result<RawJson<'a>, SyntaxError> {
        let text = text.into();
        crate::json::validate(text.as_bytes())?;
        let start = text.len() - text.trim_start_matches(crate::json::is_whitespace_char).len();
        let end = text.trim_end_matches(crate::json::is_whitespace_char).len();
        let text = match text {
            Cow::Borrowed(text) => Cow::Borrowed(&text[start..end]),
            Cow::Owned(text) if start == 0 && end == text.len() => Cow::Owned(text),
            Cow::Owned(text) => Cow::Owned(text[start..end].to_owned()),
        };
        Ok(RawJson { text })
    }

    /// Serializes `value` with serde_json into new JSON text.
    ///
    /// ```
    /// let raw = rpcwire_wire::RawJson::from_value(&("a", 1)).unwrap();
    /// assert_eq!(raw.get(), r#"["a",1]"#);
    /// ```
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Result<RawJson<'static>, serde_json::Error> {
        serde_json::to_string(value).map(RawJson::from_validated_owned)
    }

    /// The JSON text.
    ///
    /// ```
    /// assert_eq!(rpcwire_wire::RawJson::new("true").unwrap().get(), "true");
    /// ```
    pub fn get(&self) -> &str {
        &self.text
    }

    /// Decodes the text into `T` with serde_json, borrowing from the text where `T` allows.
    ///
    /// ```
    /// let raw = rpcwire_wire::RawJson::new(r#"{"x": 1}"#).unwrap();
    /// #[derive(serde::Deserialize)]
    /// struct P { x: u8 }
    /// assert_eq!(raw.decode::<P>().unwrap().x, 1);
    /// ```
    pub fn decode<'de, T: Deserialize<'de>>(&'de self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.text)
    }

    /// `true` when the value is `null`.
    ///
    /// ```
    /// assert!(rpcwire_wire::RawJson::new(" null ").unwrap().is_null());
    /// assert!(!rpcwire_wire::RawJson::new("[null]").unwrap().is_null());
    /// ```
    pub fn is_null(&self) -> bool {
        self.text == "null"
    }

    /// Detaches the text from the buffer it was parsed from.
    ///
    /// ```
    /// let owned: rpcwire_wire::RawJson<'static> = rpcwire_wire::RawJson::new("1").unwrap().into_owned();
    /// assert_eq!(owned.get(), "1");
    /// ```
    pub fn into_owned(self) -> RawJson<'static> {
        RawJson {
            text: Cow::Owned(self.text.into_owned()),
        }
    }

    /// The text as an owned `String` (no copy when it is owned already).
    pub(crate) fn into_string(self) -> String {
        self.text.into_owned()
    }

    /// A borrowed copy (no allocation).
    ///
    /// ```
    /// let raw = rpcwire_wire::RawJson::new("1").unwrap();
    /// assert_eq!(raw.borrowed(), raw);
    /// ```
    pub fn borrowed(&self) -> RawJson<'_> {
        RawJson {
            text: Cow::Borrowed(&self.text),
        }
    }

    /// Converts into serde_json's boxed `RawValue`.
    ///
    /// ```
    /// let raw = rpcwire_wire::RawJson::new("[1]").unwrap();
    /// assert_eq!(raw.to_raw_value().get(), "[1]");
    /// ```
    pub fn to_raw_value(&self) -> Box<serde_json::value::RawValue> {
        // The text is valid JSON, so serde_json accepts it; the fallback keeps this total.
        serde_json::value::RawValue::from_string(self.text.clone().into_owned()).unwrap_or_default()
    }
}

impl fmt::Display for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'a> TryFrom<&'a serde_json::value::RawValue> for RawJson<'a> {
    type Error = SyntaxError;

    /// Checks the text with rpcwire's validator: serde_json's `RawValue` lets lone UTF-16
    /// surrogate escapes (`"\ud800"`) through, which rpcwire rejects.
    fn try_from(raw: &'a serde_json::value::RawValue) -> Result<Self, SyntaxError> {
        RawJson::new(raw.get())
    }
}

impl TryFrom<Box<serde_json::value::RawValue>> for RawJson<'static> {
    type Error = SyntaxError;

    /// Checks the text with rpcwire's validator, as for `&RawValue`.
    fn try_from(raw: Box<serde_json::value::RawValue>) -> Result<Self, SyntaxError> {
        RawJson::new(String::from(Box::<str>::from(raw)))
    }
}

impl TryFrom<&serde_json::Value> for RawJson<'static> {
    type Error = serde_json::Error;

    fn try_from(value: &serde_json::Value) -> Result<Self, Self::Error> {
        RawJson::from_value(value)
    }
}
