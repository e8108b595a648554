//! The `error` member of a failed response: an object with an integer `code`, a string
//! `message` and an optional `data`.

use super::error::{ParseError, ParseErrorKind};
use super::members::{error_member, Member, Members, ERROR_KEYS};
use crate::json::cursor::Cursor;
use crate::json::kernels::Span;
use crate::json::number::{integer, NotAnInteger};
use crate::json::string::StrSpan;
use crate::json::{SyntaxError, SyntaxErrorKind};

/// The `error` member's parts.
pub(super) struct ErrorSpans {
    pub(super) code: i64,
    pub(super) message: StrSpan,
    pub(super) data: Option<Span>,
}

/// What is wrong with an error code's number text.
fn code_problem(problem: NotAnInteger) -> &'static str {
    match problem {
        NotAnInteger::Fractional => "\"code\" must be an integer",
        NotAnInteger::OutOfRange => "\"code\" is out of range",
    }
}

/// Parses the `error` object at `pos` (its `{`) inside `enclosing` containers. Returns
/// the parts (or what is wrong with them) and the position after the object.
pub(super) fn error_object(
    buf: &[u8],
    pos: usize,
    enclosing: usize,
    max_depth: usize,
) -> Result<(Result<ErrorSpans, ParseError>, usize), SyntaxError> {
    let mut r = Cursor::at(buf, pos);
    let object_at = pos;
    let depth = enclosing + 1;
    if depth > max_depth {
        return Err(r.error(SyntaxErrorKind::TooDeep { limit: max_depth }));
    }
    let mut members = Members::new(buf);
    let mut code: Option<i64> = None;
    let mut message: Option<StrSpan> = None;
    let mut data: Option<Span> = None;
    members.read_object(&mut r, &ERROR_KEYS, error_member, |members, r, member| {
        let value_at = r.pos;
        match member {
            Some(Member::Code) => {
                if matches!(r.peek(), Some(b'-' | b'0'..=b'9')) {
                    let text = r.number()?.text(r.buf);
                    match integer(text) {
                        Ok(value) => code = Some(value),
                        Err(problem) => {
                            members.note(ParseErrorKind::BadErrorObject(code_problem(problem)), value_at)
                        }
                    }
                } else {
                    r.value(depth, max_depth)?;
                    members.note(
                        ParseErrorKind::BadErrorObject("\"code\" must be an integer"),
                        value_at,
                    );
                }
            }
            Some(Member::Message) => {
                if r.peek() == Some(b'"') {
                    message = Some(r.string()?);
                } else {
                    r.value(depth, max_depth)?;
                    members.note(
                        ParseErrorKind::BadErrorObject("\"message\" must be a string"),
                        value_at,
                    );
                }
            }
            Some(Member::Data) => data = Some(r.value_span(depth, max_depth)?),
            _ => r.value(depth, max_depth)?,
        }
        Ok(())
    })?;
    let after = r.pos;
    if let Some(problem) = members.problem {
        return Ok((Err(problem), after));
    }
    let parts = match (code, message) {
        (Some(code), Some(message)) => Ok(ErrorSpans { code, message, data }),
        (None, _) => Err(ParseError::new(
            ParseErrorKind::BadErrorObject("missing \"code\""),
            object_at,
        )),
        (_, None) => Err(ParseError::new(
            ParseErrorKind::BadErrorObject("missing \"message\""),
            object_at,
        )),
    };
    Ok((parts, after))
}
