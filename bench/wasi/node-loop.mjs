// node's baseline for bench/wasi/run-cpu.sh: one process, the module
// compiled once, then N instances one at a time, each with its own WASI
// (argv [module, ARGS...] with @index standing for i, or [module, i]
// without ARGS) and a fresh instance, as a JavaScript user would.
// usage: node node-loop.mjs MODULE.wasm N [--dir GUEST::HOST]... [ARGS...]
//        (stdout: the programs'; stderr: the rate)
import fs from "node:fs";
import { WASI } from "node:wasi";

const [path, nText, ...rest] = process.argv.slice(2);
const n = Number(nText);
const preopens = {};
while (rest[0] === "--dir") {
  const [guest, host] = rest[1].split("::");
  preopens[guest] = host;
  rest.splice(0, 2);
}
const module = await WebAssembly.compile(fs.readFileSync(path));
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; ++i) {
  const args = rest.length ? rest.map((a) => a.replaceAll("@index", String(i))) : [String(i)];
  const wasi = new WASI({ version: "preview1", args: [path, ...args], env: {}, preopens, returnOnExit: true });
  const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
  if (wasi.start(instance) !== 0) throw new Error(`instance ${i} failed`);
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
process.stderr.write(`instances_per_second=${(n / secs).toFixed(0)}\n`);
