//! One connection's accounts: what was sent, which answers are due, what came back. Every
//! request with an id must get exactly one answer with that id (and the expected result or
//! error code); unreadable messages get error answers with id `null`, counted against the
//! number due. A window of permits bounds the answers due at once, so that the soak keeps
//! a steady load instead of flooding the server.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{Notify, Semaphore};

use crate::traffic::{Expected, Kind, Outgoing};

/// Answers due at once on one connection, at most.
pub const WINDOW: u32 = 32;

/// Notes kept per connection about what went wrong (the counts go on past it).
const MAX_NOTES: usize = 8;

/// What one connection (or, summed, one server) sent and got back.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    /// Messages written (a line, a frame, a POST, a WebSocket text message; a batch is one).
    pub messages_sent: u64,
    /// Messages written, by kind.
    pub messages_by_kind: BTreeMap<&'static str, u64>,
    /// Answers due: requests with an id (batch elements included) and the error answers
    /// with id `null` due for unreadable messages and invalid elements.
    pub requests: u64,
    /// Answers received that matched one due.
    pub answers: u64,
    /// Of those, error answers (an HTTP 413 and a WebSocket close with 1009 count as the
    /// error answer of an oversized message).
    pub error_answers: u64,
    /// Error answers by code (413 and 1009 are the HTTP status and the close code).
    pub error_codes: BTreeMap<i64, u64>,
    /// Answers due that never came: `requests - answers`.
    pub unanswered: u64,
    /// Answers with an id not due (unknown, or a second answer) or an extra `null` error.
    pub unexpected_answers: u64,
    /// Answers with the right id but the wrong result or error code (or, over HTTP, the
    /// wrong status).
    pub wrong_answers: u64,
    /// Output that is not a JSON-RPC answer, or framing that cannot be read.
    pub bad_output: u64,
    /// Connections opened again after the server closed one as it should (WebSocket after
    /// 1009, HTTP when an answer says `Connection: close`).
    pub reconnects: u64,
    /// Connections that broke (ended or failed with answers due, or could not be written).
    pub connection_losses: u64,
}

impl Counts {
    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &Counts) {
        self.messages_sent += other.messages_sent;
        for (kind, n) in &other.messages_by_kind {
            *self.messages_by_kind.entry(kind).or_default() += n;
        }
        self.requests += other.requests;
        self.answers += other.answers;
        self.error_answers += other.error_answers;
        for (code, n) in &other.error_codes {
            *self.error_codes.entry(*code).or_default() += n;
        }
        self.unanswered += other.unanswered;
        self.unexpected_answers += other.unexpected_answers;
        self.wrong_answers += other.wrong_answers;
        self.bad_output += other.bad_output;
        self.reconnects += other.reconnects;
        self.connection_losses += other.connection_losses;
    }

    /// Everything that went wrong besides unanswered requests.
    pub fn other_problems(&self) -> u64 {
        self.unexpected_answers + self.wrong_answers + self.bad_output + self.connection_losses
    }
}

/// The mutable part of a ledger.
#[derive(Default)]
struct Book {
    counts: Counts,
    /// Answers due by id (compact JSON text of the id).
    due: HashMap<String, Expected>,
    /// Error answers with id `null` due.
    null_errors_due: u64,
    /// Answers due that were written off when their connection broke.
    lost: u64,
    notes: Vec<String>,
}

impl Book {
    /// Answers due right now.
    fn outstanding(&self) -> u64 {
        self.due.len() as u64 + self.null_errors_due
    }

    /// Keeps `note` if there is room.
    fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(note);
        }
    }

    /// Counts an error answer with `code`.
    fn error_answer(&mut self, code: i64) {
        self.counts.error_answers += 1;
        *self.counts.error_codes.entry(code).or_default() += 1;
    }
}

/// What a single answer object turned out to be.
enum Verdict {
    /// It matched an answer due (released a permit).
    Matched,
    /// Not an answer anyone waited for, or not an answer at all.
    Rejected,
}

/// One connection's accounts, shared by its writer and its reader.
pub struct Ledger {
    /// Which connection, for the notes.
    name: String,
    book: Mutex<Book>,
    /// Permits for answers due; the writer takes them, matched answers give them back.
    window: Semaphore,
    /// Woken whenever an answer due arrives.
    answered: Notify,
}

impl Ledger {
    /// An empty ledger for the connection `name`.
    pub fn new(name: &str) -> Ledger {
        Ledger {
            name: name.to_owned(),
            book: Mutex::new(Book {
                counts: Counts {
                    messages_by_kind: Kind::ALL.iter().map(|kind| (kind.name(), 0)).collect(),
                    ..Counts::default()
                },
                ..Book::default()
            }),
            window: Semaphore::new(WINDOW as usize),
            answered: Notify::new(),
        }
    }

    /// The book, even if a thread panicked holding it.
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for room in the window for `message`'s answers (`false` only if the window
    /// were closed, which it never is).
    pub async fn reserve(&self, message: &Outgoing) -> bool {
        match self.window.acquire_many(message.expected_answers()).await {
            Ok(permit) => {
                permit.forget();
                true
            }
            Err(_) => false,
        }
    }

    /// Gives back the room [`reserve`](Ledger::reserve) took for `message`, which is not
    /// sent after all.
    pub fn not_sent(&self, message: &Outgoing) {
        self.window.add_permits(message.expected_answers() as usize);
    }

    /// Records `message` as sent: call it before writing, so that no answer can come first.
    pub fn sent(&self, message: &Outgoing) {
        let mut book = self.book();
        book.counts.messages_sent += 1;
        *book
            .counts
            .messages_by_kind
            .entry(message.kind.name())
            .or_default() += 1;
        book.counts.requests += u64::from(message.expected_answers());
        book.null_errors_due += u64::from(message.null_errors);
        for (id, expected) in &message.answers {
            if book.due.insert(id.clone(), expected.clone()).is_some() {
                book.note(format!("id {id} sent twice (a bug of the soak)"));
            }
        }
    }

    /// Reads `text` (a response or an array of responses) and settles what it answers.
    pub fn answer_text(&self, text: &[u8]) {
        let mut matched = 0;
        {
            let mut book = self.book();
            match serde_json::from_slice::<Value>(text) {
                Ok(Value::Array(answers)) if !answers.is_empty() => {
                    for answer in &answers {
                        if let Verdict::Matched = settle(&mut book, answer) {
                            matched += 1;
                        }
                    }
                }
                Ok(answer) => {
                    if let Verdict::Matched = settle(&mut book, &answer) {
                        matched += 1;
                    }
                }
                Err(error) => {
                    book.counts.bad_output += 1;
                    let shown = String::from_utf8_lossy(&text[..text.len().min(200)]).into_owned();
                    book.note(format!("output that is not JSON ({error}): {shown}"));
                }
            }
        }
        self.release(matched);
    }

    /// Settles an error answer with id `null` that came as something else than JSON: an
    /// HTTP status (413) or a WebSocket close code (1009).
    pub fn null_error_answer(&self, code: i64, what: &str) {
        let matched = {
            let mut book = self.book();
            if book.null_errors_due > 0 {
                book.null_errors_due -= 1;
                book.counts.answers += 1;
                book.error_answer(code);
                1
            } else {
                book.counts.unexpected_answers += 1;
                book.note(format!("{what} when no error answer was due"));
                0
            }
        };
        self.release(matched);
    }

    /// Gives back `n` permits and wakes whoever waits for answers.
    fn release(&self, n: usize) {
        if n > 0 {
            self.window.add_permits(n);
            self.answered.notify_waiters();
        }
    }

    /// Counts output that cannot be read, with a note saying what.
    pub fn bad_output(&self, note: &str) {
        let mut book = self.book();
        book.counts.bad_output += 1;
        book.note(note.to_owned());
    }

    /// Counts an answer that does not fit what was sent, with a note saying what.
    pub fn wrong_answer(&self, note: &str) {
        let mut book = self.book();
        book.counts.wrong_answers += 1;
        book.note(note.to_owned());
    }

    /// Counts a connection opened again after the server closed one on purpose.
    pub fn reconnected(&self) {
        self.book().counts.reconnects += 1;
    }

    /// Keeps a note about the connection.
    pub fn note(&self, note: &str) {
        self.book().note(note.to_owned());
    }

    /// The connection broke: its answers due are written off as unanswered (and their
    /// permits given back, so that a new connection can go on).
    pub fn connection_lost(&self, why: &str) {
        let released = {
            let mut book = self.book();
            let outstanding = book.outstanding();
            book.counts.connection_losses += 1;
            book.lost += outstanding;
            book.due.clear();
            book.null_errors_due = 0;
            book.note(format!("connection lost with {outstanding} answers due: {why}"));
            outstanding
        };
        self.release(released as usize);
    }

    /// Messages sent so far.
    pub fn messages_sent(&self) -> u64 {
        self.book().counts.messages_sent
    }

    /// Answers due right now.
    pub fn outstanding(&self) -> u64 {
        self.book().outstanding()
    }

    /// Waits until no answer is due, at most `limit`; whether none is.
    pub async fn drained(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                // Created before the check: a wake-up between the two is not missed.
                let woken = self.answered.notified();
                if self.outstanding() == 0 {
                    return;
                }
                woken.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// The final counts (what is still due is unanswered) and the notes, prefixed with the
    /// connection's name.
    pub fn finish(&self) -> (Counts, Vec<String>) {
        let book = self.book();
        let mut counts = book.counts.clone();
        counts.unanswered = book.lost + book.outstanding();
        let mut notes: Vec<String> = book.notes.iter().map(|n| format!("{}: {n}", self.name)).collect();
        if !book.due.is_empty() {
            let mut ids: Vec<&String> = book.due.keys().collect();
            ids.sort();
            ids.truncate(10);
            notes.push(format!("{}: no answer for ids {ids:?}", self.name));
        }
        if book.null_errors_due > 0 {
            notes.push(format!(
                "{}: {} error answers with id null never came",
                self.name, book.null_errors_due
            ));
        }
        (counts, notes)
    }
}

/// Settles one answer object against the book.
fn settle(book: &mut Book, answer: &Value) -> Verdict {
    let Some(object) = answer
        .as_object()
        .filter(|o| o.get("jsonrpc") == Some(&Value::from("2.0")))
    else {
        return reject_malformed(book, answer);
    };
    let (result, error) = (object.get("result"), object.get("error"));
    let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
    let well_formed = match (result, error) {
        (Some(_), None) => true,
        (None, Some(_)) => code.is_some(),
        _ => false,
    };
    let Some(id) = object.get("id").filter(|_| well_formed) else {
        return reject_malformed(book, answer);
    };
    if id.is_null() {
        return settle_null_error(book, code, answer);
    }
    let key = id.to_string();
    let Some(expected) = book.due.remove(&key) else {
        book.counts.unexpected_answers += 1;
        book.note(format!(
            "answer for id {key}, which was not due: {}",
            shown(answer)
        ));
        return Verdict::Rejected;
    };
    book.counts.answers += 1;
    if let Some(code) = code {
        book.error_answer(code);
    }
    let right = match (&expected, result, code) {
        (Expected::Result(want), Some(got), _) => want == got,
        (Expected::Error(want), _, Some(got)) => *want == got,
        _ => false,
    };
    if !right {
        book.counts.wrong_answers += 1;
        book.note(format!("id {key}: expected {expected:?}, got {}", shown(answer)));
    }
    Verdict::Matched
}

/// Settles an answer with id `null`: one of the error answers due, or an extra one.
fn settle_null_error(book: &mut Book, code: Option<i64>, answer: &Value) -> Verdict {
    let Some(code) = code else {
        book.counts.unexpected_answers += 1;
        book.note(format!("a success with id null: {}", shown(answer)));
        return Verdict::Rejected;
    };
    if book.null_errors_due == 0 {
        book.counts.unexpected_answers += 1;
        book.note(format!(
            "an error with id null when none was due: {}",
            shown(answer)
        ));
        return Verdict::Rejected;
    }
    book.null_errors_due -= 1;
    book.counts.answers += 1;
    book.error_answer(code);
    Verdict::Matched
}

/// Counts an answer that is not a JSON-RPC response.
fn reject_malformed(book: &mut Book, answer: &Value) -> Verdict {
    book.counts.bad_output += 1;
    book.note(format!("not a JSON-RPC response: {}", shown(answer)));
    Verdict::Rejected
}

/// The start of `value` as JSON, for a note.
fn shown(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > 200 {
        let mut cut = 200;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}
