//! Serving the `metrics` facade's figures as Prometheus text (shared by the gateway
//! examples through `#[path]`).

/// Installs a Prometheus recorder for the `metrics` facade and serves its text at
/// `GET /metrics` on `address`, on a task of its own.
pub async fn serve_metrics(address: &str) -> std::io::Result<()> {
    use http_body_util::Full;
    use hyper::service::service_fn;

    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(address).await?;
    println!("metrics on {}", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handle = handle.clone();
            let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let response = if request.uri().path() == "/metrics" {
                    hyper::Response::builder()
                        .header("content-type", "text/plain; version=0.0.4")
                        .body(Full::new(bytes::Bytes::from(handle.render())))
                } else {
                    hyper::Response::builder().status(404).body(Full::default())
                };
                async move { response }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
            );
        }
    });
    Ok(())
}
