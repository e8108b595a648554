// viem's HTTP transport, as an application uses it, against URL: `node viem_client.cjs URL
// block|batch`. Prints one JSON line: {"ok":true,"value":…} or {"ok":false,"status":…,"code":…,
// "text":…} (the error's whole text, everything an application could log). Its retries are
// viem's own (on 429 it waits the Retry-After seconds).
const { createPublicClient, http } = require("viem");
const { mainnet } = require("viem/chains");

async function main() {
  const [url, scenario] = process.argv.slice(2);
  // `batch`: viem's batch transport, 1,000 calls in one JSON-RPC batch.
  const batch = scenario === "batch" ? { batchSize: 1000, wait: 0 } : false;
  const client = createPublicClient({ chain: mainnet, transport: http(url, { retryCount: 3, timeout: 20000, batch }) });
  try {
    let value;
    if (scenario === "block") value = (await client.getBlockNumber({ cacheTime: 0 })).toString();
    else if (scenario === "batch") value = summary(await Promise.all(addresses().map((address) => client.getBalance({ address }))));
    else throw new Error(`unknown scenario ${scenario}`);
    console.log(JSON.stringify({ ok: true, value }));
  } catch (error) {
    const http = findStatus(error);
    console.log(JSON.stringify({ ok: false, status: http, code: error.code ?? null, text: `${error.stack}\n${JSON.stringify(error, replacer)}` }));
  }
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
