// Runs an export of a .wasm module under node (V8) and prints its result and
// the time of the call alone (compile and instantiate excluded, reported
// apart), so it compares with wasmwarp's and wasm-interp's run times.
// usage: node bench/run-node.mjs MODULE.wasm [EXPORT]
import { readFileSync } from 'node:fs';

const [file, name = 'run'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node run-node.mjs MODULE.wasm [EXPORT]');
  process.exit(2);
}
const t0 = process.hrtime.bigint();
const { instance } = await WebAssembly.instantiate(readFileSync(file), {});
const t1 = process.hrtime.bigint();
const fn = instance.exports[name];
if (typeof fn !== 'function') {
  console.error(`no exported function ${name}`);
  process.exit(1);
}
const result = fn();
const t2 = process.hrtime.bigint();
console.log(String(result));
console.error(`instantiate_ms=${Number(t1 - t0) / 1e6} run_ms=${Number(t2 - t1) / 1e6}`);
