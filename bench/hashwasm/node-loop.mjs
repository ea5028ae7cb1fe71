// node's baseline for bench/hashwasm/run-cpu.sh: one instance of a hash-wasm
// module in a loop over the messages, as a JavaScript user would run it.
// usage: node node-loop.mjs MODULE.wasm MESSAGES.bin RECORD DIGEST_BYTES PARAM [INIT_PARAM] OUT.bin
// Prints "instances_per_second=R" (the loop alone, after instantiation).
import fs from "node:fs";

const [wasmPath, msgPath, recordText, digestText, paramText, ...rest] = process.argv.slice(2);
const outPath = rest.pop();
const initParam = rest.length ? Number(rest[0]) : undefined;
const record = Number(recordText), digest = Number(digestText), param = Number(paramText);
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), {});
const ex = instance.exports;
if (initParam !== undefined) ex.Hash_Init(initParam);
const messages = fs.readFileSync(msgPath);
const n = Math.floor(messages.length / record);
const out = Buffer.alloc(n * digest);
const t0 = process.hrtime.bigint();
const mem = new Uint8Array(ex.memory.buffer);
const buf = ex.Hash_GetBuffer();
for (let i = 0; i < n; ++i) {
  mem.set(messages.subarray(i * record, (i + 1) * record), buf);
  ex.Hash_Calculate(record, param);
  out.set(mem.subarray(buf, buf + digest), i * digest);
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
fs.writeFileSync(outPath, out);
console.log(`instances_per_second=${(n / secs).toFixed(0)}`);
