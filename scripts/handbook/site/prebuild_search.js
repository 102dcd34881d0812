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

// The index as few, long strings, which JSON.parse reads many times faster than the objects and numbers of
// lunr's own serialization (half a million postings); the worker decodes a term's postings or a section's
// vector only when a query reaches it (search_worker.js, __hbIndex). Document refs (locations such as
// "torch/nn/functional/conv2d.html#examples") are written as their number in `refs`, and the token positions
// are left out: the handbook's search method finds them again for the sections it highlights.
function compact(index) {
  const refs = [];
  const number = new Map();
  const short = (ref) => {
    if (!number.has(ref)) number.set(ref, String(refs.push(ref) - 1)); // decimal: integer keys keep posting order
    return number.get(ref);
  };
  const vectors = {};
  for (const [fieldRef, vector] of index.fieldVectors) {
    const cut = fieldRef.indexOf("/");
    vectors[`${fieldRef.slice(0, cut)}/${short(fieldRef.slice(cut + 1))}`] = vector.join(",");
  }
  const terms = index.invertedIndex.map(([term, posting]) => [
    term,
    posting._index,
    index.fields.map((field) => Object.keys(posting[field] || {}).map(short).join(",")),
  ]);
  return { fields: index.fields, searchPipeline: index.pipeline, terms, vectors, refs };
}

// The index's token set (the minimized automaton of its terms, which takes most of the index's load to build) as
// its nodes: [final, the edges' characters, the numbers of the nodes they lead to], node 0 the root; a node that
// several edges reach is written once.
function tokenSetNodes(root) {
  const number = new Map([[root, 0]]);
  const nodes = [root];
  for (let i = 0; i < nodes.length; i++)
    for (const child of Object.values(nodes[i].edges))
      if (!number.has(child)) number.set(child, nodes.push(child) - 1);
  return nodes.map((node) => {
    const chars = Object.keys(node.edges);
    return [node.final ? 1 : 0, chars.join(""), chars.map((char) => number.get(node.edges[char]))];
  });
}

const data = JSON.parse(fs.readFileSync(path.join(site, "search", "search_index.json"), "utf-8"));
(async () => {
  await handler({ data: { type: 0, data } });
  if (!self.__search) throw new Error("the worker did not expose its index: is the worker patched?");
  const prebuilt = compact(self.__search.index.toJSON());
  prebuilt.tokenSet = tokenSetNodes(self.__search.index.tokenSet);
  if (prebuilt.vectors["title/0"] === undefined) throw new Error("the first document has no title vector: is the worker patched?");
  prebuilt.pipeline = self.__hbPipeline.toJSON(); // what the offline worker loads to find highlight positions
  prebuilt.docs = data.docs.map(({ parent, ...doc }) => doc); // the worker set parent on each section
  const out = path.join(site, "search", "search_prebuilt.js");
  // Mostly long strings now: as a plain object literal it loads faster than as a string given to JSON.parse
  // (measured in Node: 105 vs 153 ms cold, 15 vs 40 ms warm).
  fs.writeFileSync(out, `var __prebuilt = ${JSON.stringify(prebuilt)};\n`);
  const inline = path.join(site, "search", "search_index.js");
  if (fs.existsSync(inline)) {  // the offline plugin's `var __index = {...}`: each page needs only the configuration
    const { docs, ...rest } = data;
    fs.writeFileSync(inline, `var __index = ${JSON.stringify({ ...rest, docs: [] })};\n`);
  }
  console.log(`${out}: ${(fs.statSync(out).size / 2 ** 20).toFixed(1)} MiB`);
})().catch((err) => { console.error(err); process.exit(1); });
