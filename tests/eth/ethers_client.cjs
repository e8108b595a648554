// ethers.js's JsonRpcProvider, as an application uses it, against URL: `node
// ethers_client.cjs URL block|batch`. Prints one JSON line: {"ok":true,"value":…} or
// {"ok":false,"status":…,"code":…,"text":…} (the error's whole text). Its retries are
// ethers' own (on 429 it throttles, up to 12 attempts).
const { JsonRpcProvider, Network } = require("ethers");

async function main() {
  const [url, scenario] = process.argv.slice(2);
  // `batch`: ethers' own batching, 1,000 calls in one JSON-RPC batch; otherwise one at a time.
  const batchMaxCount = scenario === "batch" ? 1000 : 1;
  const provider = new JsonRpcProvider(url, Network.from(1), { staticNetwork: true, batchMaxCount, batchMaxSize: 1 << 24 });
  try {
    let value;
    if (scenario === "block") value = String(await provider.getBlockNumber());
    else if (scenario === "batch") value = summary(await Promise.all(addresses().map((address) => provider.getBalance(address))));
    else throw new Error(`unknown scenario ${scenario}`);
    console.log(JSON.stringify({ ok: true, value }));
  } catch (error) {
    console.log(JSON.stringify({ ok: false, status: statusOf(error), code: error.code ?? null, text: `${error.stack}\n${JSON.stringify(error, replacer)}` }));
  } finally {
    provider.destroy();
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

// The HTTP status the server answered: ethers escalates a 429 it gave up retrying to
// "599 CLIENT ESCALATED SERVER ERROR (429 Too Many Requests; …)".
function statusOf(error) {
  const status = String(error?.info?.responseStatus ?? "");
  const escalated = /\((\d{3}) /.exec(status);
  const number = parseInt(escalated ? escalated[1] : status, 10);
  return Number.isNaN(number) ? null : number;
}

function replacer(_key, value) {
  return typeof value === "bigint" ? value.toString() : value;
}

main();
