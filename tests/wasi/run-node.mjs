// The reference for wasmwarp's WASI: node's own (node:wasi), running the
// same module with the same arguments, environment and preopens.
// usage: node run-node.mjs [--dir HOST::GUEST]... [--env NAME=VALUE]... MODULE.wasm [ARGS...]
// Exits with the program's exit code.
import fs from "node:fs";
import { WASI } from "node:wasi";

const argv = process.argv.slice(2);
const preopens = {};
const env = {};
while (argv.length && argv[0].startsWith("--")) {
  const opt = argv.shift(), value = argv.shift();
  if (opt === "--dir") {
    const [host, guest] = value.split("::");
    preopens[guest ?? host] = host;
  } else if (opt === "--env") {
    const eq = value.indexOf("=");
    env[value.slice(0, eq)] = value.slice(eq + 1);
  } else {
    throw new Error(`unknown option ${opt}`);
  }
}
const [path, ...args] = argv;
const wasi = new WASI({ version: "preview1", args: [path, ...args], env, preopens, returnOnExit: true });
const module = await WebAssembly.compile(fs.readFileSync(path));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
