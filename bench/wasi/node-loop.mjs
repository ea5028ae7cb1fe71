// node's baseline for the bench/ WASI rows: one process, the module
// compiled once, then N instances one at a time, each with its own WASI
// (argv [module, ARGS...] with @index standing for i, or [module, i]
// without ARGS) and a fresh instance, as a JavaScript user would.
// usage: node node-loop.mjs MODULE.wasm N [--dir GUEST::HOST]... [--stdin FILE] [--out DIR] [ARGS...]
//   --stdin: every instance reads FILE as its stdin (@index in the name
//   stands for i); --out: instance i's stdout goes to DIR/i (else to this
//   process's stdout, in instance order). stderr: the rate.
import fs from "node:fs";
import { WASI } from "node:wasi";

const [path, nText, ...rest] = process.argv.slice(2);
const n = Number(nText);
const preopens = {};
let stdinPattern = null, outDir = null;
for (;;) {
  if (rest[0] === "--dir") {
    const [guest, host] = rest[1].split("::");
    preopens[guest] = host;
  } else if (rest[0] === "--stdin") {
    stdinPattern = rest[1];
  } else if (rest[0] === "--out") {
    outDir = rest[1];
  } else {
    break;
  }
  rest.splice(0, 2);
}
const module = await WebAssembly.compile(fs.readFileSync(path));
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; ++i) {
  const args = rest.length ? rest.map((a) => a.replaceAll("@index", String(i))) : [String(i)];
  const fds = {};
  if (stdinPattern !== null) fds.stdin = fs.openSync(stdinPattern.replaceAll("@index", String(i)), "r");
  if (outDir !== null) fds.stdout = fs.openSync(`${outDir}/${i}`, "w");
  const wasi = new WASI({ version: "preview1", args: [path, ...args], env: {}, preopens, returnOnExit: true, ...fds });
  const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
  const rc = wasi.start(instance);
  for (const fd of Object.values(fds)) fs.closeSync(fd);
  if (rc !== 0) throw new Error(`instance ${i} exited with ${rc}`);
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
process.stderr.write(`instances_per_second=${(n / secs).toFixed(0)}\n`);
process.exit(0);
