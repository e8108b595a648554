// A language client's side of the interop tests: vscode-jsonrpc (the library VS Code's
// language clients are built on) starts the server as an editor does — a child process
// spoken to over its stdin and stdout with Content-Length framing — and prints what it saw
// as one JSON line on stdout.
//
//   node lsp_client.js cancel SERVER [ARGS...]  a `sleep` of 10 s cancelled after 100 ms
//                                              with a CancellationToken, then one more call
//   node lsp_client.js flood N SERVER [ARGS...] N `sleep` requests of 20 ms at once
//
// Bounded in time: it gives up after 60 s with exit code 2.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  CancellationTokenSource,
} = require('vscode-jsonrpc/node');

setTimeout(() => {
  process.stderr.write('lsp_client: gave up after 60 s\n');
  process.exit(2);
}, 60000).unref();

function start(server, args) {
  const child = spawn(server, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const errors = [];
  const logger = {
    error: (message) => errors.push(String(message)),
    warn: (message) => errors.push(String(message)),
    info: () => {},
    log: () => {},
  };
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
    logger,
  );
  connection.onError(([error]) => errors.push(`connection error: ${error}`));
  connection.listen();
  return { child, connection, errors };
}

// The server's peak resident memory in KiB (Linux), read while it still runs.
function peakRss(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const line = status.split('\n').find((l) => l.startsWith('VmHWM:'));
    return line ? parseInt(line.split(/\s+/)[1], 10) : null;
  } catch (error) {
    return null;
  }
}

async function stop({ child, connection }) {
  connection.dispose();
  child.stdin.end();
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { code: error.code, message: error.message };
  }
}

async function cancel(server, args) {
  const peer = start(server, args);
  const source = new CancellationTokenSource();
  const started = Date.now();
  // vscode-jsonrpc sends one argument that is not an object as params [argument].
  const pending = outcome(peer.connection.sendRequest('sleep', 10000, source.token));
  setTimeout(() => source.cancel(), 100);
  const cancelled = await pending;
  const elapsedMs = Date.now() - started;
  const after = await outcome(peer.connection.sendRequest('sleep', 1));
  const exitCode = await stop(peer);
  return { cancelled, elapsed_ms: elapsedMs, after, errors: peer.errors, exit_code: exitCode };
}

async function flood(count, server, args) {
  const peer = start(server, args);
  const started = Date.now();
  const requests = [];
  for (let i = 0; i < count; i++) {
    requests.push(outcome(peer.connection.sendRequest('sleep', 20)));
  }
  const outcomes = await Promise.all(requests);
  const seconds = (Date.now() - started) / 1000;
  const byKind = {};
  for (const o of outcomes) {
    const kind = 'result' in o ? `result ${o.result}` : `error ${o.code}`;
    byKind[kind] = (byKind[kind] || 0) + 1;
  }
  const peakKib = peakRss(peer.child.pid);
  const exitCode = await stop(peer);
  return {
    requests: count,
    settled: outcomes.length,
    by_kind: byKind,
    seconds,
    server_peak_rss_kib: peakKib,
    errors: peer.errors,
    exit_code: exitCode,
  };
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  let report;
  if (mode === 'cancel') {
    report = await cancel(rest[0], rest.slice(1));
  } else if (mode === 'flood') {
    report = await flood(parseInt(rest[0], 10), rest[1], rest.slice(2));
  } else {
    process.stderr.write('usage: lsp_client.js cancel SERVER [ARGS...] | flood N SERVER [ARGS...]\n');
    process.exit(64);
  }
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`lsp_client: ${error.stack || error}\n`);
  process.exit(1);
});
