// viem's HTTP transport, as an application uses it, against URL: `node viem_client.cjs URL
// block|batch|chain`. Prints one JSON line: {"ok":true,"value":…} or {"ok":false,"status":…,"code":…,
// "text":…} (the error's whole text, everything an application could log). Its retries are
// viem's own (on 429 it waits the Retry-After seconds).
const { createPublicClient, http, webSocket } = require("viem");
const { mainnet } = require("viem/chains");

async function main() {
  const [url, scenario] = process.argv.slice(2);
  // `heads`: viem's webSocket() transport watching block numbers (eth_subscribe newHeads)
  // until it has seen three, then unsubscribing.
  // `blocks`: the same with watchBlocks (each head formatted as a block).
  if (scenario === "heads" || scenario === "blocks") return heads(url, scenario);
  // `batch`: viem's batch transport, 1,000 calls in one JSON-RPC batch.
  const batch = scenario === "batch" ? { batchSize: 1000, wait: 0 } : false;
  const client = createPublicClient({ chain: mainnet, transport: http(url, { retryCount: 3, timeout: 20000, batch }) });
  try {
    let value;
    if (scenario === "block") value = (await client.getBlockNumber({ cacheTime: 0 })).toString();
    else if (scenario === "chain") value = await chain(client);
    else if (scenario === "batch") value = summary(await Promise.all(addresses().map((address) => client.getBalance({ address }))));
    else throw new Error(`unknown scenario ${scenario}`);
    console.log(JSON.stringify({ ok: true, value }));
  } catch (error) {
    const http = findStatus(error);
    console.log(JSON.stringify({ ok: false, status: http, code: error.code ?? null, text: `${error.stack}\n${JSON.stringify(error, replacer)}` }));
  }
}

// `chain`: the logs of 2,500 blocks below the head (wider than the node's 1,000-block
// limit), and one block below the finalized one read twice.
async function chain(client) {
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const logs = await client.getLogs({ fromBlock: head - 2499n, toBlock: head });
  const first = await client.getBlock({ blockNumber: head - 100n });
  const again = await client.getBlock({ blockNumber: head - 100n });
  return `${logs.length} logs from ${logs[0]?.blockNumber} to ${logs.at(-1)?.blockNumber}; block ${first.number} ${first.hash === again.hash ? "read the same twice" : "changed"}`;
}

async function heads(url, scenario) {
  const client = createPublicClient({ chain: mainnet, transport: webSocket(url, { retryCount: 0 }) });
  const seen = [];
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${seen.length} heads in 20 s`)), 20000);
      const watch = scenario === "blocks"
        ? (handlers) => client.watchBlocks({ emitOnBegin: false, onBlock: (block) => (block ? handlers.onBlockNumber(block.number) : handlers.onError(new Error("a head without its block"))), onError: handlers.onError })
        : (handlers) => client.watchBlockNumber({ emitOnBegin: false, ...handlers });
      const unwatch = watch({
        onBlockNumber: (number) => {
          seen.push(number.toString());
          if (seen.length === 3) {
            clearTimeout(timer);
            unwatch();
            resolve();
          }
        },
        onError: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
    console.log(JSON.stringify({ ok: true, value: seen.join(",") }));
  } catch (error) {
    console.log(JSON.stringify({ ok: false, status: null, code: error.code ?? null, text: String(error.stack) }));
  }
  // Let the unsubscription go out before the socket closes.
  await new Promise((resolve) => setTimeout(resolve, 300));
  process.exit(0);
}

// 1,000 distinct accounts.
function addresses() {
  return Array.from({ length: 1000 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
}

// How many balances there were, and the distinct ones.
function summary(balances) {
  return `${balances.length} × ${[...new Set(balances.map(String))].join(",")}`;
}

function findStatus(error) {
  for (let e = error; e; e = e.cause) if (typeof e.status === "number") return e.status;
  return null;
}

function replacer(_key, value) {
  return typeof value === "bigint" ? value.toString() : value;
}

main();
