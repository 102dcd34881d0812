// Build the search index of a built site once, with mkdocs-material's own (patched) search worker, and write it
// for the offline copy: its core to search/search_prebuilt.js, its shards to search/prebuilt/.
// Run by prebuilt_index.py: node prebuild_search.js SITE_DIR
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

// The index as few, long strings, which a browser reads many times faster than the objects and numbers of lunr's
// own serialization (half a million postings), split into a core and shards (search_worker.js, __hbIndex): each
// term's postings carry the term's weight in each section's field vector, so the vectors are not stored apart
// (they held the same pairs again). Document refs (locations such as "torch/nn/functional/conv2d.html#examples")
// are written as their number in `refs`, and the token positions are left out: the handbook's search method finds
// them again for the sections it highlights.
function compact(index) {
  const number = new Map();
  const refs = [];
  const short = (ref) => {
    if (!number.has(ref)) number.set(ref, String(refs.push(ref) - 1)); // decimal: integer keys keep posting order
    return number.get(ref);
  };
  const weight = new Map(); // "field/ref number" -> term index -> weight
  for (const [fieldRef, elements] of index.fieldVectors) {
    const cut = fieldRef.indexOf("/");
    const pairs = new Map();
    for (let i = 0; i < elements.length; i += 2) pairs.set(elements[i], elements[i + 1]);
    weight.set(`${fieldRef.slice(0, cut)}/${short(fieldRef.slice(cut + 1))}`, pairs);
  }
  const shards = {};
  for (const [term, posting] of index.invertedIndex) {
    const lists = index.fields.map((field) =>
      Object.keys(posting[field] || {})
        .map((ref) => {
          const w = weight.get(`${field}/${short(ref)}`).get(posting._index);
          if (w === undefined) throw new Error(`no weight for ${term} in ${field}/${ref}`);
          return `${short(ref)},${w}`;
        })
        .join(","),
    );
    const key = self.__hbShardKey(term);
    (shards[key] ??= {})[term] = [posting._index, lists];
  }
  return { core: { fields: index.fields, searchPipeline: index.pipeline, refs }, shards };
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
const write = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return Buffer.byteLength(text);
};
(async () => {
  await handler({ data: { type: 0, data } });
  if (!self.__search) throw new Error("the worker did not expose its index: is the worker patched?");
  if (!self.__hbShardKey) throw new Error("the worker has no __hbShardKey: is the worker patched?");
  const { core, shards } = compact(self.__search.index.toJSON());
  if (core.refs.join("\n") !== data.docs.map((doc) => doc.location).join("\n"))
    throw new Error("the index's documents are not search_index.json's, in its order");
  core.tokenSet = tokenSetNodes(self.__search.index.tokenSet);
  core.pipeline = self.__hbPipeline.toJSON(); // what the offline worker loads to find highlight positions
  core.titles = data.docs.map((doc) => doc.title);
  // The sections whole, in shards of about DOC_SHARD_BYTES, an article's sections in one. On the page's thread
  // (iframe-worker's worker, Chromium 156.0.8078.114) a query loads the shards of the ten groups it shows first
  // before their text: 64 KiB shards make that about ten small scripts (50-60 ms), where 1 MiB ones made it all
  // four (the whole 4.3 MB). Not one per article: a real worker's importScripts of a file:// script costs about
  // 4 ms however small the file, and a broad query highlights up to 30 articles (120 ms per-article shards).
  const DOC_SHARD_BYTES = 2 ** 16;
  const docShards = [{}];
  let size = 0;
  let page = null;
  core.docShards = data.docs.map(({ parent, ...doc }, i) => { // the worker set parent
    const article = doc.location.split("#")[0];
    if (article !== page && size >= DOC_SHARD_BYTES) {
      docShards.push({});
      size = 0;
    }
    page = article;
    docShards[docShards.length - 1][i] = doc;
    size += JSON.stringify(doc).length;
    return docShards.length - 1;
  });
  core.shards = { terms: Object.keys(shards).sort(), docs: docShards.map((_, key) => key) };
  const dir = path.join(site, "search", "prebuilt");
  fs.rmSync(dir, { recursive: true, force: true });
  // Mostly long strings: as plain object literals they load faster than strings given to JSON.parse (measured in
  // Chromium and Node).
  let bytes = 0;
  for (const key of core.shards.terms)
    bytes += write(path.join(dir, "terms", `${key}.js`), `__hbShard("terms",${JSON.stringify(key)},${JSON.stringify(shards[key])});\n`);
  docShards.forEach((shard, key) => (bytes += write(path.join(dir, "docs", `${key}.js`), `__hbShard("docs",${key},${JSON.stringify(shard)});\n`)));
  const out = path.join(site, "search", "search_prebuilt.js");
  const coreBytes = write(out, `var __prebuilt = ${JSON.stringify(core)};\n`);
  const inline = path.join(site, "search", "search_index.js");
  if (fs.existsSync(inline)) {  // the offline plugin's `var __index = {...}`: each page needs only the configuration
    const { docs: _, ...rest } = data;
    fs.writeFileSync(inline, `var __index = ${JSON.stringify({ ...rest, docs: [] })};\n`);
  }
  const mib = (n) => (n / 2 ** 20).toFixed(2);
  const count = core.shards.terms.length + core.shards.docs.length;
  console.log(`${out}: ${mib(coreBytes)} MiB; ${count} shards in ${dir}: ${mib(bytes)} MiB`);
})().catch((err) => { console.error(err); process.exit(1); });
