//! `StreamRemote`: the way back to the client for a request served over Streamable HTTP —
//! notifications and requests go on the request's own SSE stream (made by the first of them:
//! `PostOutput`); the client's answers to those requests come back in later POSTs and are
//! matched by the session's call table.

use std::sync::Arc;

use bytes::BytesMut;

use super::output::PostOutput;
use super::session::HttpSession;
use crate::dispatch::{Remote, RemoteError, RemoteFuture};
use crate::encode;
use crate::message::{ErrorObject, JsonBytes, RawJson};

pub(crate) struct StreamRemote {
    pub(crate) session: Arc<HttpSession>,
    pub(crate) output: Arc<PostOutput>,
}

impl Remote for StreamRemote {
    fn call_raw<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a RawJson<'a>>,
    ) -> RemoteFuture<'a, JsonBytes> {
        Box::pin(async move {
            let call = self.session.calls.start().map_err(|error| {
                let closed = self.session.ended.is_cancelled();
                RemoteError::new(
                    error,
                    ErrorObject::internal_error("no call to the client could be made"),
                    closed,
                )
            })?;
            let mut frame = BytesMut::with_capacity(64 + params.map_or(0, |p| p.get().len()));
            encode::write_call_raw(&mut frame, Some(call.id()), method, params).map_err(|error| {
                RemoteError::new(
                    error,
                    ErrorObject::invalid_params("params must be an array or an object"),
                    false,
                )
            })?;
            self.output.stream().push(&frame);
            let timeout = self.session.call_timeout;
            let Ok(answer) = tokio::time::timeout(timeout, call).await else {
                let object =
                    ErrorObject::internal_error(format_args!("the client did not answer within {timeout:?}"));
                return Err(RemoteError::new(
                    format!("no answer within {timeout:?}"),
                    object,
                    false,
                ));
            };
            match answer {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(object)) => Err(RemoteError::new(object.message().to_owned(), object, false)),
                Err(error) => {
                    let closed = self.session.ended.is_cancelled();
                    let object =
                        ErrorObject::internal_error(format_args!("the client did not answer: {error}"));
                    Err(RemoteError::new(error, object, closed))
                }
            }
        })
    }

    fn notify_raw<'a>(&'a self, method: &'a str, params: Option<&'a RawJson<'a>>) -> RemoteFuture<'a, ()> {
        Box::pin(async move {
            let mut frame = BytesMut::with_capacity(64 + params.map_or(0, |p| p.get().len()));
            encode::write_call_raw(&mut frame, None, method, params).map_err(|error| {
                RemoteError::new(
                    error,
                    ErrorObject::invalid_params("params must be an array or an object"),
                    false,
                )
            })?;
            self.output.stream().push(&frame);
            Ok(())
        })
    }

    fn detach(&self) -> bool {
        self.output.stream().detach();
        true
    }

    fn is_open(&self) -> bool {
        !self.session.ended.is_cancelled()
    }

    fn closed(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(self.session.ended.cancelled())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::McpServer;

    #[tokio::test]
    async fn a_remote_sends_on_its_stream_until_the_session_ends() {
        let registry = McpServer::new("t", "1").into_shared();
        let session = Arc::new(HttpSession::new(&registry, Duration::from_millis(50)));
        let output = Arc::new(PostOutput::new(session.streams.clone(), None));
        let remote = StreamRemote {
            session: session.clone(),
            output: output.clone(),
        };
        assert!(remote.is_open());
        remote
            .notify_raw("n", Some(&RawJson::new("{}").unwrap()))
            .await
            .unwrap();
        let mut events = output.streaming().await;
        assert!(events
            .try_recv()
            .unwrap()
            .ends_with(b"data: {\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{}}\n\n"));
        assert!(
            remote
                .notify_raw("n", Some(&RawJson::new("1").unwrap()))
                .await
                .is_err(),
            "scalar params"
        );
        assert!(
            remote
                .call_raw("m", Some(&RawJson::new("1").unwrap()))
                .await
                .is_err(),
            "scalar params"
        );
        let unanswered = remote.call_raw("m", None).await.unwrap_err();
        assert!(!unanswered.is_closed(), "no answer in time: {unanswered}");
        assert!(remote.detach());
        session.end();
        assert!(!remote.is_open());
        remote.closed().await;
        let ended = remote.call_raw("m", None).await.unwrap_err();
        assert!(ended.is_closed(), "{ended}");
    }
}
