// Build the search index of a built site once, with mkdocs-material's own (patched) search worker, and write it
// to search/search_prebuilt.js for the offline copy. Run by prebuilt_index.py: node prebuild_search.js SITE_DIR
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const site = process.argv[2];
const workers = path.join(site, "assets", "javascripts", "workers");
const worker = fs.readdirSync(workers).filter((f) => /^search\..*\.min\.js$/.test(f));
if (worker.length !== 1) throw new Error(`expected one search worker in ${workers}, found ${worker.length}`);

let handler = null;
globalThis.self = globalThis;
globalThis.addEventListener = (type, fn) => { if (type === "message") handler = fn; };
globalThis.postMessage = () => {};
// The worker loads its language scripts with importScripts(), relative to its own folder.
globalThis.importScripts = (...urls) => {
  for (const url of urls) vm.runInThisContext(fs.readFileSync(path.resolve(workers, url), "utf-8"), { filename: url });
};
vm.runInThisContext(fs.readFileSync(path.join(workers, worker[0]), "utf-8"), { filename: worker[0] });

const data = JSON.parse(fs.readFileSync(path.join(site, "search", "search_index.json"), "utf-8"));
(async () => {
  await handler({ data: { type: 0, data } });
  if (!self.__search) throw new Error("the worker did not expose its index: is the worker patched?");
  const prebuilt = { index: self.__search.index.toJSON(), table: [...self.__search.table] };
  const out = path.join(site, "search", "search_prebuilt.js");
  fs.writeFileSync(out, `var __prebuilt = ${JSON.stringify(prebuilt)};\n`);
  console.log(`${out}: ${(fs.statSync(out).size / 2 ** 20).toFixed(1)} MiB`);
})().catch((err) => { console.error(err); process.exit(1); });
