"""web3.py's HTTPProvider, as an application uses it, against URL:
`python web3_client.py URL block|batch`. Prints one JSON line: {"ok": true, "value": ...} or
{"ok": false, "status": ..., "code": ..., "text": ...} (the error's whole text). Its retries
are web3.py's own (5 attempts, backoff from 0.125 s doubling)."""

import json
import sys
import traceback

from web3 import HTTPProvider, Web3


def main() -> None:
    url, scenario = sys.argv[1], sys.argv[2]
    w3 = Web3(HTTPProvider(url, request_kwargs={"timeout": 20}))
    try:
        if scenario == "block":
            value = str(w3.eth.block_number)
        elif scenario == "batch":
            # web3.py's batch requests: 1,000 calls in one JSON-RPC batch.
            with w3.batch_requests() as batch:
                for account in range(1, 1001):
                    batch.add(w3.eth.get_balance(Web3.to_checksum_address(f"0x{account:040x}")))
                balances = batch.execute()
            value = f"{len(balances)} × " + ",".join(sorted({str(b) for b in balances}))
        else:
            raise ValueError(f"unknown scenario {scenario}")
        print(json.dumps({"ok": True, "value": value}))
    except Exception as error:  # noqa: BLE001 - the report says what it was
        response = getattr(error, "response", None)
        status = getattr(response, "status_code", None)
        text = "".join(traceback.format_exception(error))
        print(json.dumps({"ok": False, "status": status, "code": None, "text": text}))


main()
