//! The MCP servers of the MCP section, each a child process with the same `add` tool: this
//! bench binary started again with `--mcp-server KIND` (rpcwire's `McpServer` and rmcp's, on
//! one tokio thread), or the official TypeScript SDK's server under Node
//! (`tests/mcp/ts_add_server.cjs`). Over stdio the child serves on its stdin and stdout; over
//! Streamable HTTP it prints `listening on ADDR` and exits when its stdin closes.

use std::io::Write as _;

use rpcwire::mcp::{CallToolResult, McpContext, McpServer};

/// The server kinds run by this binary, as passed after `--mcp-server`.
pub(crate) const RPCWIRE_STDIO: &str = "rpcwire-stdio";
pub(crate) const RPCWIRE_HTTP: &str = "rpcwire-http";
pub(crate) const RMCP_STDIO: &str = "rmcp-stdio";
pub(crate) const RMCP_HTTP: &str = "rmcp-http";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

fn rpcwire_server() -> McpServer {
    McpServer::new("rpcwire-add", "1").tool(
        "add",
        "Adds two integers",
        |args: Add, _: McpContext| async move {
            Ok(CallToolResult::text(args.a.wrapping_add(args.b).to_string()))
        },
    )
}

/// rmcp's side: the same tool with rmcp's macros, as its README shows.
mod rmcp_add {
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::{schemars, tool, tool_router};

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    pub(crate) struct AddRequest {
        pub(crate) a: i64,
        pub(crate) b: i64,
    }

    #[derive(Debug, Clone)]
    pub(crate) struct Adder;

    #[tool_router(server_handler)]
    impl Adder {
        #[tool(description = "Adds two integers")]
        fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
            a.wrapping_add(b).to_string()
        }
    }
}

/// Runs the server `kind` until its stdin closes.
pub(crate) fn serve(kind: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        match kind {
            RPCWIRE_STDIO => {
                rpcwire_server().serve_stdio().await;
            }
            RMCP_STDIO => {
                use rmcp::ServiceExt;
                let running = rmcp_add::Adder
                    .serve(rmcp::transport::stdio())
                    .await
                    .expect("rmcp serves");
                let _ = running.waiting().await;
            }
            RPCWIRE_HTTP | RMCP_HTTP => {
                exit_when_stdin_closes();
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                println!("listening on {}", listener.local_addr().expect("address"));
                let _ = std::io::stdout().flush();
                if kind == RPCWIRE_HTTP {
                    let _ = rpcwire::mcp::http::StreamableHttpService::new(rpcwire_server())
                        .serve(listener)
                        .await;
                } else {
                    rmcp_http(listener).await;
                }
            }
            other => panic!("unknown MCP server {other:?}"),
        }
    });
}

async fn rmcp_http(listener: tokio::net::TcpListener) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::StreamableHttpService;
    let service = hyper_util::service::TowerToHyperService::new(StreamableHttpService::new(
        || Ok(rmcp_add::Adder),
        LocalSessionManager::default().into(),
        Default::default(),
    ));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Exits the process once its stdin closes (the parent closes it to stop us, or dies).
fn exit_when_stdin_closes() {
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        std::process::exit(0);
    });
}
