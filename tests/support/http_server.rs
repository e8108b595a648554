//! An `HttpServer` on 127.0.0.1 for the HTTP and WebSocket tests, serving the
//! specification's example methods, stopped when the handle is dropped.

#[path = "../../examples/common/spec_methods.rs"]
mod spec_methods;

use std::net::SocketAddr;

use rpcwire::dispatch::Router;
use rpcwire::transport::http::HttpServer;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// A router with the specification's example methods (subtract, sum, get_data, echo, update).
pub fn spec_router() -> Router {
    let mut router = Router::new();
    spec_methods::register(&mut router);
    router
}

/// A running server; dropping it stops the server.
pub struct Running {
    /// Where it listens.
    pub address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Serves `server` on a fresh port of 127.0.0.1 on a task of the current runtime.
pub async fn start(server: HttpServer) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.serve_until(listener, async move {
        let _ = stopped.await;
    }));
    Running {
        address,
        stop: Some(stop),
    }
}
