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

// Document refs (locations such as "torch/nn/functional/conv2d.html#examples") repeat in every posting list;
// written as their number in `refs`, they shrink the file by half. The patched worker maps numbers back.
function compact(index) {
  const refs = [];
  const number = new Map();
  const short = (ref) => {
    if (!number.has(ref)) number.set(ref, String(refs.push(ref) - 1));
    return number.get(ref);
  };
  index.fieldVectors = index.fieldVectors.map(([fieldRef, vector]) => {
    const cut = fieldRef.indexOf("/");
    return [`${fieldRef.slice(0, cut)}/${short(fieldRef.slice(cut + 1))}`, vector];
  });
  for (const [, posting] of index.invertedIndex) {
    for (const field of Object.keys(posting)) {
      if (field === "_index") continue;
      posting[field] = Object.fromEntries(Object.entries(posting[field]).map(([ref, meta]) => [short(ref), meta]));
    }
  }
  return { index, refs };
}

const data = JSON.parse(fs.readFileSync(path.join(site, "search", "search_index.json"), "utf-8"));
(async () => {
  await handler({ data: { type: 0, data } });
  if (!self.__search) throw new Error("the worker did not expose its index: is the worker patched?");
  const prebuilt = compact(self.__search.index.toJSON());
  prebuilt.table = [...self.__search.table];
  const out = path.join(site, "search", "search_prebuilt.js");
  // A JSON string given to JSON.parse loads much faster than the same data as a JavaScript object literal.
  fs.writeFileSync(out, `var __prebuilt = JSON.parse(${JSON.stringify(JSON.stringify(prebuilt))});\n`);
  const inline = path.join(site, "search", "search_index.js");
  if (fs.existsSync(inline)) {  // the offline plugin's `var __index = {...}`, the same way
    fs.writeFileSync(inline, `var __index = JSON.parse(${JSON.stringify(JSON.stringify(data))});\n`);
  }
  console.log(`${out}: ${(fs.statSync(out).size / 2 ** 20).toFixed(1)} MiB`);
})().catch((err) => { console.error(err); process.exit(1); });
