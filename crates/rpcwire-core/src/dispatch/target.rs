//! `Target`: where answers go, straight into the output buffer or as the elements of a batch
//! array. A leaf: the router and the deferred async answers write through it.

use bytes::BytesMut;

use crate::encode::BatchWriter;

/// Where answers go: straight into the buffer, or as elements of a batch array.
pub(crate) enum Target<'b> {
    Single(&'b mut BytesMut),
    Batch(BatchWriter<'b>),
}

impl Target<'_> {
    /// The buffer to write one answer into (after the batch separator, for a batch).
    pub(crate) fn answer(&mut self) -> &mut BytesMut {
        match self {
            Target::Single(dst) => dst,
            Target::Batch(batch) => batch.element(),
        }
    }

    /// The buffer itself, for work whose output is thrown away again.
    pub(crate) fn scratch(&mut self) -> &mut BytesMut {
        match self {
            Target::Single(dst) => dst,
            Target::Batch(batch) => batch.dst_mut(),
        }
    }

    /// Closes a batch array (nothing to do for a single answer).
    pub(crate) fn finish(self) {
        if let Target::Batch(batch) = self {
            batch.finish();
        }
    }
}
